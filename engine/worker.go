package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/contract"
	"stratbench/internal/units"
	"stratbench/python"
	"stratbench/sandbox"
	"stratbench/supervisor"
)

// worker is the host side of one Python worker process: it speaks the
// protocol, has the watchdog time every request against its deadline and
// turns whatever goes wrong into a *Failure. It implements Worker for the
// driver.
type worker struct {
	limits      Limits
	proc        *supervisor.Process
	toWorker    *os.File
	fromRead    *os.File
	reader      *python.Reader
	state       *python.StatePage
	cmdPipe     *commandPipe
	hooks       map[contract.Hook]bool
	manifest    contract.Manifest
	symbols     []string
	symbolIndex map[string]int32
	started     time.Time
	ready       bool // the handshake is over

	calls callLedger
	// The commands the worker sent during the request in flight: they
	// belong to the call it yields after, and are committed only then.
	commands     []contract.Command
	commandBytes int
	// Events [heldFrom, heldTo) are bars the worker received and has not
	// served yet (a batch it left early to yield).
	heldFrom, heldTo int
	stall            stallDetector

	dog        *watchdog
	dogStop    chan struct{}
	dogDone    chan struct{}
	stopping   atomic.Bool
	stats      map[contract.Hook]*hookStats
	discarded  int
	failure    *contract.Failure
	buf        []byte
	execs      []python.ExecRecord
	onYield    func(y contract.Yield) // progress and statistics publication
	lastStderr func() string
	sandboxed  bool
}

// spawn describes how to start a worker.
type spawn struct {
	spec       supervisor.Spec // Path, Args, Env, Dir, Limits, StateFile, Output; ExtraFiles are added here
	limits     Limits
	host       *supervisor.Host
	onYield    func(contract.Yield)
	onProgress func(bars int)
	lastStderr func() string
	sandboxed  bool
}

func startWorker(ctx context.Context, sp spawn) (*worker, error) {
	// Both pipes are plain blocking pipes: the watchdog goroutine enforces
	// every deadline, so a frame costs one system call and no trip through
	// the poller (a strategy that trades often makes one round trip per
	// order).
	toR, toW, err := blockingPipe("worker requests")
	if err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	fromR, fromW, err := blockingPipe("worker answers")
	if err != nil {
		toR.Close()
		toW.Close()
		return nil, fmt.Errorf("start worker: %w", err)
	}
	state, err := python.NewStatePage()
	if err != nil {
		toR.Close()
		toW.Close()
		fromR.Close()
		fromW.Close()
		return nil, err
	}
	// Batches are up to a few MiB: a larger pipe means fewer wake-ups. Best
	// effort: the kernel caps it at fs.pipe-max-size.
	unix.FcntlInt(toW.Fd(), unix.F_SETPIPE_SZ, 1<<20)
	cmdPipe, cmdW, err := newCommandPipe()
	if err != nil {
		toR.Close()
		toW.Close()
		fromR.Close()
		fromW.Close()
		state.Close()
		return nil, fmt.Errorf("start worker: %w", err)
	}
	sp.spec.ExtraFiles = python.ExtraFiles(toR, fromW, state.File(), cmdW)
	proc, err := sp.host.Start(ctx, sp.spec)
	toR.Close()
	fromW.Close()
	cmdW.Close()
	if err != nil {
		toW.Close()
		fromR.Close()
		state.Close()
		cmdPipe.close()
		return nil, fmt.Errorf("start worker: %w", err)
	}
	w := &worker{
		limits:     sp.limits,
		proc:       proc,
		toWorker:   toW,
		fromRead:   fromR,
		reader:     python.NewReader(fromR, sp.limits.MessageBytes),
		state:      state,
		cmdPipe:    cmdPipe,
		started:    time.Now(),
		calls:      callLedger{next: 1},
		stats:      map[contract.Hook]*hookStats{contract.HookOnData: {}, contract.HookOnExecution: {}, contract.HookOnFinish: {}},
		onYield:    sp.onYield,
		lastStderr: sp.lastStderr,
		sandboxed:  sp.sandboxed,
		dog:        &watchdog{state: state, onProgress: sp.onProgress},
		dogStop:    make(chan struct{}),
		dogDone:    make(chan struct{}),
	}
	go w.runWatchdog(ctx)
	return w, nil
}

func blockingPipe(name string) (r, w *os.File, err error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), name), os.NewFile(uintptr(fds[1]), name), nil
}

// handshake waits for the manifest. It returns the manifest message so that
// the job can check the params before init.
func (w *worker) handshake(ctx context.Context) (*python.ManifestMsg, error) {
	f, err := w.request(ctx, nil, w.startupRequest())
	if err != nil {
		return nil, err
	}
	switch f.Type {
	case python.TypeManifest:
		m, err := python.DecodeManifest(f.Payload)
		var pe *python.ParamError
		if errors.As(err, &pe) {
			// A default the strategy declared that stratbench cannot
			// hold: the strategy's mistake, named, not a broken protocol.
			f := newFailure(contract.KindException, contract.HookStartup, -1, 0, "ValueError: "+pe.Error())
			f.Traceback = f.Message + "\n"
			return nil, w.fail(f)
		}
		if err != nil {
			return nil, w.fail(w.protocolFailure(err))
		}
		w.hooks = map[contract.Hook]bool{}
		for _, h := range m.Hooks {
			w.hooks[h] = true
		}
		return m, nil
	case python.TypeError:
		return nil, w.exception(f.Payload)
	}
	return nil, w.fail(w.protocolFailure(fmt.Errorf("unexpected %q frame before the manifest", f.Type)))
}

// init sends the run's configuration and waits for the worker to be ready.
func (w *worker) init(ctx context.Context, m contract.Manifest, msg python.InitMsg) error {
	w.manifest = m
	w.symbols = msg.Symbols
	w.symbolIndex = make(map[string]int32, len(msg.Symbols))
	for i, s := range msg.Symbols {
		w.symbolIndex[s] = int32(i)
	}
	msg.BudgetMS = float64(batchBudget) / float64(time.Millisecond)
	frame, err := python.AppendJSON(w.buf[:0], python.TypeInit, msg)
	if err != nil {
		return err
	}
	f, err := w.request(ctx, frame, w.startupRequest())
	if err != nil {
		return err
	}
	if f.Type != python.TypeReady {
		return w.fail(w.protocolFailure(fmt.Errorf("unexpected %q frame, want ready", f.Type)))
	}
	w.ready = true
	return nil
}

// startupRequest is the deadline of the requests before the worker is
// ready: the startup limit from the worker's start.
func (w *worker) startupRequest() request {
	return request{kind: requestStartup, sent: time.Now(), deadline: w.started.Add(w.limits.Startup), limit: w.limits.Startup}
}

// Manifest implements Worker.
func (w *worker) Manifest() contract.Manifest { return w.manifest }

// requestStop asks the worker to return after the call in flight.
func (w *worker) requestStop() {
	w.stopping.Store(true)
	w.state.RequestStop()
}

// Run implements Worker.
func (w *worker) Run(ctx context.Context, b *contract.Batch) (contract.Yield, error) {
	if w.failure != nil {
		return contract.Yield{}, w.failure
	}
	if w.stopping.Load() {
		return contract.Yield{Stopped: true}, nil
	}
	execCalls := 0
	if w.hooks[contract.HookOnExecution] {
		execCalls = len(b.Executions)
	}
	calls := execCalls + b.Bars.Len()
	if calls == 0 && len(b.Executions) == 0 {
		return contract.Yield{}, nil
	}
	started := time.Now()
	w.calls.startBatch(b, execCalls, calls)
	// The worker still holds the bars of the previous batch it did not
	// serve: when this batch starts with them, they are not sent again.
	resumed := 0
	if b.FirstEvent == w.heldFrom && w.heldTo > w.heldFrom {
		resumed = min(b.Bars.Len(), w.heldTo-w.heldFrom)
	}
	fresh := b.Bars.Slice(resumed, b.Bars.Len())
	bars := python.Columns{Time: fresh.Time, Symbol: fresh.Symbol, Open: fresh.Open, High: fresh.High,
		Low: fresh.Low, Close: fresh.Close, Volume: fresh.Volume}
	w.execs = w.execs[:0]
	for i := range b.Executions {
		w.execs = append(w.execs, w.execRecord(&b.Executions[i]))
	}
	frame, err := python.AppendBatch(w.buf[:0], w.calls.first, resumed, w.execs, bars, len(w.symbols))
	if err != nil {
		return contract.Yield{}, err
	}
	w.buf = frame
	limit := w.limits.OnData
	if execCalls > 0 {
		limit = max(limit, w.limits.OnExecution)
	}
	f, err := w.request(ctx, frame, request{kind: requestBatch, sent: started, deadline: started.Add(limit + requestSlack),
		limit: limit, calls: w.calls})
	if err != nil {
		return contract.Yield{}, err
	}
	switch f.Type {
	case python.TypeYield:
		msg, err := python.DecodeYield(f.Payload)
		if err != nil {
			return contract.Yield{}, w.fail(w.protocolFailure(err))
		}
		y, err := w.accept(msg, b, calls, resumed > 0)
		if err != nil {
			return y, err
		}
		return y, w.checkStall(b, y, started)
	case python.TypeError:
		return contract.Yield{}, w.exception(f.Payload)
	}
	return contract.Yield{}, w.fail(w.protocolFailure(fmt.Errorf("unexpected %q frame during a batch", f.Type)))
}

// accept checks a yield against the batch it answers and records its calls.
func (w *worker) accept(msg *python.YieldMsg, b *contract.Batch, calls int, resumed bool) (contract.Yield, error) {
	first, last := w.calls.first, w.calls.last
	if msg.Through+1 < first || msg.Through > last {
		return contract.Yield{}, w.fail(w.protocolFailure(fmt.Errorf("yield through call %d, batch has calls %d to %d", msg.Through, first, last)))
	}
	done := int(msg.Through + 1 - first)
	if len(msg.Durations) != done {
		return contract.Yield{}, w.fail(w.protocolFailure(fmt.Errorf("yield has %d durations for %d calls", len(msg.Durations), done)))
	}
	if done == 0 && calls > 0 && !msg.Stopped {
		return contract.Yield{}, w.fail(w.protocolFailure(errors.New("yield without a completed call")))
	}
	if msg.Commands > len(w.commands) {
		// The commands of the call are in the command pipe (and none came
		// inline: those would have drained it).
		if err := w.cmdPipe.drain(w.limits.MessageBytes, w.takeCommand); err != nil {
			return contract.Yield{}, w.fail(w.protocolFailure(err))
		}
	}
	if msg.Commands != len(w.commands) {
		return contract.Yield{}, w.fail(w.protocolFailure(fmt.Errorf("yield counts %d commands, %d were sent", msg.Commands, len(w.commands))))
	}
	if len(w.commands) > 0 && done == 0 {
		return contract.Yield{}, w.fail(w.protocolFailure(errors.New("yield with commands but no completed call")))
	}
	if msg.Stopped && !w.stopping.Load() {
		return contract.Yield{}, w.fail(w.protocolFailure(errors.New("yield says stopped, but no stop was requested")))
	}
	for i, ns := range msg.Durations {
		call := first + uint64(i)
		hook, event, at := w.calls.locate(call)
		w.stats[hook].add(ns, event, at)
	}
	y := contract.Yield{Stopped: msg.Stopped}
	if w.hooks[contract.HookOnExecution] {
		y.Executions = min(done, w.calls.execCalls)
		y.Bars = done - y.Executions
	} else {
		y.Executions = len(b.Executions)
		y.Bars = done
	}
	if len(w.commands) > 0 {
		hook, _, _ := w.calls.locate(msg.Through)
		y.Commands = make([]contract.Command, len(w.commands))
		for i, c := range w.commands {
			c.Hook = hook
			y.Commands[i] = c
		}
		w.commands, w.commandBytes = w.commands[:0], 0
	}
	w.calls.completed(msg.Through)
	// The worker now holds this batch's bars it did not serve (and, when it
	// resumed, the held bars beyond this batch).
	end := b.FirstEvent + b.Bars.Len()
	if !resumed || end > w.heldTo {
		w.heldTo = end
	}
	w.heldFrom = b.FirstEvent + y.Bars
	if w.onYield != nil {
		w.onYield(y)
	}
	return y, nil
}

// checkStall fails the run when the replay has stayed at one event, without
// serving a bar, for longer than the on_execution limit (see stallDetector).
func (w *worker) checkStall(b *contract.Batch, y contract.Yield, started time.Time) error {
	d := w.stall.observe(b, y, started, time.Now())
	if d <= w.limits.OnExecution {
		return nil
	}
	at := int64(0)
	if len(b.Executions) > 0 {
		at = b.Executions[0].Time
	} else if b.Bars.Len() > 0 {
		at = b.Bars.Time[0]
	}
	f := newFailure(contract.KindTimeout, contract.HookOnExecution, b.FirstEvent, at,
		fmt.Sprintf("the replay stayed at event %d for %s: on_execution keeps placing orders that come back to it at once (%s limit)",
			b.FirstEvent, d.Round(time.Millisecond), w.limits.OnExecution))
	return w.fail(f)
}

// commandOps names the protocol's command codes.
var commandOps = [...]contract.Op{python.OpBuy: contract.OpBuy, python.OpSell: contract.OpSell, python.OpCancel: contract.OpCancel}

// execRecord encodes an execution for the batch frame.
func (w *worker) execRecord(e *contract.Execution) python.ExecRecord {
	r := python.ExecRecord{OrderID: e.OrderID, Symbol: -1, Qty: e.Qty, Price: e.Price, Fee: e.Fee, Cash: e.Cash,
		Position: e.Position, Time: e.Time, Event: int64(e.Event), Reason: e.Reason}
	if k, ok := w.symbolIndex[e.Symbol]; ok {
		r.Symbol = k
	} else {
		r.SymbolName = e.Symbol
	}
	if e.Side == contract.SideSell {
		r.Side = python.SideSell
	}
	switch e.Status {
	case contract.ExecRejected:
		r.Status = python.StatusRejected
	case contract.ExecCanceled:
		r.Status = python.StatusCanceled
	}
	return r
}

// finish runs on_finish, if the strategy has one, and returns its metadata.
func (w *worker) finish(ctx context.Context) (json.RawMessage, error) {
	if w.failure != nil {
		return nil, w.failure
	}
	if !w.hooks[contract.HookOnFinish] {
		return nil, nil
	}
	call := w.calls.startFinish()
	frame, err := python.AppendJSON(w.buf[:0], python.TypeFinish, python.FinishMsg{Call: call})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	f, err := w.request(ctx, frame, request{kind: requestFinish, sent: now, deadline: now.Add(w.limits.OnFinish + requestSlack),
		limit: w.limits.OnFinish, calls: w.calls})
	if err != nil {
		return nil, err
	}
	switch f.Type {
	case python.TypeFinished:
		msg, err := python.DecodeFinished(f.Payload)
		if err != nil {
			return nil, w.fail(w.protocolFailure(err))
		}
		if msg.Call != call {
			return nil, w.fail(w.protocolFailure(fmt.Errorf("on_finish result for call %d, want %d", msg.Call, call)))
		}
		w.stats[contract.HookOnFinish].add(msg.DurationNS, -1, 0)
		// Orders placed in on_finish never reach the market.
		w.commands, w.commandBytes = w.commands[:0], 0
		if w.onYield != nil {
			w.onYield(contract.Yield{})
		}
		return msg.Metadata, nil
	case python.TypeError:
		return nil, w.exception(f.Payload)
	}
	return nil, w.fail(w.protocolFailure(fmt.Errorf("unexpected %q frame during on_finish", f.Type)))
}

// runWatchdog checks the request in flight every watchInterval and kills the
// tree when its deadline passed; it also kills the tree when the job's
// context is cancelled.
func (w *worker) runWatchdog(ctx context.Context) {
	defer close(w.dogDone)
	tick := time.NewTicker(watchInterval)
	defer tick.Stop()
	for {
		select {
		case <-w.dogStop:
			return
		case <-ctx.Done():
			w.dog.cancel()
			w.proc.Kill()
			return
		case now := <-tick.C:
			if f := w.dog.check(now); f != nil {
				w.proc.Kill() // the blocked read ends with the stream
			}
		}
	}
}

// request sends frame (if any) and waits for the worker's answer while the
// watchdog enforces r's deadline: a worker that stops reading its requests
// stalls like one that stops answering, and is killed for it. Command
// frames that arrive meanwhile are collected for the yield; the first other
// frame is the answer.
func (w *worker) request(ctx context.Context, frame []byte, r request) (python.Frame, error) {
	w.dog.arm(r)
	var f python.Frame
	_, err := w.toWorker.Write(frame)
	for err == nil {
		if f, err = w.reader.Next(); err != nil || f.Type != python.TypeCommand {
			break
		}
		if len(w.commands) == 0 {
			// The worker sends commands inline only once the command pipe
			// is full: the pipe's come first.
			if err = w.cmdPipe.drain(w.limits.MessageBytes, w.takeCommand); err != nil {
				break
			}
		}
		err = w.takeCommand(f)
	}
	failure, cancelled := w.dog.disarm()
	switch {
	case cancelled || ctx.Err() != nil:
		w.proc.Kill()
		return python.Frame{}, context.Canceled
	case failure != nil:
		return python.Frame{}, w.fail(failure)
	case err != nil:
		return python.Frame{}, w.broken(err)
	}
	return f, nil
}

// takeCommand decodes a command frame and keeps it for the yield. The
// commands of one call may not take more room than one protocol message:
// the host holds them until the call returns.
func (w *worker) takeCommand(f python.Frame) error {
	c, err := python.DecodeCommand(f.Payload)
	if err != nil {
		return err
	}
	w.commandBytes += f.Size()
	if w.commandBytes > w.limits.MessageBytes {
		return &python.ProtocolError{Msg: fmt.Sprintf("the commands of one hook call exceed the %s message limit",
			units.Bytes(int64(w.limits.MessageBytes)))}
	}
	w.commands = append(w.commands, contract.Command{Op: commandOps[c.Op], OrderID: c.ID, Symbol: c.Symbol, Qty: c.Qty, Limit: c.Limit})
	return nil
}

// currentHook is the hook the worker was in (or about to enter) when
// something went wrong, as its clock claims.
func (w *worker) currentHook() (contract.Hook, int, int64) {
	if !w.ready {
		return contract.HookStartup, -1, 0
	}
	call, _ := w.calls.claimed(w.state.Clock())
	return w.calls.locate(call)
}

// broken turns the end of the protocol stream (or a bad frame) into a failure.
func (w *worker) broken(err error) error {
	if w.failure != nil {
		return w.failure
	}
	if w.dog.isCancelled() {
		// The job's context was cancelled and the watchdog killed the tree:
		// a stop, not a crash.
		return context.Canceled
	}
	var pe *python.ProtocolError
	if errors.As(err, &pe) {
		return w.fail(w.protocolFailure(pe))
	}
	hook, event, at := w.currentHook()
	// The stream ended: either the worker died, or it closed its end and
	// lives on, which leaves it unusable.
	select {
	case <-w.proc.Done():
	case <-time.After(time.Second):
		return w.fail(newFailure(contract.KindProtocol, hook, event, at, "worker closed the protocol channel"))
	}
	res := w.proc.Wait()
	if v := res.Violation; v != nil {
		kind := contract.KindMemory
		if v.Kind == supervisor.ViolationProcesses {
			kind = contract.KindProcesses
		}
		return w.fail(newFailure(kind, hook, event, at, v.Message))
	}
	msg := fmt.Sprintf("worker exited with code %d during %s", res.ExitCode, hook)
	if w.sandboxed && !w.ready && res.ExitCode == sandbox.ExitCode && w.lastStderr != nil {
		if last := w.lastStderr(); strings.HasPrefix(last, "stratbench sandbox: ") {
			// The launcher could not confine or start the interpreter; its
			// last words say why.
			msg = "the sandbox could not start the worker: " + strings.TrimPrefix(last, "stratbench sandbox: ")
		}
	}
	if res.Signal != 0 {
		msg = fmt.Sprintf("worker was killed by signal %d (%s) during %s", int(res.Signal), unix.SignalName(res.Signal), hook)
	}
	return w.fail(newFailure(contract.KindCrash, hook, event, at, msg))
}

// exception turns an error frame into an exception failure.
func (w *worker) exception(payload []byte) error {
	e, err := python.DecodeError(payload)
	if err != nil {
		return w.fail(w.protocolFailure(err))
	}
	hook, event, at := contract.HookStartup, -1, int64(0)
	if e.Call != 0 || w.ready {
		if !w.calls.inFlight(e.Call) {
			return w.fail(w.protocolFailure(fmt.Errorf("error reported for call %d, which is not in flight", e.Call)))
		}
		hook, event, at = w.calls.locate(e.Call)
	}
	if hook != e.Hook {
		return w.fail(w.protocolFailure(fmt.Errorf("error reported for %s, call %d is %s", e.Hook, e.Call, hook)))
	}
	if len(e.Durations) > 0 {
		if w.calls.batch == nil || uint64(len(e.Durations)) != e.Call-w.calls.first {
			return w.fail(w.protocolFailure(fmt.Errorf("error for call %d with %d durations", e.Call, len(e.Durations))))
		}
		for i, ns := range e.Durations {
			h, ev, t := w.calls.locate(w.calls.first + uint64(i))
			w.stats[h].add(ns, ev, t)
		}
		w.calls.recorded = e.Call - 1
	}
	f := newFailure(contract.KindException, hook, event, at, e.Message)
	f.Traceback = e.Traceback
	for _, fr := range e.Frames {
		f.Frames = append(f.Frames, contract.Frame{File: fr.File, Line: fr.Line, Function: fr.Function, Source: fr.Source, User: fr.User})
	}
	return w.fail(f)
}

// protocolFailure blames a bad frame on the call in flight, or, between
// calls, on the call that just returned: that is what wrote it (as far as
// the worker's clock tells).
func (w *worker) protocolFailure(err error) *contract.Failure {
	hook, event, at := w.currentHook()
	if c := w.state.Clock(); w.ready && c%2 == 0 && c/2 >= 1 && w.calls.inFlight(c/2) {
		hook, event, at = w.calls.locate(c / 2)
	}
	return newFailure(contract.KindProtocol, hook, event, at, err.Error())
}

func newFailure(kind contract.FailureKind, hook contract.Hook, event int, at int64, msg string) *contract.Failure {
	f := &contract.Failure{Kind: kind, Hook: hook, Message: msg}
	if event >= 0 {
		e := event
		t := time.Unix(0, at).UTC().Format(time.RFC3339Nano)
		f.EventIndex, f.EventTime = &e, &t
	}
	return f
}

// fail records the first failure, kills the tree and returns the failure.
func (w *worker) fail(f *contract.Failure) error {
	first := w.failure == nil
	if first {
		w.failure = f
		if s, ok := w.stats[f.Hook]; ok {
			s.failures++
		}
		w.countUntimed()
	}
	w.proc.Kill()
	if first {
		// The commands the failed call sent never took effect. They are
		// those the host holds and those still in the command pipe, which
		// the dead worker cannot add to any more.
		w.discarded += len(w.commands)
		w.commands = w.commands[:0]
		w.cmdPipe.drain(w.limits.MessageBytes, func(python.Frame) error { w.discarded++; return nil })
	}
	return w.failure
}

// countUntimed counts the calls of the batch in flight that returned before
// a failure killed the worker: their durations never reached the host, but
// they ran (as far as the worker's clock tells).
func (w *worker) countUntimed() {
	l := &w.calls
	if l.batch == nil {
		return
	}
	done := min(w.state.Clock()/2, l.last) // calls that returned, as the clock claims
	for call := max(l.recorded+1, l.first); call <= done; call++ {
		hook, _, _ := l.locate(call)
		w.stats[hook].untimed++
	}
	l.recorded = max(l.recorded, done)
}

// close ends the worker: a quit request, a short grace period, then the
// whole tree is killed. It returns the supervisor's result.
func (w *worker) close() supervisor.Result {
	if w.failure == nil {
		// Five bytes into a pipe the worker has drained: this cannot block.
		w.toWorker.Write(python.AppendQuit(nil))
		select {
		case <-w.proc.Done():
		case <-time.After(2 * time.Second):
		}
	}
	close(w.dogStop)
	<-w.dogDone
	w.proc.Kill()
	res := w.proc.Wait()
	w.toWorker.Close()
	w.fromRead.Close()
	w.state.Close()
	w.cmdPipe.close()
	return res
}

package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/python"
	"stratbench/supervisor"
	"stratbench/supervisor/sandbox"
)

// watchInterval is how often the watchdog reads the worker's call clock while
// the host waits for the worker: the resolution of hook deadlines.
const watchInterval = 5 * time.Millisecond

// worker is the host side of one Python worker process: it speaks the
// protocol, times every hook call against its limit and turns whatever goes
// wrong into a *Failure. It implements Worker for the driver.
type worker struct {
	limits      Limits
	proc        *supervisor.Process
	toWorker    *os.File
	fromRead    *os.File
	reader      *python.Reader
	state       *python.StatePage
	hooks       map[string]bool
	manifest    Manifest
	symbols     []string
	symbolIndex map[string]int32
	started     time.Time
	ready       bool // the handshake is over: calls are timed by the clock

	nextCall   uint64 // number of the next hook call
	lastCall   uint64 // highest call the current request allows
	clock      uint64 // last clock value seen
	clockAt    time.Time
	batch      *Batch
	batchFirst uint64
	execCalls  int    // calls of the batch that are on_execution
	finishCall uint64 // the on_finish call, once requested
	// Events [heldFrom, heldTo) are bars the worker received and has not
	// served yet (a batch it left early to yield).
	heldFrom, heldTo int
	recorded         uint64 // the last call whose statistics are recorded
	// Batches that served no bar since stalledSince, all at stalledEvent:
	// each call returns in time, but a chain of orders and instant answers
	// can keep the replay at one event forever.
	stalled      bool
	stalledEvent int
	stalledExecs int // executions the last batch at stalledEvent carried
	stalledSince time.Time

	dog        watchdog
	stopping   atomic.Bool
	stats      map[string]*hookStats
	discarded  int
	failure    *Failure
	buf        []byte
	execs      []python.ExecRecord
	onYield    func(y Yield)  // progress and statistics publication
	onProgress func(bars int) // bars of the batch in flight done so far, from the clock
	progressAt time.Time
	lastStderr func() string
	sandboxed  bool
}

// spawn describes how to start a worker.
type spawn struct {
	spec       supervisor.Spec // Path, Args, Env, Dir, Limits, StateFile, Output; ExtraFiles are added here
	limits     Limits
	host       *supervisor.Host
	onYield    func(Yield)
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
	sp.spec.ExtraFiles = []*os.File{toR, fromW, state.File()}
	proc, err := sp.host.Start(ctx, sp.spec)
	toR.Close()
	fromW.Close()
	if err != nil {
		toW.Close()
		fromR.Close()
		state.Close()
		return nil, fmt.Errorf("start worker: %w", err)
	}
	w := &worker{
		limits:     sp.limits,
		proc:       proc,
		toWorker:   toW,
		fromRead:   fromR,
		reader:     python.NewReader(fromR, sp.limits.MessageBytes),
		state:      state,
		started:    time.Now(),
		nextCall:   1,
		stats:      map[string]*hookStats{HookOnData: {}, HookOnExecution: {}, HookOnFinish: {}},
		onYield:    sp.onYield,
		onProgress: sp.onProgress,
		lastStderr: sp.lastStderr,
		sandboxed:  sp.sandboxed,
		dog:        watchdog{stop: make(chan struct{}), done: make(chan struct{})},
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
	f, err := w.request(ctx, nil)
	if err != nil {
		return nil, err
	}
	switch f.Type {
	case python.TypeManifest:
		m, err := python.DecodeManifest(f.Payload)
		if err != nil {
			return nil, w.fail(w.protocolFailure(err))
		}
		w.hooks = map[string]bool{}
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
func (w *worker) init(ctx context.Context, m Manifest, msg python.InitMsg) error {
	w.manifest = m
	w.symbols = msg.Symbols
	w.symbolIndex = make(map[string]int32, len(msg.Symbols))
	for i, s := range msg.Symbols {
		w.symbolIndex[s] = int32(i)
	}
	frame, err := python.AppendJSON(w.buf[:0], python.TypeInit, msg)
	if err != nil {
		return err
	}
	f, err := w.request(ctx, frame)
	if err != nil {
		return err
	}
	if f.Type != python.TypeReady {
		return w.fail(w.protocolFailure(fmt.Errorf("unexpected %q frame, want ready", f.Type)))
	}
	w.ready = true
	return nil
}

// Manifest implements Worker.
func (w *worker) Manifest() Manifest { return w.manifest }

// requestStop asks the worker to return after the call in flight.
func (w *worker) requestStop() {
	w.stopping.Store(true)
	w.state.RequestStop()
}

// Run implements Worker.
func (w *worker) Run(ctx context.Context, b *Batch) (Yield, error) {
	if w.failure != nil {
		return Yield{}, w.failure
	}
	if w.stopping.Load() {
		return Yield{Stopped: true}, nil
	}
	execCalls := 0
	if w.hooks[HookOnExecution] {
		execCalls = len(b.Executions)
	}
	calls := execCalls + b.Bars.Len()
	if calls == 0 && len(b.Executions) == 0 {
		return Yield{}, nil
	}
	first := w.nextCall
	started := time.Now()
	w.batch, w.batchFirst, w.execCalls = b, first, execCalls
	w.lastCall = first + uint64(calls) - 1
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
	frame, err := python.AppendBatch(w.buf[:0], first, resumed, w.execs, bars, len(w.symbols))
	if err != nil {
		return Yield{}, err
	}
	w.buf = frame
	f, err := w.request(ctx, frame)
	if err != nil {
		return Yield{}, err
	}
	switch f.Type {
	case python.TypeYield:
		msg, err := python.DecodeYield(f.Payload)
		if err != nil {
			return Yield{}, w.fail(w.protocolFailure(err))
		}
		y, err := w.accept(msg, b, calls, resumed > 0)
		if err != nil {
			return y, err
		}
		return y, w.checkProgress(b, y, started)
	case python.TypeError:
		return Yield{}, w.exception(f.Payload)
	}
	return Yield{}, w.fail(w.protocolFailure(fmt.Errorf("unexpected %q frame during a batch", f.Type)))
}

// accept checks a yield against the batch it answers and records its calls.
func (w *worker) accept(msg *python.YieldMsg, b *Batch, calls int, resumed bool) (Yield, error) {
	first := w.batchFirst
	if msg.Through+1 < first || msg.Through > w.lastCall {
		return Yield{}, w.fail(w.protocolFailure(fmt.Errorf("yield through call %d, batch has calls %d to %d", msg.Through, first, w.lastCall)))
	}
	done := int(msg.Through + 1 - first)
	if len(msg.Durations) != done {
		return Yield{}, w.fail(w.protocolFailure(fmt.Errorf("yield has %d durations for %d calls", len(msg.Durations), done)))
	}
	if done < calls && len(msg.Commands) == 0 && !msg.Stopped {
		return Yield{}, w.fail(w.protocolFailure(fmt.Errorf("yield after %d of %d calls without commands or stop", done, calls)))
	}
	if len(msg.Commands) > 0 && done == 0 {
		return Yield{}, w.fail(w.protocolFailure(errors.New("yield with commands but no completed call")))
	}
	if msg.Stopped && !w.stopping.Load() {
		return Yield{}, w.fail(w.protocolFailure(errors.New("yield says stopped, but no stop was requested")))
	}
	for i, ns := range msg.Durations {
		call := first + uint64(i)
		hook, event, at := w.locate(call)
		w.stats[hook].add(ns, event, at)
	}
	y := Yield{Stopped: msg.Stopped}
	if w.hooks[HookOnExecution] {
		y.Executions = min(done, w.execCalls)
		y.Bars = done - y.Executions
	} else {
		y.Executions = len(b.Executions)
		y.Bars = done
	}
	if len(msg.Commands) > 0 {
		hook, _, _ := w.locate(msg.Through)
		y.Commands = make([]Command, len(msg.Commands))
		for i, c := range msg.Commands {
			y.Commands[i] = Command{Op: commandOps[c.Op], OrderID: c.ID, Symbol: c.Symbol, Qty: c.Qty, Limit: c.Limit, Hook: hook}
		}
	}
	w.nextCall = msg.Through + 1
	w.recorded = msg.Through
	w.clock = 2 * msg.Through
	w.batch = nil
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

// checkProgress fails the run when batches at one event stop getting
// anywhere for longer than the on_execution limit: on_execution answering
// every execution with an order that comes back at once (a retry of a
// rejected order, say) would otherwise hold the replay there forever, each
// call well within its limit. Getting anywhere is serving a bar, delivering
// a whole batch of executions without new orders, or a batch with fewer
// executions to deliver than the one before at that event.
func (w *worker) checkProgress(b *Batch, y Yield, started time.Time) error {
	n := len(b.Executions)
	drained := y.Executions == n && len(y.Commands) == 0
	if y.Bars > 0 || y.Stopped || n == 0 || drained {
		w.stalled = false
		return nil
	}
	if !w.stalled || w.stalledEvent != b.FirstEvent || n < w.stalledExecs {
		w.stalled, w.stalledEvent, w.stalledSince, w.stalledExecs = true, b.FirstEvent, started, n
		return nil
	}
	w.stalledExecs = n
	if d := time.Since(w.stalledSince); d > w.limits.OnExecution {
		f := w.newFailure(KindTimeout, HookOnExecution, b.FirstEvent, b.Executions[0].Time,
			fmt.Sprintf("the replay stayed at event %d for %s: on_execution keeps placing orders that come back to it at once (%s limit)",
				b.FirstEvent, d.Round(time.Millisecond), w.limits.OnExecution))
		return w.fail(f)
	}
	return nil
}

// inFlight reports whether call belongs to the request the worker is serving.
func (w *worker) inFlight(call uint64) bool {
	if w.finishCall != 0 && call == w.finishCall {
		return true
	}
	return w.batch != nil && call >= w.batchFirst && call <= w.lastCall
}

// commandOps names the protocol's command codes.
var commandOps = [...]string{python.OpBuy: OpBuy, python.OpSell: OpSell, python.OpCancel: OpCancel}

// execRecord encodes an execution for the batch frame.
func (w *worker) execRecord(e *Execution) python.ExecRecord {
	r := python.ExecRecord{OrderID: e.OrderID, Symbol: -1, Qty: e.Qty, Price: e.Price, Fee: e.Fee, Cash: e.Cash,
		Position: e.Position, Time: e.Time, Event: int64(e.Event), Reason: e.Reason}
	if k, ok := w.symbolIndex[e.Symbol]; ok {
		r.Symbol = k
	} else {
		r.SymbolName = e.Symbol
	}
	if e.Side == "sell" {
		r.Side = python.SideSell
	}
	switch e.Status {
	case ExecRejected:
		r.Status = python.StatusRejected
	case ExecCanceled:
		r.Status = python.StatusCanceled
	}
	return r
}

// locate maps a call number to its hook and event (-1 and 0 when none).
func (w *worker) locate(call uint64) (hook string, event int, at int64) {
	if w.finishCall != 0 && call == w.finishCall {
		return HookOnFinish, -1, 0
	}
	if b := w.batch; b != nil && call >= w.batchFirst && call <= w.lastCall {
		i := int(call - w.batchFirst)
		if i < w.execCalls {
			e := b.Executions[i]
			return HookOnExecution, e.Event, e.Time
		}
		j := i - w.execCalls
		return HookOnData, b.FirstEvent + j, b.Bars.Time[j]
	}
	return HookOnData, -1, 0
}

// finish runs on_finish, if the strategy has one, and returns its metadata.
func (w *worker) finish(ctx context.Context) (json.RawMessage, error) {
	if w.failure != nil {
		return nil, w.failure
	}
	if !w.hooks[HookOnFinish] {
		return nil, nil
	}
	call := w.nextCall
	w.nextCall++
	w.finishCall, w.lastCall, w.batch = call, call, nil
	frame, err := python.AppendJSON(w.buf[:0], python.TypeFinish, python.FinishMsg{Call: call})
	if err != nil {
		return nil, err
	}
	f, err := w.request(ctx, frame)
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
		w.stats[HookOnFinish].add(msg.DurationNS, -1, 0)
		if w.onYield != nil {
			w.onYield(Yield{})
		}
		return msg.Metadata, nil
	case python.TypeError:
		return nil, w.exception(f.Payload)
	}
	return nil, w.fail(w.protocolFailure(fmt.Errorf("unexpected %q frame during on_finish", f.Type)))
}

// watchdog enforces the deadlines of the request the worker is serving
// while the worker's goroutine is blocked writing the request or reading the
// answer: every
// watchInterval, while armed, it runs watch. The worker fields watch reads
// are written only while the watchdog is disarmed, and arming and disarming
// go through mu, so the two goroutines never touch them at once.
type watchdog struct {
	mu        sync.Mutex
	armed     bool
	failure   *Failure // the reason the watchdog killed the tree
	cancelled bool     // the job's context was cancelled: the tree was killed
	stop      chan struct{}
	done      chan struct{}
}

func (w *worker) runWatchdog(ctx context.Context) {
	defer close(w.dog.done)
	tick := time.NewTicker(watchInterval)
	defer tick.Stop()
	for {
		select {
		case <-w.dog.stop:
			return
		case <-ctx.Done():
			w.dog.mu.Lock()
			w.dog.cancelled = true
			w.dog.mu.Unlock()
			w.proc.Kill()
			return
		case now := <-tick.C:
			w.dog.mu.Lock()
			var f *Failure
			if w.dog.armed && w.dog.failure == nil {
				f = w.watch(now)
				w.dog.failure = f
			}
			w.dog.mu.Unlock()
			if f != nil {
				w.proc.Kill() // the blocked read ends with the stream
			}
		}
	}
}

// cancelled reports whether the watchdog killed the tree because the job's
// context was cancelled.
func (w *worker) cancelled() bool {
	w.dog.mu.Lock()
	defer w.dog.mu.Unlock()
	return w.dog.cancelled
}

// request sends frame (if any) and waits for the worker's answer while the
// watchdog enforces the deadlines: a worker that stops reading its requests
// stalls like one that stops answering, and is killed for it.
func (w *worker) request(ctx context.Context, frame []byte) (python.Frame, error) {
	w.clockAt = time.Now() // the bridge is rightly idle until a request arrives
	w.dog.mu.Lock()
	w.dog.armed = true
	w.dog.mu.Unlock()
	var f python.Frame
	_, err := w.toWorker.Write(frame)
	if err == nil {
		f, err = w.reader.Next()
	}
	w.dog.mu.Lock()
	w.dog.armed = false
	failure, cancelled := w.dog.failure, w.dog.cancelled
	w.dog.mu.Unlock()
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

// watch checks the worker's clock against the deadline of the call it runs.
func (w *worker) watch(now time.Time) *Failure {
	if !w.ready {
		// Startup: importing the strategy and the handshake.
		if now.Sub(w.started) > w.limits.Startup {
			return w.newFailure(KindTimeout, HookStartup, -1, 0,
				fmt.Sprintf("startup (importing the strategy) took longer than the %s limit", w.limits.Startup))
		}
		return nil
	}
	c := w.state.Clock()
	if c != w.clock {
		if c < w.clock || c > 2*w.lastCall {
			return w.protocolFailure(fmt.Errorf("worker call clock moved from %d to %d (calls up to %d allowed)", w.clock, c, w.lastCall))
		}
		w.clock, w.clockAt = c, now
		if w.batch != nil && w.onProgress != nil && now.Sub(w.progressAt) >= progressInterval {
			// A batch can hold many bars: the clock tells how far it got
			// without waiting for the yield.
			w.progressAt = now
			w.onProgress(max(0, int(c/2-(w.batchFirst-1))-w.execCalls))
		}
	}
	running := c%2 == 1
	call := c/2 + 1 // the call in flight, or the next one
	if !running && call > w.lastCall {
		call = w.lastCall
	}
	hook, event, at := w.locate(call)
	limit := w.limits.hookLimit(hook)
	if now.Sub(w.clockAt) <= limit {
		return nil
	}
	if running {
		return w.newFailure(KindTimeout, hook, event, at, fmt.Sprintf("%s did not return within the %s limit", hook, limit))
	}
	return w.newFailure(KindTimeout, hook, event, at, fmt.Sprintf("worker stalled between hook calls for more than %s", limit))
}

// currentHook is the hook the worker was in (or about to enter) when something went wrong.
func (w *worker) currentHook() (string, int, int64) {
	if !w.ready {
		return HookStartup, -1, 0
	}
	c := w.state.Clock()
	call := c/2 + 1
	if c%2 == 0 && call > w.lastCall {
		call = w.lastCall
	}
	return w.locate(call)
}

// broken turns the end of the protocol stream (or a bad frame) into a failure.
func (w *worker) broken(err error) error {
	if w.failure != nil {
		return w.failure
	}
	if w.cancelled() {
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
		return w.fail(w.newFailure(KindProtocol, hook, event, at, "worker closed the protocol channel"))
	}
	res := w.proc.Wait()
	if v := res.Violation; v != nil {
		kind := KindMemory
		if v.Kind == supervisor.ViolationProcesses {
			kind = KindProcesses
		}
		return w.fail(w.newFailure(kind, hook, event, at, v.Message))
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
	return w.fail(w.newFailure(KindCrash, hook, event, at, msg))
}

// exception turns an error frame into an exception failure.
func (w *worker) exception(payload []byte) error {
	e, err := python.DecodeError(payload)
	if err != nil {
		return w.fail(w.protocolFailure(err))
	}
	hook, event, at := HookStartup, -1, int64(0)
	if e.Call != 0 || w.ready {
		if !w.inFlight(e.Call) {
			return w.fail(w.protocolFailure(fmt.Errorf("error reported for call %d, which is not in flight", e.Call)))
		}
		hook, event, at = w.locate(e.Call)
	}
	if hook != e.Hook {
		return w.fail(w.protocolFailure(fmt.Errorf("error reported for %s, call %d is %s", e.Hook, e.Call, hook)))
	}
	if len(e.Durations) > 0 {
		if w.batch == nil || uint64(len(e.Durations)) != e.Call-w.batchFirst {
			return w.fail(w.protocolFailure(fmt.Errorf("error for call %d with %d durations", e.Call, len(e.Durations))))
		}
		for i, ns := range e.Durations {
			h, ev, t := w.locate(w.batchFirst + uint64(i))
			w.stats[h].add(ns, ev, t)
		}
		w.recorded = e.Call - 1
	}
	f := w.newFailure(KindException, hook, event, at, e.Message)
	f.Traceback = e.Traceback
	for _, fr := range e.Frames {
		f.Frames = append(f.Frames, Frame{File: fr.File, Line: fr.Line, Function: fr.Function, Source: fr.Source, User: fr.User})
	}
	w.discarded = max(w.discarded, e.Commands)
	return w.fail(f)
}

// protocolFailure blames a bad frame or clock on the call in flight, or,
// between calls, on the call that just returned: that is what wrote it.
func (w *worker) protocolFailure(err error) *Failure {
	hook, event, at := w.currentHook()
	if c := w.state.Clock(); w.ready && c%2 == 0 && c/2 >= 1 && w.inFlight(c/2) {
		hook, event, at = w.locate(c / 2)
	}
	return w.newFailure(KindProtocol, hook, event, at, err.Error())
}

func (w *worker) newFailure(kind, hook string, event int, at int64, msg string) *Failure {
	f := &Failure{Kind: kind, Hook: hook, Message: msg}
	if event >= 0 {
		e := event
		t := time.Unix(0, at).UTC().Format(time.RFC3339Nano)
		f.EventIndex, f.EventTime = &e, &t
	}
	return f
}

// fail records the first failure, kills the tree and returns the failure.
func (w *worker) fail(f *Failure) error {
	if w.failure == nil {
		w.failure = f
		if s, ok := w.stats[f.Hook]; ok {
			s.failures++
		}
		w.countUntimed()
		// Commands the failed hook issued never reached the host; the bridge
		// counts them in the shared page.
		w.discarded = max(w.discarded, int(min(w.state.PendingCommands(), 1<<31)))
	}
	w.proc.Kill()
	return w.failure
}

// countUntimed counts the calls of the batch in flight that returned before
// a failure killed the worker: their durations never reached the host, but
// they ran.
func (w *worker) countUntimed() {
	if w.batch == nil {
		return
	}
	c := w.state.Clock()
	done := min(c/2, w.lastCall) // calls that returned, as the clock claims
	for call := max(w.recorded+1, w.batchFirst); call <= done; call++ {
		hook, _, _ := w.locate(call)
		w.stats[hook].untimed++
	}
	w.recorded = max(w.recorded, done)
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
	close(w.dog.stop)
	<-w.dog.done
	w.proc.Kill()
	res := w.proc.Wait()
	w.toWorker.Close()
	w.fromRead.Close()
	w.state.Close()
	return res
}

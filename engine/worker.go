package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"stratbench/contract"
	"stratbench/internal/units"
	"stratbench/job"
	"stratbench/python"
	"stratbench/supervisor"
)

// worker is the host side of one Python worker process: it speaks the
// protocol over its channel, has the watchdog time every request against
// its deadline, and turns whatever goes wrong into a *contract.Failure
// (failure.go). It implements contract.Worker for the driver. Every method
// but requestStop runs on the job's goroutine; the watchdog's goroutine
// shares nothing with it but the request snapshot it is armed with.
type worker struct {
	limits   job.Limits
	proc     *supervisor.Process
	ch       *channel
	dog      *watchdog
	started  time.Time
	stopping atomic.Bool // a stop was requested (requestStop, from any goroutine)

	// What the handshake told.
	ready       bool // the handshake is over
	hooks       map[contract.Hook]bool
	onBars      bool // the strategy has on_bars: one call per timestamp
	manifest    contract.Manifest
	symbolIndex map[string]int32

	// The calls so far and the request in flight.
	calls   callLedger
	pending pendingCommands
	held    heldBars
	stall   stallDetector
	execs   []python.ExecRecord // the executions of the batch being encoded
	groups  []uint32            // the sizes of its timestamps, for on_bars

	// local says that the worker may deliver fills itself (python.InitMsg.Local);
	// play, while set, is the answer of its last batch request that went
	// past such fills, played out to the driver (localfills.go).
	local   bool
	batches int // batch requests sent (round trips to the worker)
	aheads  int // of which sent ahead (sendAhead)
	joined  int // of which held bars then the driver's next (sendAhead)
	play    *play
	ahead   *aheadRequest // a batch request sent before the driver asked for it (sendAhead)
	salvage *salvage      // set by a failure after such fills (salvageOrders)

	stats     hookTable
	failure   *contract.Failure // the first failure; the worker is dead after it
	discarded int               // commands of the failed call that never took effect
	// lostWithTemplate says that failure is the run's end with the warm
	// template it was forked from (supervisor.Result.TemplateLost).
	lostWithTemplate bool

	lastStderr func() string // the worker's last line on stderr
	sandboxed  bool
	debug      *debugSession // the debugger's host side; nil without one (Config.Debug)
}

// spawn describes how to start a worker.
type spawn struct {
	spec       supervisor.Spec // Path, Args, Env, Dir, Limits, StateFile, Output; ExtraFiles are added here
	limits     job.Limits
	host       *supervisor.Host
	meter      progressMeter
	lastStderr func() string
	sandboxed  bool
	stack      *stackDump // asked for the interpreter's stack at a timeout
	debug      *Debug     // the workbench's debugger, or nil
	// fork, when set, starts the worker from a Pool's template instead
	// of host.Start (see warmLauncher.start).
	fork func(context.Context, supervisor.Spec) (*supervisor.Process, error)
}

func startWorker(ctx context.Context, sp spawn) (*worker, error) {
	ch, theirs, err := openChannel(sp.limits.MessageBytes, sp.debug)
	if err != nil {
		return nil, err
	}
	sp.spec.ExtraFiles = theirs
	start := sp.host.Start
	if sp.fork != nil {
		start = sp.fork
	}
	proc, err := start(ctx, sp.spec)
	for _, f := range theirs {
		f.Close() // the worker has them, or never will
	}
	if err != nil {
		ch.close()
		if ch.debug != nil {
			ch.debug.close()
		}
		return nil, fmt.Errorf("start worker: %w", err)
	}
	w := &worker{
		limits:     sp.limits,
		proc:       proc,
		ch:         ch,
		dog:        newWatchdog(ch.state, sp.meter),
		started:    time.Now(),
		calls:      callLedger{next: 1},
		stats:      newHookTable(sp.limits, sp.meter),
		lastStderr: sp.lastStderr,
		sandboxed:  sp.sandboxed,
	}
	w.dog.idle = sp.limits.DebugIdle
	w.dog.cpu = func() (time.Duration, bool) { return processCPU(proc.PID()) }
	if ch.debug != nil {
		w.debug = newDebugSession(ch.debug, w.dog, proc.Kill, sp.meter)
		go w.debug.run()
	}
	go w.dog.run(ctx, proc.Kill, func() { sp.stack.ask(proc.PID(), proc.Done()) })
	return w, nil
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
		w.onBars = w.hooks[contract.HookOnBars]
		w.calls.barHook = contract.BarHook(m.Hooks)
		return m, nil
	case python.TypeError:
		return nil, w.exception(f.Payload)
	}
	return nil, w.fail(w.protocolFailure(fmt.Errorf("unexpected %q frame before the manifest", f.Type)))
}

// init sends the run's configuration and waits for the worker to be ready.
func (w *worker) init(ctx context.Context, m contract.Manifest, msg python.InitMsg) error {
	w.manifest = m
	w.symbolIndex = make(map[string]int32, len(msg.Symbols))
	for i, s := range msg.Symbols {
		w.symbolIndex[s] = int32(i)
	}
	msg.BudgetMS = float64(batchBudget) / float64(time.Millisecond)
	w.local = msg.Local != nil
	frame, err := python.AppendJSON(w.ch.buf[:0], python.TypeInit, msg)
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
// ready: the startup limit from the worker's start, and the time the
// debugger's prompt was credited since (debug.go).
func (w *worker) startupRequest() request {
	return request{kind: requestStartup, sent: time.Now(), deadline: w.started.Add(w.limits.Startup + w.dog.pausedTotal()),
		limit: w.limits.Startup}
}

// Manifest implements contract.Worker.
func (w *worker) Manifest() contract.Manifest { return w.manifest }

// requestStop asks the worker to return after the call in flight. It may be
// called from any goroutine.
func (w *worker) requestStop() {
	w.stopping.Store(true)
	w.ch.state.RequestStop()
	if w.debug != nil {
		w.debug.detach() // a worker at the prompt goes on to the hook's end
	}
}

// Run implements contract.Worker.
func (w *worker) Run(ctx context.Context, b *contract.Batch) (contract.Yield, error) {
	if w.play != nil {
		// The worker went on past the fills it delivered itself: b is the
		// market's next batch of what it ran.
		return w.serve(b, 0, true)
	}
	if w.ahead != nil {
		return w.runAhead(ctx, b)
	}
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
	starts, groups := w.timestamps(b.Bars)
	barCalls := b.Bars.Len()
	if starts != nil {
		barCalls = len(groups)
	}
	calls := execCalls + barCalls
	if calls == 0 && len(b.Executions) == 0 {
		return contract.Yield{}, nil
	}
	started := time.Now()
	pausedBefore := w.dog.pausedTotal()
	w.startBatch(&w.calls, b, execCalls, calls, starts)
	// The worker still holds the bars of the previous batch it did not
	// serve: when this batch starts with them, they are not sent again.
	resumed := w.held.resumable(b)
	fresh := b.Bars.Slice(resumed, b.Bars.Len())
	bars := python.Columns{Time: fresh.Time, Symbol: fresh.Symbol, Open: fresh.Open, High: fresh.High,
		Low: fresh.Low, Close: fresh.Close, Volume: fresh.Volume}
	w.execs = w.execs[:0]
	for i := range b.Executions {
		w.execs = append(w.execs, w.execRecord(&b.Executions[i]))
	}
	var frame []byte
	var err error
	if starts != nil {
		frame, err = python.AppendGroupedBatch(w.ch.buf[:0], w.calls.first, resumed, w.execs, bars, len(w.symbolIndex), groups)
	} else {
		frame, err = python.AppendBatch(w.ch.buf[:0], w.calls.first, resumed, w.execs, bars, len(w.symbolIndex))
	}
	if err != nil {
		return contract.Yield{}, err
	}
	w.ch.buf = frame
	w.batches++
	limit := w.limits.OnData
	if execCalls > 0 {
		limit = max(limit, w.limits.OnExecution)
	}
	f, err := w.request(ctx, frame, request{kind: requestBatch, sent: started, deadline: started.Add(limit + requestSlack),
		limit: limit, calls: w.calls, barsBefore: w.stats.bars})
	return w.answer(b, f, err, calls, resumed > 0, started, pausedBefore)
}

// answer takes in the answer f (or the failure err) of the request for b,
// of calls calls, sent at started (when the debugger's prompt had been
// credited pausedBefore); resumed says whether b resumed bars the worker
// held.
func (w *worker) answer(b *contract.Batch, f python.Frame, err error, calls int, resumed bool, started time.Time, pausedBefore time.Duration) (contract.Yield, error) {
	if err != nil {
		return w.salvaged(b, resumed, err)
	}
	switch f.Type {
	case python.TypeYield:
		msg, err := python.DecodeYield(f.Payload)
		if err != nil {
			return contract.Yield{}, w.fail(w.protocolFailure(err))
		}
		y, err := w.accept(msg, b, calls, resumed)
		if err != nil {
			return y, err
		}
		return y, w.checkStall(b, y, started, pausedBefore)
	case python.TypeError:
		return w.salvaged(b, resumed, w.exception(f.Payload))
	}
	return contract.Yield{}, w.fail(w.protocolFailure(fmt.Errorf("unexpected %q frame during a batch", f.Type)))
}

// startBatch makes b the request in flight of the ledger l (see
// callLedger.startBatch), allowing, when the worker may deliver fills
// itself, the on_execution call each such fill adds after its order's bar.
func (w *worker) startBatch(l *callLedger, b *contract.Batch, execCalls, calls int, starts []int) {
	l.startBatch(b, execCalls, calls, starts)
	if w.local && starts == nil && w.hooks[contract.HookOnExecution] {
		l.last += uint64(b.Bars.Len())
	}
}

// salvaged returns err, the failure of the request for b, after the
// yields of the orders whose fills the worker delivered itself before the
// failed call (salvageOrders), when there are any.
func (w *worker) salvaged(b *contract.Batch, resumed bool, err error) (contract.Yield, error) {
	s := w.salvage
	if s == nil {
		return contract.Yield{}, err
	}
	w.salvage = nil
	w.calls.recorded = w.calls.first - 1
	execCalls := 0
	if w.hooks[contract.HookOnExecution] {
		execCalls = len(b.Executions)
	}
	return w.startPlay(b, s.orders, s.durations, s.failed-1, nil, false, err, resumed, execCalls)
}

// accept checks a yield against the batch it answers and records its calls.
func (w *worker) accept(msg *python.YieldMsg, b *contract.Batch, calls int, resumed bool) (contract.Yield, error) {
	// The calls the request made: the batch's, and an on_execution call
	// for each fill the worker says it delivered itself.
	first, last := w.calls.first, w.calls.first+uint64(calls)-1
	if w.hooks[contract.HookOnExecution] {
		last += uint64(len(msg.Local))
	}
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
	if msg.Commands > w.pending.len() {
		// The commands of the call are in the command pipe (and none came
		// inline: those would have drained it).
		if err := w.ch.commands.drain(w.limits.MessageBytes, w.takeCommand); err != nil {
			return contract.Yield{}, w.fail(w.protocolFailure(err))
		}
	}
	if msg.Commands != w.pending.len() {
		return contract.Yield{}, w.fail(w.protocolFailure(fmt.Errorf("yield counts %d commands, %d were sent", msg.Commands, w.pending.len())))
	}
	if w.pending.len() > 0 && done == 0 {
		return contract.Yield{}, w.fail(w.protocolFailure(errors.New("yield with commands but no completed call")))
	}
	if msg.Stopped && !w.stopping.Load() {
		return contract.Yield{}, w.fail(w.protocolFailure(errors.New("yield says stopped, but no stop was requested")))
	}
	if len(msg.Local) > 0 || w.local && w.pending.len() > 0 && w.pending.list[0].call < msg.Through {
		// The worker went on past orders: fills it delivered itself, or
		// orders it stopped before the fill of (several symbols).
		orders, tail, err := w.localOrders(msg, first)
		if err != nil {
			return contract.Yield{}, w.fail(w.protocolFailure(err))
		}
		execCalls := 0
		if w.hooks[contract.HookOnExecution] {
			execCalls = len(b.Executions)
		}
		return w.startPlay(b, orders, msg.Durations, msg.Through, tail, msg.Stopped, nil, resumed, execCalls)
	}
	for i, ns := range msg.Durations {
		hook, event, at := w.calls.locate(first + uint64(i))
		w.stats.add(hook, ns, event, at)
	}
	y := contract.Yield{Stopped: msg.Stopped}
	if w.hooks[contract.HookOnExecution] {
		y.Executions = min(done, w.calls.execCalls)
		y.Bars = w.calls.barsOf(done - y.Executions)
	} else {
		y.Executions = len(b.Executions)
		y.Bars = w.calls.barsOf(done)
	}
	if w.pending.len() > 0 {
		hook, _, _ := w.calls.locate(msg.Through)
		y.Commands = w.pending.commit(hook)
	}
	w.calls.last = last
	w.calls.completed(msg.Through)
	w.held.served(b, y.Bars, resumed)
	if y.Commands == nil && !y.Stopped && y.Bars > 0 && y.Executions == len(b.Executions) {
		y.Ahead = w.sendAhead(b, y.Bars, msg.Through, w.stats.bars+y.Bars)
	}
	w.stats.yielded(y.Bars, time.Now())
	return y, nil
}

// hookReport returns the report's statistics of the hooks: on_data,
// on_execution and on_finish always (a report has them), on_bars when the
// strategy has it.
func (w *worker) hookReport() map[contract.Hook]job.Stats {
	out := w.stats.report()
	if !w.onBars {
		delete(out, contract.HookOnBars)
	}
	return out
}

// timestamps returns, for a strategy with on_bars, where each of bars'
// timestamps starts, then bars.Len(), and the number of bars of each
// (callLedger.starts and the batch frame's groups); nil, nil for on_data.
// The driver never ends a batch inside a timestamp (backtest.Driver), so
// each group is the whole of its timestamp.
func (w *worker) timestamps(bars contract.Bars) ([]int, []uint32) {
	if !w.onBars {
		return nil, nil
	}
	n := bars.Len()
	starts := make([]int, 0, n/max(1, len(w.symbolIndex))+2)
	groups := w.groups[:0]
	for i := 0; i < n; {
		j := i + 1
		for j < n && bars.Time[j] == bars.Time[i] {
			j++
		}
		starts = append(starts, i)
		groups = append(groups, uint32(j-i))
		i = j
	}
	w.groups = groups
	return append(starts, n), groups
}

// checkStall fails the run when the replay has stayed at one event, without
// serving a bar, for longer than the on_execution limit (see stallDetector),
// the time credited to the debugger's prompt since the batch started
// (pausedBefore the total then) left out.
func (w *worker) checkStall(b *contract.Batch, y contract.Yield, started time.Time, pausedBefore time.Duration) error {
	d := w.stall.observe(b, y, started, time.Now(), pausedBefore, w.dog.pausedTotal())
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
	if w.play != nil {
		return nil, w.unplayed()
	}
	if w.ahead != nil {
		w.proc.Kill()
		return nil, errors.New("engine: on_finish asked for while a batch sent ahead is unanswered")
	}
	if !w.hooks[contract.HookOnFinish] {
		return nil, nil
	}
	call := w.calls.startFinish()
	frame, err := python.AppendJSON(w.ch.buf[:0], python.TypeFinish, python.FinishMsg{Call: call})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	f, err := w.request(ctx, frame, request{kind: requestFinish, sent: now, deadline: now.Add(w.limits.OnFinish + requestSlack),
		limit: w.limits.OnFinish, calls: w.calls, barsBefore: w.stats.bars})
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
		w.stats.add(contract.HookOnFinish, msg.DurationNS, -1, 0)
		// Orders placed in on_finish never reach the market.
		w.pending.drop()
		w.stats.publish(time.Now())
		return msg.Metadata, nil
	case python.TypeError:
		return nil, w.exception(f.Payload)
	}
	return nil, w.fail(w.protocolFailure(fmt.Errorf("unexpected %q frame during on_finish", f.Type)))
}

// request sends frame (if any) and waits for the worker's answer while the
// watchdog enforces r's deadline: a worker that stops reading its requests
// stalls like one that stops answering, and is killed for it. Command
// frames that arrive meanwhile are collected for the yield; the first other
// frame is the answer.
func (w *worker) request(ctx context.Context, frame []byte, r request) (python.Frame, error) {
	w.dog.arm(r)
	_, err := w.ch.requests.Write(frame)
	return w.await(ctx, err)
}

// await waits for the answer to the request in flight, which the watchdog
// is armed with, unless sending it failed with err.
func (w *worker) await(ctx context.Context, err error) (python.Frame, error) {
	var f python.Frame
	for err == nil {
		if f, err = w.ch.reader.Next(); err != nil || f.Type != python.TypeCommand {
			break
		}
		if w.pending.len() == 0 {
			// The worker sends commands inline only once the command pipe
			// is full: the pipe's come first.
			if err = w.ch.commands.drain(w.limits.MessageBytes, w.takeCommand); err != nil {
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

// takeCommand decodes a command frame and keeps it for the yield.
func (w *worker) takeCommand(f python.Frame) error {
	c, err := python.DecodeCommand(f.Payload)
	if err != nil {
		return err
	}
	return w.pending.add(contract.Command{Op: commandOps[c.Op], OrderID: c.ID, Symbol: c.Symbol, Qty: c.Qty, Limit: c.Limit},
		c.Call, f.Size(), w.limits.MessageBytes)
}

// close ends the worker: a quit request, a short grace period, then the
// whole tree is killed. It returns the supervisor's result.
func (w *worker) close() supervisor.Result {
	if f := w.dog.faulted(); f != nil && w.failure == nil {
		// A bad frame on the debugger's pipe between two requests: the
		// tree was killed for it, and no request saw it end.
		w.fail(f)
	}
	if w.failure == nil && w.ahead == nil {
		// What the run leaves before it ends (a thread leaked at every
		// bar) is a limit broken: sampled once more while the program
		// still lives, not after it exited.
		w.proc.Check()
		// Five bytes into a pipe the worker has drained: this cannot block.
		w.ch.requests.Write(python.AppendQuit(nil))
		select {
		case <-w.proc.Done():
		case <-time.After(2 * time.Second):
		}
	}
	w.dog.stop()
	w.proc.Kill()
	res := w.proc.Wait()
	w.ch.close()
	if w.debug != nil {
		w.debug.close()
	}
	return res
}

// pendingCommands are the commands the worker sent during the request in
// flight: they belong to the call it yields after, and are committed only
// then, or (local fills) to calls before it whose orders the worker filled
// itself, one each. The commands of one call may not take more room than
// one protocol message, nor may those of the calls before it: the host
// holds them until the yield.
type pendingCommands struct {
	list    []pendingCommand
	bytes   int // the size as frames of those of the last call
	earlier int // of those of the calls before it
}

// pendingCommand is a command and the call that issued it, as the worker
// says.
type pendingCommand struct {
	cmd  contract.Command
	call uint64
}

func (p *pendingCommands) len() int { return len(p.list) }

// add keeps a command of call, of size bytes (as its frame announced it).
func (p *pendingCommands) add(c contract.Command, call uint64, size, max int) error {
	if n := len(p.list); n > 0 && p.list[n-1].call != call {
		p.earlier, p.bytes = p.earlier+p.bytes, 0
		if p.earlier > max {
			return &python.ProtocolError{Msg: fmt.Sprintf("the commands of the orders the worker filled itself exceed the %s message limit", units.Bytes(int64(max)))}
		}
	}
	p.bytes += size
	if p.bytes > max {
		return &python.ProtocolError{Msg: fmt.Sprintf("the commands of one hook call exceed the %s message limit", units.Bytes(int64(max)))}
	}
	p.list = append(p.list, pendingCommand{cmd: c, call: call})
	return nil
}

// commit hands the commands to the driver as issued by hook.
func (p *pendingCommands) commit(hook contract.Hook) []contract.Command {
	out := make([]contract.Command, len(p.list))
	for i, c := range p.list {
		c.cmd.Hook = hook
		out[i] = c.cmd
	}
	p.drop()
	return out
}

// drop forgets the commands and returns how many there were.
func (p *pendingCommands) drop() int {
	n := len(p.list)
	p.list, p.bytes, p.earlier = p.list[:0], 0, 0
	return n
}

// heldBars are the events [from, to): bars the worker received and has not
// served yet (a batch it left early to yield). A batch that starts with
// them does not send them again.
type heldBars struct{ from, to int }

// resumable returns how many of b's bars the worker holds already.
func (h heldBars) resumable(b *contract.Batch) int {
	if b.FirstEvent == h.from && h.to > h.from {
		return min(b.Bars.Len(), h.to-h.from)
	}
	return 0
}

// served records that the worker served the first bars of b; it now holds
// the rest (and, when b resumed held bars, the held bars beyond b).
func (h *heldBars) served(b *contract.Batch, bars int, resumed bool) {
	end := b.FirstEvent + b.Bars.Len()
	if !resumed || end > h.to {
		h.to = end
	}
	h.from = b.FirstEvent + bars
}

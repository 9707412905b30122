package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"stratbench/contract"
	"stratbench/job"
	"stratbench/python"
)

// watchInterval is how often the watchdog looks at a request in flight: the
// resolution of deadlines (a limit of seconds is enforced within 20 ms) and
// of the progress it publishes. Each look wakes stratbench while the worker
// computes: at 5 ms, the wake-ups of two jobs (and the Go scheduler's
// spinning after each) cost more host CPU than their sampling, on CPUs the
// workers need (bench/sweep_bench.py scaling).
const watchInterval = 20 * time.Millisecond

// batchBudget is how long after a batch arrives the bridge may still start
// calls of it; after that it yields once the call in flight returns, but
// when that call placed an order whose fill the bridge delivers itself:
// the fill's calls (its on_execution, or its bar's on_data) may start up
// to a quarter of a budget later (python/bridge.py, _run_bars_one_symbol).
// requestSlack is what the host adds to a hook's limit for a request: more
// than a budget and a quarter, so that the call the bridge started last
// always gets its whole limit, with 37.5 ms left for the batch to reach
// the worker; on_finish, which starts as soon as its request arrives, too.
// A worker that ignores the budget (or forges its clock) gets no more than
// limit + slack for the request.
const (
	batchBudget  = 50 * time.Millisecond
	requestSlack = 100 * time.Millisecond
)

// requestKind says what a request asks of the worker.
type requestKind uint8

const (
	requestStartup requestKind = iota + 1 // the manifest and init: one deadline from the worker's start
	requestBatch                          // executions and bars
	requestFinish                         // on_finish
)

// request is what the watchdog knows of a request in flight: a snapshot,
// taken when it was sent, that the worker does not touch until the answer
// came back.
type request struct {
	kind       requestKind
	sent       time.Time
	deadline   time.Time // on the host's clock
	limit      time.Duration
	calls      callLedger // a copy: which hook and event each call is
	barsBefore int        // bars the run had served before this request, for progress
	// held says that the host does its own work before it reads the
	// answer (a batch sent ahead while it plays out the answer before
	// it): the deadline does not pass until it waits (watchdog.wait).
	held bool
}

// watchdog enforces the deadline of the request in flight while the
// worker's goroutine is blocked writing the request or reading the answer.
// Deadlines are the host's own observations: when the request was sent and
// when its answer arrived. The worker's clock word only names, in the
// failure, the call that was running; it is latched once the bridge may no
// longer start calls of a batch, so a worker that moves it later shifts
// nothing.
type watchdog struct {
	state *python.StatePage
	meter progressMeter // publishes the bars a batch in flight has served, as the clock claims

	quit, done chan struct{} // stop and run's end

	mu        sync.Mutex
	req       *request // non-nil while armed
	latched   bool
	clock     uint64            // the clock latched for blame
	local     uint64            // the local word latched with it (python.StatePage.Local)
	failure   *contract.Failure // why the watchdog killed the tree
	cancelled bool              // the job's context was cancelled: the tree was killed
	progress  time.Time         // the last progress published

	// The call seen running, and since when (the host's clock): for the
	// running time shown while a call takes long.
	runCall  uint64
	runSince time.Time
	last     *request // the last request armed: what a fault between requests blames

	// The debugger's pause (debug.go): granted by the debug session while
	// the workbench waits at a prompt; credited tick by tick while the
	// interpreter uses (almost) no CPU (pauseTick).
	idle       time.Duration                // how long a pause may last before the run ends (Limits.DebugIdle)
	cpu        func() (time.Duration, bool) // the interpreter's CPU time (processCPU); false: not measurable
	pausing    bool                         // a pause is granted
	pauseSince time.Time                    // since when
	pauseTick  time.Time                    // credited up to here
	pauseCPU   time.Duration                // the CPU time at pauseTick
	cpuOK      bool                         // pauseCPU was measured
	paused     time.Duration                // credited in all: startup's deadline and the stall detector take it off
}

// showRunningAfter is how long a call runs before progress says so.
const showRunningAfter = 250 * time.Millisecond

func newWatchdog(state *python.StatePage, meter progressMeter) *watchdog {
	return &watchdog{state: state, meter: meter, quit: make(chan struct{}), done: make(chan struct{})}
}

// pauseCPUShare is the share of a pause's wall time the interpreter may
// spend on a CPU for that time to be credited: a process blocked reading
// its prompt uses none.
const pauseCPUShare = 4 // a quarter

// pauseStart starts crediting the request in flight (and those after it)
// the time that passes: the workbench waits at a prompt.
func (d *watchdog) pauseStart(now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pausing {
		return
	}
	d.pausing, d.pauseSince, d.pauseTick = true, now, now
	d.pauseCPU, d.cpuOK = d.cpuTime()
}

// pauseEnd ends the pause, crediting its last stretch.
func (d *watchdog) pauseEnd(now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.pausing {
		return
	}
	d.pauseTickLocked(now)
	d.pausing = false
}

// pausedTotal returns the time credited to pauses so far.
func (d *watchdog) pausedTotal() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.paused
}

func (d *watchdog) cpuTime() (time.Duration, bool) {
	if d.cpu == nil {
		return 0, false
	}
	return d.cpu()
}

// pauseTickLocked credits the time since the last tick of the pause, when
// the interpreter used at most 1/pauseCPUShare of it on a CPU (or its CPU
// time cannot be read): the request's deadline, and the running call's
// start, move on by it. d.mu is held.
func (d *watchdog) pauseTickLocked(now time.Time) {
	stretch := now.Sub(d.pauseTick)
	if stretch <= 0 {
		return
	}
	cpu, ok := d.cpuTime()
	if !ok || !d.cpuOK || (cpu-d.pauseCPU)*pauseCPUShare <= stretch {
		d.paused += stretch
		d.runSince = d.runSince.Add(stretch)
		if d.req != nil {
			d.req.deadline = d.req.deadline.Add(stretch)
		}
	}
	d.pauseTick, d.pauseCPU, d.cpuOK = now, cpu, ok
}

// where returns the hook in flight and its event, as the request and the
// worker's clock name them; -1 when no event applies, "" between requests.
func (d *watchdog) where() (contract.Hook, int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.req == nil {
		return "", -1
	}
	hook, event, _ := d.blame(d.req)
	return hook, event
}

// blame returns the hook, event and event time the request r is about, as
// the worker's clock names the call. d.mu is held.
func (d *watchdog) blame(r *request) (contract.Hook, int, int64) {
	switch r.kind {
	case requestStartup:
		return contract.HookStartup, -1, 0
	case requestFinish:
		return contract.HookOnFinish, -1, 0
	}
	clock := d.clock
	if !d.latched {
		clock = d.state.Clock()
	}
	call, _ := r.calls.claimed(clock)
	return r.calls.locate(call)
}

// fault records a failure the host found outside the protocol's stream (a
// bad frame on the debugger's pipe), blamed on the request in flight or
// the last one, unless the watchdog already failed the run. The caller
// kills the tree; the worker's goroutine finds the failure when its
// request ends (disarm), or when the worker is closed (faulted).
func (d *watchdog) fault(kind contract.FailureKind, msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failure != nil {
		return
	}
	r := d.req
	if r == nil {
		r = d.last
	}
	hook, event, at := contract.HookStartup, -1, int64(0)
	if r != nil {
		hook, event, at = d.blame(r)
	}
	d.failure = newFailure(kind, hook, event, at, msg)
}

// faulted returns the failure the watchdog recorded, if any.
func (d *watchdog) faulted() *contract.Failure {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.failure
}

// run checks the request in flight every watchInterval and calls kill (the
// tree's) when its deadline passed; it also kills the tree when the job's
// context is cancelled. It returns when stop is called.
// Before a kill for a timeout it calls dump, which asks the worker for its
// stack within a short grace.
func (d *watchdog) run(ctx context.Context, kill, dump func()) {
	defer close(d.done)
	tick := time.NewTicker(watchInterval)
	defer tick.Stop()
	for {
		select {
		case <-d.quit:
			return
		case <-ctx.Done():
			d.cancel()
			kill()
			return
		case now := <-tick.C:
			if f := d.check(now); f != nil {
				dump()
				kill() // the worker's blocked read ends with the stream
			}
		}
	}
}

// stop ends run and waits for it.
func (d *watchdog) stop() {
	close(d.quit)
	<-d.done
}

// arm starts watching r.
func (d *watchdog) arm(r request) {
	d.mu.Lock()
	d.req, d.latched, d.last = &r, false, &r
	d.mu.Unlock()
}

// hold keeps the deadline of the request in flight from passing until
// wait: the host does its own work before it reads the answer.
func (d *watchdog) hold() {
	d.mu.Lock()
	if d.req != nil {
		d.req.held = true
	}
	d.mu.Unlock()
}

// wait lets the deadline of the request in flight pass again, at now +
// grace at the soonest: an answer that came while the host held it is
// read within grace.
func (d *watchdog) wait(now time.Time, grace time.Duration) {
	d.mu.Lock()
	if r := d.req; r != nil && r.held {
		r.held = false
		r.deadline = later(r.deadline, now.Add(grace))
	}
	d.mu.Unlock()
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// disarm stops watching and returns why the watchdog killed the tree, if it did.
func (d *watchdog) disarm() (failure *contract.Failure, cancelled bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.req = nil
	return d.failure, d.cancelled
}

// isCancelled reports whether the watchdog killed the tree because the
// job's context was cancelled.
func (d *watchdog) isCancelled() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cancelled
}

// cancel records that the job's context was cancelled.
func (d *watchdog) cancel() {
	d.mu.Lock()
	d.cancelled = true
	d.mu.Unlock()
}

// check looks at the request in flight at now and returns a failure when
// its deadline has passed (once).
func (d *watchdog) check(now time.Time) *contract.Failure {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.req
	if r == nil || d.failure != nil {
		return nil
	}
	if d.pausing {
		d.pauseTickLocked(now)
		if d.idle > 0 && now.Sub(d.pauseSince) >= d.idle {
			hook, event, at := d.blame(r)
			d.failure = newFailure(contract.KindTimeout, hook, event, at, fmt.Sprintf(
				"the debugger's prompt waited %s without a command: a debugging session left at the prompt ends the run "+
					"(the idle limit; the hook's time limit is paused only while a person is at the prompt)", d.idle))
			return d.failure
		}
	}
	switch r.kind {
	case requestBatch:
		clock := d.state.Clock()
		if !d.latched && now.Sub(r.sent) >= requestSlack {
			// The bridge starts no call of the batch after batchBudget: the
			// call running now is the one a timeout is about.
			d.latched, d.clock, d.local = true, clock, d.state.Local()
		}
		if now.Sub(d.progress) >= progressInterval {
			// Published under d.mu: the worker, which disarms under it too,
			// publishes its own count only after this one.
			d.progress = now
			d.meter.progressRunning(r.barsBefore+r.calls.doneBars(clock), now, d.running(r, clock, now))
		}
	case requestFinish, requestStartup:
		if now.Sub(d.progress) >= progressInterval && now.Sub(r.sent) >= showRunningAfter {
			d.progress = now
			hook := contract.HookOnFinish
			if r.kind == requestStartup {
				hook = contract.HookStartup
			}
			d.meter.progressRunning(r.barsBefore, now, &job.RunningCall{Hook: hook, EventIndex: -1, Elapsed: now.Sub(r.sent), Limit: r.limit})
		}
	}
	if r.held || now.Before(r.deadline) {
		return nil
	}
	d.failure = d.timeout(r, now)
	return d.failure
}

// running returns the call of a batch that has been running for a while,
// as the worker's clock names it, timed on the host's clock from when the
// watchdog first saw it run; nil when none has.
func (d *watchdog) running(r *request, clock uint64, now time.Time) *job.RunningCall {
	call, running := r.calls.claimed(clock)
	if !running {
		d.runCall = 0
		return nil
	}
	if call != d.runCall {
		d.runCall, d.runSince = call, now
	}
	if now.Sub(d.runSince) < showRunningAfter {
		return nil
	}
	hook, event, _ := r.calls.locateClaimed(call, d.state.Local())
	return &job.RunningCall{Hook: hook, EventIndex: event, Elapsed: now.Sub(d.runSince), Limit: r.limit}
}

// timeout describes a request that ran past its deadline.
func (d *watchdog) timeout(r *request, now time.Time) *contract.Failure {
	switch r.kind {
	case requestStartup:
		return newFailure(contract.KindTimeout, contract.HookStartup, -1, 0,
			fmt.Sprintf("startup (importing the strategy) took longer than the %s limit", r.limit))
	case requestFinish:
		return newFailure(contract.KindTimeout, contract.HookOnFinish, -1, 0,
			fmt.Sprintf("on_finish did not return within the %s limit", r.limit))
	}
	clock, local := d.clock, d.local
	if !d.latched {
		clock, local = d.state.Clock(), d.state.Local()
	}
	call, running := r.calls.claimed(clock)
	hook, event, at := r.calls.locateClaimed(call, local)
	if !running {
		return newFailure(contract.KindTimeout, hook, event, at,
			fmt.Sprintf("worker stalled between hook calls for more than %s", r.limit))
	}
	return newFailure(contract.KindTimeout, hook, event, at, fmt.Sprintf("%s did not return within the %s limit", hook, r.limit))
}

// stallDetector measures, on the host's clock, how long the replay stays at
// one event without serving a bar: on_execution answering every execution
// with an order that comes back at once (a retry of a rejected order) would
// otherwise hold it there forever, each call well within its limit. Time at
// one event counts from the first batch there that served no bar, whatever
// the executions and commands do.
type stallDetector struct {
	active   bool
	event    int
	since    time.Time
	pausedAt time.Duration // the debugger's credited time at since
}

// observe takes in a batch that started at started and how far it got, and
// returns how long the replay has stayed at the batch's event, or zero
// when it moved on. pausedAtStart and pausedNow are the time credited to the
// debugger's prompt (watchdog.pausedTotal) when the batch started and now:
// what passed at the prompt in between does not count.
func (s *stallDetector) observe(b *contract.Batch, y contract.Yield, started, now time.Time, pausedAtStart, pausedNow time.Duration) time.Duration {
	if y.Bars > 0 || y.Stopped {
		s.active = false
		return 0
	}
	if !s.active || s.event != b.FirstEvent {
		s.active, s.event, s.since, s.pausedAt = true, b.FirstEvent, started, pausedAtStart
	}
	return now.Sub(s.since) - (pausedNow - s.pausedAt)
}

package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/contract"
	"stratbench/python"
	"stratbench/sandbox"
	"stratbench/supervisor"
)

// This file turns whatever ends a worker into the run's failure: a broken
// protocol stream, an error frame, a bad frame, a limit the supervisor
// enforced. Nothing the worker writes decides the kind of a failure alone:
// the host's own observations do (the stream's end, the supervisor's
// result), and the worker's clock only names the call.

// currentHook is the hook the worker was in (or about to enter) when
// something went wrong, as its clock claims.
func (w *worker) currentHook() (contract.Hook, int, int64) {
	if !w.ready {
		return contract.HookStartup, -1, 0
	}
	clock, local := w.page()
	call, _ := w.calls.claimed(clock)
	return w.calls.locateClaimed(call, local)
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
	case <-w.proc.Ending():
		// The supervisor is ending the tree (over a limit, say; the
		// program died first): its result says why, once the kill is
		// complete, which for gigabytes takes the kernel more than a
		// second on a loaded machine.
	case <-time.After(time.Second):
		return w.fail(newFailure(contract.KindProtocol, hook, event, at, "worker closed the protocol channel"))
	}
	res := w.proc.Wait()
	if v := res.Violation; v != nil {
		return w.fail(violationFailure(v, hook, event, at))
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
	if res.TemplateLost {
		// What the host saw end (the template's process), not what the
		// run says: nothing in a run reaches its template, whose PID
		// namespace lies above the run's.
		w.lostWithTemplate = true
		msg = fmt.Sprintf("the warm template this run was forked from ended during %s, and the run was killed with it: "+
			"not the run's own failure", hook)
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
		hook, event, at = w.calls.locateClaimed(e.Call, w.ch.state.Local())
	}
	if hook != e.Hook {
		return w.fail(w.protocolFailure(fmt.Errorf("error reported for %s, call %d is %s", e.Hook, e.Call, hook)))
	}
	if len(e.Durations) > 0 {
		if w.calls.batch == nil || uint64(len(e.Durations)) != e.Call-w.calls.first {
			return w.fail(w.protocolFailure(fmt.Errorf("error for call %d with %d durations", e.Call, len(e.Durations))))
		}
		w.calls.recorded = e.Call - 1 // recorded below, or by the play
	}
	f := newFailure(contract.KindException, hook, event, at, e.Message)
	f.Traceback = e.Traceback
	for _, fr := range e.Frames {
		f.Frames = append(f.Frames, contract.Frame{File: fr.File, Line: fr.Line, Function: fr.Function, Source: fr.Source, User: fr.User})
	}
	err = w.fail(f)
	if w.salvage != nil {
		// The calls ran around fills the worker delivered itself: the
		// play places them.
		w.salvage.durations = e.Durations
		return err
	}
	for i, ns := range e.Durations {
		h, ev, t := w.calls.locate(w.calls.first + uint64(i))
		w.stats.add(h, ns, ev, t)
	}
	return err
}

// salvage is what a failure leaves of a batch request whose worker
// delivered fills itself before the failed call: the orders of those
// fills, which took effect, and the durations the worker said.
type salvage struct {
	orders    []localOrder
	durations []uint64
	failed    uint64 // the failed call, as the worker's clock names it
}

// salvageOrders takes the commands of the batch request in flight that
// calls before the failed one issued (the clock names it) as orders whose
// fills the worker delivered itself: it went on past them. Each must be a
// market order, its call's only command; otherwise nothing is kept. The
// worker is dead: its command pipe holds all it sent.
func (w *worker) salvageOrders() {
	if err := w.ch.commands.drain(w.limits.MessageBytes, w.takeCommand); err != nil {
		return
	}
	clock, _ := w.page()
	failed, _ := w.calls.claimed(clock)
	var orders []localOrder
	prev := w.calls.first - 1
	for _, c := range w.pending.list {
		if c.call >= failed {
			break
		}
		if c.call <= prev || c.cmd.Limit != nil || c.cmd.Op == contract.OpCancel {
			return
		}
		orders = append(orders, localOrder{call: c.call, cmd: c.cmd})
		prev = c.call
	}
	if len(orders) == 0 {
		return
	}
	w.pending.list = w.pending.list[len(orders):]
	w.salvage = &salvage{orders: orders, failed: failed}
}

// protocolFailure blames a bad frame on the call in flight, or, between
// calls, on the call that just returned: that is what wrote it (as far as
// the worker's clock tells).
func (w *worker) protocolFailure(err error) *contract.Failure {
	hook, event, at := w.currentHook()
	if c, local := w.page(); w.ready && c%2 == 0 && c/2 >= 1 && w.calls.inFlight(c/2) {
		hook, event, at = w.calls.locateClaimed(c/2, local)
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

// violationFailure is the failure of a limit the supervisor found broken,
// detected during hook (at event, when there is one).
func violationFailure(v *supervisor.Violation, hook contract.Hook, event int, at int64) *contract.Failure {
	kind := contract.KindMemory
	if v.Kind == supervisor.ViolationProcesses {
		kind = contract.KindProcesses
	}
	return newFailure(kind, hook, event, at, v.Message)
}

// fail records the first failure, kills the tree and returns the failure.
func (w *worker) fail(f *contract.Failure) error {
	first := w.failure == nil
	if first {
		w.failure = f
		w.stats.failed(f.Hook)
	}
	w.proc.Kill()
	if first {
		if w.local && w.play == nil && w.calls.batch != nil && f.Kind != contract.KindProtocol {
			// The orders of the calls before the failed one whose fills
			// the worker delivered itself took effect: the run plays
			// them out (Run), as the yields it would have had.
			w.salvageOrders()
		}
		if w.salvage == nil {
			w.countUntimed()
		}
		// The commands the failed call sent never took effect. They are
		// those the host holds and those still in the command pipe, which
		// the dead worker cannot add to any more; but once a batch was sent
		// ahead, the pipe holds that batch's, whose calls are not the run's.
		w.discarded += w.pending.drop()
		if w.ahead == nil {
			w.ch.commands.drain(w.limits.MessageBytes, func(python.Frame) error { w.discarded++; return nil })
		}
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
	clock, _ := w.page()
	done := min(clock/2, l.last) // calls that returned, as the clock claims
	for call := max(l.recorded+1, l.first); call <= done; call++ {
		hook, _, _ := l.locate(call)
		w.stats.untimed(hook)
	}
	l.recorded = max(l.recorded, done)
}

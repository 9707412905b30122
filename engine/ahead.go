package engine

import (
	"context"
	"fmt"
	"time"

	"stratbench/contract"
	"stratbench/python"
)

// Batches sent ahead (docs/ARCHITECTURE.md, "The protocol").
//
// When an answer leaves the market nothing to decide before the bars that
// follow (no command but orders whose fills the worker delivered itself,
// no stop, no failure), the driver's next batch is already known: the rest
// of the bars the worker holds, or the driver's contract.Batch.Ahead. The
// worker is sent it at once, before the host plays the answer out to the
// driver, so that the host's work on one answer overlaps the worker's on
// the next batch instead of taking turns with it. Nothing the worker says
// chooses the bars: they are the driver's, and the driver's next batch
// must be them (contract.Yield.Ahead, checked on both sides). A worker
// whose answer turns out false as it is played out (a forged fill) fails
// the run as before; the batch it was sent ahead is then never asked for.
//
// Until the driver asks for that batch, nothing of it is the run's: the
// worker moves the shared page's words on and fills the command pipe for
// its calls while the host still plays out the answer before it, so the
// host takes the words as the answer left them (worker.page) and leaves
// the pipe alone (worker.fail); and the watchdog holds the batch's
// deadline while the host does its own work, which is not the worker's
// time (watchdog.hold, wait).

// aheadRequest is a batch request sent before the driver asked for it.
type aheadRequest struct {
	// batch is the watchdog's view of it: its first event and its bars'
	// times, copied (the driver's bars may move once the driver holds
	// more: data.Stream.Fill).
	batch        contract.Batch
	call         uint64 // its first call
	resumed      int    // bars the worker held already
	started      time.Time
	pausedBefore time.Duration
	err          error // from sending it
	// clock and local are the shared page's words as the answer before
	// it left them (python.StatePage.Clock, Local): see worker.page.
	clock, local uint64
}

// sendAhead sends the worker, as its next batch, what follows the first
// ran bars of b, whose answer ended with call through, when that answer
// left the market nothing to decide: the rest of b's bars, which the
// worker holds, then b.Ahead when the rest is shorter than what it ran
// (b.Ahead alone when it ran them all). barsBefore are the bars
// the run will have served before it. It returns the batch's length, 0
// when none was sent.
func (w *worker) sendAhead(b *contract.Batch, ran int, through uint64, barsBefore int) int {
	if w.debug != nil || w.onBars || w.failure != nil || w.stopping.Load() || w.ahead != nil {
		// The debugger's pause and a stop act between requests.
		return 0
	}
	if b.Ahead.Len() == 0 {
		// The driver offers a next batch only when the market had
		// nothing to decide after b's bars when it made b.
		return 0
	}
	// The worker holds the bars of b it did not run (rest). When they are
	// fewer than it just ran, it would be through them before the host is
	// through playing out this answer, and then wait for the bars after
	// them: b.Ahead goes with them, in one batch (docs/ARCHITECTURE.md,
	// "Batches sent ahead"). A batch sent so holds less than half of the
	// one before and b.Ahead: at most twice the driver's longest.
	rest := b.Bars.Slice(ran, b.Bars.Len())
	next, kept := b.Ahead, rest.Len() // the batch is rest[:kept], then next
	if kept >= ran {
		next, kept = rest, 0
	}
	n := kept + next.Len()
	if n == 0 {
		return 0
	}
	a := &aheadRequest{call: through + 1, started: time.Now(), pausedBefore: w.dog.pausedTotal()}
	times := make([]int64, 0, n)
	a.batch = contract.Batch{FirstEvent: b.FirstEvent + ran, Bars: contract.Bars{Time: append(append(times, rest.Time[:kept]...), next.Time...)}}
	a.resumed = w.held.resumable(&a.batch)
	if a.resumed < kept {
		// The worker holds less of rest than it did not run: cannot
		// happen (held.served), and the batch goes the usual way.
		return 0
	}
	fresh := next.Slice(a.resumed-kept, next.Len())
	frame, err := python.AppendBatch(w.ch.buf[:0], a.call, a.resumed, nil, python.Columns{Time: fresh.Time, Symbol: fresh.Symbol,
		Open: fresh.Open, High: fresh.High, Low: fresh.Low, Close: fresh.Close, Volume: fresh.Volume}, len(w.symbolIndex))
	if err != nil {
		return 0 // the driver's bars: cannot happen, and the batch goes the usual way
	}
	w.ch.buf = frame
	calls := callLedger{next: a.call, barHook: w.calls.barHook}
	w.startBatch(&calls, &a.batch, 0, n, nil)
	w.batches++
	w.aheads++
	if kept > 0 {
		w.joined++
	}
	a.clock, a.local = w.ch.state.Clock(), w.ch.state.Local()
	w.dog.arm(request{kind: requestBatch, sent: a.started, deadline: a.started.Add(w.limits.OnData + requestSlack),
		limit: w.limits.OnData, calls: calls, barsBefore: barsBefore})
	// A worker that does not read the batch times out here, as it would
	// with the batch sent when asked for; once it has the batch, the time
	// until the host waits for the answer is the host's.
	_, a.err = w.ch.requests.Write(frame)
	w.dog.hold()
	w.ahead = a
	return n
}

// runAhead is Run for the driver's batch b after a batch was sent ahead: b
// must be that batch, and the answer to it is b's.
func (w *worker) runAhead(ctx context.Context, b *contract.Batch) (contract.Yield, error) {
	a := w.ahead
	w.ahead = nil
	n := b.Bars.Len()
	if b.FirstEvent != a.batch.FirstEvent || n != a.batch.Bars.Len() || len(b.Executions) > 0 || w.calls.next != a.call {
		// The driver checks the same (backtest.Driver.checkAhead): a bug
		// on one side, which the run does not go on past.
		w.dog.disarm()
		w.proc.Kill()
		return contract.Yield{}, fmt.Errorf("engine: the driver's batch (event %d, %d bars, %d executions, call %d) is not the one sent ahead (event %d, %d bars, call %d)",
			b.FirstEvent, n, len(b.Executions), w.calls.next, a.batch.FirstEvent, a.batch.Bars.Len(), a.call)
	}
	w.startBatch(&w.calls, b, 0, n, nil)
	// An answer that came while the host played out the one before is
	// read at once; the batch's deadline passes no sooner.
	w.dog.wait(time.Now(), requestSlack)
	f, err := w.await(ctx, a.err)
	return w.answer(b, f, err, n, a.resumed > 0, a.started, a.pausedBefore)
}

// page returns the shared page's clock and local words
// (python.StatePage), which name the worker's calls: those the state of
// the answer being played out names. Once a batch was sent ahead, the
// worker moves them on for that batch's calls while the host plays out
// the answer before it; until the driver asks for the batch, the words
// are the ones that answer left, as the host would read them had the
// batch not been sent.
func (w *worker) page() (clock, local uint64) {
	if a := w.ahead; a != nil {
		return a.clock, a.local
	}
	return w.ch.state.Clock(), w.ch.state.Local()
}

package check

import (
	"slices"
	"strings"
	"testing"

	"stratbench/job"
)

// testChecker has n events of one symbol, a minute apart, two events at
// each time from event 10 on (two symbols).
func testChecker(n int) *checker {
	c := &checker{symbols: []string{"A", "B"}}
	t := int64(0)
	for e := range n {
		sym := int32(0)
		if e >= 10 && e%2 == 1 {
			sym = 1
		} else {
			t += 60e9
		}
		c.times = append(c.times, t)
		c.syms = append(c.syms, sym)
	}
	return c
}

func order(e int, side, sym, qty, hook string, id int64) job.OrderRecord {
	return job.OrderRecord{Record: "order", Event: e, Side: side, Symbol: sym, Qty: qty, Hook: hook, OrderID: id}
}

func fill(e int, sym string, pos float64, id int64) job.OrderRecord {
	return job.OrderRecord{Record: "execution", Status: "filled", Event: e, Symbol: sym, Position: pos, OrderID: id}
}

// TestCommandsLeaveOnFinishOut: on_finish's commands are no event's; a
// difference in quantity is one in the exact commands, not in decisions.
func TestCommandsLeaveOnFinishOut(t *testing.T) {
	a := commandsByEvent([]job.OrderRecord{order(3, "buy", "A", "10", "on_data", 1), order(9, "sell", "A", "10", "on_finish", 2)})
	b := commandsByEvent([]job.OrderRecord{order(3, "buy", "A", "12", "on_data", 1)})
	if len(a) != 1 || firstDifference(a, b, 9) != 3 || firstDifference(a, b, 2) != -1 {
		t.Fatalf("%v / %v: first difference %d", a, b, firstDifference(a, b, 9))
	}
	if !slices.Equal(decisions(a[3]), decisions(b[3])) || differingHook(a[3], b[3], exacts) != "on_data" {
		t.Errorf("decisions %v %v", decisions(a[3]), decisions(b[3]))
	}
}

// TestCutEvents: up to MaxCutEvents events with an order, spread over them,
// and as many without, each the last of its time.
func TestCutEvents(t *testing.T) {
	c := testChecker(1000)
	var recs []job.OrderRecord
	for e := 20; e < 1000; e += 40 {
		recs = append(recs, order(e, "buy", "A", "1", "on_data", int64(e)))
	}
	cuts := c.cutEvents(ran{records: recs})
	if len(cuts) != 2*MaxCutEvents || !slices.IsSorted(cuts) {
		t.Fatalf("cuts %v", cuts)
	}
	cmds := commandsByEvent(recs)
	with := 0
	for _, e := range cuts {
		if c.lastAt(e) != e {
			t.Errorf("event %d is not the last of its time", e)
		}
		if len(cmds[c.firstAt(e)]) > 0 || len(cmds[e]) > 0 {
			with++
		}
	}
	if with != MaxCutEvents {
		t.Errorf("%d cuts at an order, want %d: %v", with, MaxCutEvents, cuts)
	}
	// Fewer orders: as many events without.
	if cuts := c.cutEvents(ran{records: recs[:3]}); len(cuts) != 6 {
		t.Errorf("three orders: cuts %v", cuts)
	}
}

// TestWarmUp: decisions are compared where both runs hold the same signs
// only; a difference within the history is warm-up, after it a finding;
// differences to the end are path dependence.
func TestWarmUp(t *testing.T) {
	c := testChecker(200)
	full := ran{history: 5, records: []job.OrderRecord{
		order(100, "buy", "A", "10", "on_data", 1), fill(102, "A", 10, 1),
		order(150, "sell", "A", "10", "on_data", 2), fill(152, "A", 0, 2),
		order(170, "buy", "A", "10", "on_data", 3), fill(172, "A", 10, 3),
	}}
	// A replay from event 90 that makes the same decisions with other
	// quantities, and one more while the full run is long (not compared).
	same := ran{records: []job.OrderRecord{
		order(10, "buy", "A", "7", "on_data", 1), fill(12, "A", 7, 1),
		order(30, "buy", "B", "3", "on_data", 2),
		order(60, "sell", "A", "7", "on_data", 3), fill(62, "A", 0, 3),
		order(80, "buy", "A", "8", "on_data", 4), fill(82, "A", 8, 4),
	}}
	// Event 120 is replay event 30: the replay buys B there while both
	// hold A, and the full run does nothing.
	if r := c.warmUp(full, []int{90}, []ran{same}); r.Status != Found || r.Finding.Event != 120 {
		t.Fatalf("a difference at event 120, long after the history: %s %q %+v", r.Status, r.Summary, r.Finding)
	}
	same.records = slices.Delete(same.records, 2, 3)
	if r := c.warmUp(full, []int{90}, []ran{same}); r.Status != Clean {
		t.Fatalf("the same decisions: %s %q %+v", r.Status, r.Summary, r.Finding)
	}
	// A replay that decides otherwise within its first bars only.
	early := ran{records: append([]job.OrderRecord{order(1, "sell", "A", "1", "on_data", 9),
		{Record: "execution", Status: "rejected", Event: 2, OrderID: 9, Symbol: "A"}}, same.records...)}
	if r := c.warmUp(full, []int{90}, []ran{early}); r.Status != Clean {
		t.Fatalf("a difference within the history: %s %q", r.Status, r.Summary)
	}
	// Decisions that differ to the end: the replay never buys.
	never := ran{records: nil}
	r := c.warmUp(full, []int{90}, []ran{never})
	if r.Status != Found || !strings.Contains(r.Summary, "path dependence") || r.Finding.Event != 170 ||
		r.Finding.Run[0] != "on_data: buy A" || r.Finding.Replay[0] != "(none)" || r.Finding.Hook != "on_data" {
		t.Fatalf("never agreeing: %s %q %+v", r.Status, r.Summary, r.Finding)
	}
}

// TestWarmUpComparesTheSameBook: a run waiting on an order does not decide
// as one that is not, nor as one whose order was placed at another event
// (limit_cross.py cancels an order after a few bars); an order cancelled by
// a hook is working during that hook.
func TestWarmUpComparesTheSameBook(t *testing.T) {
	c := testChecker(200)
	limit := func(e int, side string, id int64) job.OrderRecord {
		o := order(e, side, "A", "10", "on_data", id)
		o.Limit = "100"
		return o
	}
	cancel := func(e int, id int64) []job.OrderRecord {
		return []job.OrderRecord{{Record: "cancel", Event: e, OrderID: id, Hook: "on_data"},
			{Record: "execution", Status: "canceled", Event: e, OrderID: id, Symbol: "A"}}
	}
	// The full run bids at 110 and cancels at 120. The replay from 90
	// bids at 92 (within the history), cancels at 102, then bids at 110
	// and cancels at 120 as the full run does: at 102 it waits on an order
	// the full run does not have, and is not compared there.
	full := ran{history: 5, records: append([]job.OrderRecord{limit(110, "buy", 1)}, cancel(120, 1)...)}
	replay := ran{records: slices.Concat([]job.OrderRecord{limit(2, "buy", 1)}, cancel(12, 1), []job.OrderRecord{limit(20, "buy", 2)}, cancel(30, 2))}
	if r := c.warmUp(full, []int{90}, []ran{replay}); r.Status != Clean {
		t.Fatalf("an order placed at another event: %s %q %+v", r.Status, r.Summary, r.Finding)
	}
	// The same book (an order placed at 100 in both), other decisions at
	// its cancel: a finding.
	full = ran{history: 5, records: append([]job.OrderRecord{limit(100, "buy", 1)}, cancel(105, 1)...)}
	replay = ran{records: append([]job.OrderRecord{limit(10, "buy", 1)}, cancel(17, 1)...)}
	if r := c.warmUp(full, []int{90}, []ran{replay}); r.Status != Found || r.Finding.Event != 105 {
		t.Fatalf("the same order, cancelled at another event: %s %q %+v", r.Status, r.Summary, r.Finding)
	}
	b := newBook(full.records)
	// In event order: book.at moves forward only (a map's order is random).
	for _, c := range []struct{ e, want int }{{100, 0}, {101, 1}, {105, 1}, {106, 0}} {
		e, want := c.e, c.want
		if _, open := b.at(e); len(open) != want {
			t.Errorf("event %d: working %v, want %d", e, open, want)
		}
	}
}

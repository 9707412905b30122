package engine

import (
	"context"
	"encoding/json"
	"testing"

	"stratbench/backtest"
	"stratbench/contract"
	"stratbench/data"
	"stratbench/job"
)

// noAhead is a backtest driver that offers the worker no next batch: the
// worker is sent each batch only when the driver asks for it, as before
// batches were sent ahead.
type noAhead struct{ *backtest.Driver }

func (d noAhead) Drive(ctx context.Context, w contract.Worker, rec contract.Records) error {
	return d.Driver.Drive(ctx, aheadless{w}, rec)
}

// aheadless hides the next batch a driver offers (contract.Batch.Ahead).
type aheadless struct{ contract.Worker }

func (w aheadless) Run(ctx context.Context, b *contract.Batch) (contract.Yield, error) {
	b.Ahead = contract.Bars{}
	return w.Worker.Run(ctx, b)
}

// TestAheadChangesNothing: a run whose worker is sent its next batch while
// the host plays out its last answer reports exactly what the same run
// reports when every batch waits for the driver (status, failure with its
// event, fingerprint, orders hash, metrics, hook counts, and the digest of
// everything the strategy saw): with local fills over one symbol and
// three, batches the worker leaves at its budget (busy_us), limit orders
// that stay open, orders from on_execution, and a raise and a hang inside
// a batch sent ahead. Batches are sent ahead in every case but the last
// two, where the market has orders to fill after most answers.
func TestAheadChangesNothing(t *testing.T) {
	open := func(path string) *data.Set {
		set, err := data.Open(context.Background(), []string{path}, data.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { set.Close() })
		return set
	}
	one := open(oneSymbolBars(t, 20000))
	three := open(severalSymbolsBars(t, 40000)) // about 87,000 bars: more than a batch (65,536)
	const probe = "testdata/strategies/local_fills_probe.py"
	for _, tc := range []struct {
		name, strategy string
		set            *data.Set
		params         []string
		status         job.Status
		event          int  // the failure's event, when it fails
		never          bool // orders stay open, or come from on_execution: no batch goes ahead
	}{
		{"sma", "backtest/testdata/sma_cross.py", one, nil, job.StatusPassed, 0, false},
		{"every-3", probe, one, []string{"every=3"}, job.StatusPassed, 0, false},
		{"budget", probe, one, []string{"every=5", "busy_us=20"}, job.StatusPassed, 0, false},
		{"raise", probe, one, []string{"every=5", "mode=raise", "at=15000"}, job.StatusFailed, 14999, false},
		{"hang", probe, one, []string{"every=5", "mode=hang", "at=15000"}, job.StatusFailed, 14999, false},
		{"three", probe, three, []string{"every=9", "busy_us=10"}, job.StatusPassed, 0, false},
		{"three-raise", probe, three, []string{"every=9", "mode=raise", "at=70000"}, job.StatusFailed, 69999, false},
		{"exec-orders", probe, one, []string{"every=5", "exec_orders=1"}, job.StatusPassed, 0, true},
		{"resting", "testdata/strategies/local_fills.py", one, nil, job.StatusPassed, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, none := aheadRun(t, tc.set, tc.strategy, tc.params, false, 0, nil)
			after, aheads := aheadRun(t, tc.set, tc.strategy, tc.params, true, 0, nil)
			if after.Status != tc.status {
				t.Fatalf("%s, %+v; want %s", after.Status, after.Failure, tc.status)
			}
			sameRun(t, tc.name+" (each batch when asked: cold, sent ahead: warm)", before, after)
			if f := after.Failure; tc.status == job.StatusFailed && (f.EventIndex == nil || *f.EventIndex != tc.event) {
				t.Errorf("the failure's event %v, want %d", f.EventIndex, tc.event)
			}
			t.Logf("%d batches sent ahead (%d without)", aheads, none)
			if none != 0 {
				t.Errorf("%d batches sent ahead with a driver that offers none", none)
			}
			if !tc.never && aheads == 0 {
				t.Errorf("no batch was sent ahead")
			}
		})
	}
}

// TestAheadKeepsBatchesLong: a strategy that orders every few bars, whose
// fills the worker delivers itself, and that runs longer than the bridge's
// budget per batch, so that it yields at the budget in each. The yields
// after which a batch went ahead are whole (the last of a play ends at the
// budget, not at an order: the driver's next batches stay long), and the
// bars the worker held went with the driver's next batch once they were
// fewer than it had run (joined), so that it was not sent a short batch it
// would be through before the host is through the answer before it. The
// report is the same as with no batch sent ahead.
func TestAheadKeepsBatchesLong(t *testing.T) {
	const n = 200000
	set := openBars(t, oneSymbolBars(t, n))
	params := []string{"every=20", "busy_us=5"}
	const probe = "testdata/strategies/local_fills_probe.py"
	before, _ := aheadRun(t, set, probe, params, false, 0, nil)
	var yields []contract.Yield
	after, jb := aheadJob(t, set, probe, params, func(y contract.Yield) { yields = append(yields, y) })
	sameRun(t, "each batch when asked, and sent ahead", before, after)
	t.Logf("%d bars: %d batches, %d sent ahead, %d joined; %d yields", n, jb.batches, jb.aheads, jb.joined, len(yields))
	for i, y := range yields {
		if y.Ahead > 0 && !y.Whole {
			t.Errorf("yield %d sent a batch of %d ahead but is not whole: the driver's next batches shrink", i, y.Ahead)
		}
	}
	if jb.joined == 0 {
		t.Errorf("no batch joined the bars the worker held to the driver's next")
	}
}

// TestOrderOnTheLastBarKeepsBatchesLong: a strategy that orders on every
// bar ends each batch with an order on its last bar, whose fill the worker
// cannot deliver (the next bar is not in its batch). It ran every bar it
// held all the same, so the driver's next batches stay long: a few
// batches and the budget's yields, not one round trip every 64 bars
// (20,000 bars: 250 batches without Whole on such a yield). The report is
// the same as with every batch sent when asked.
func TestOrderOnTheLastBarKeepsBatchesLong(t *testing.T) {
	const n = 20000
	set := openBars(t, oneSymbolBars(t, n))
	const strategy = "testdata/strategies/flip_every_bar.py"
	before, _ := aheadRun(t, set, strategy, nil, false, 0, nil)
	after, jb := aheadJob(t, set, strategy, nil, func(contract.Yield) {})
	sameRun(t, "each batch when asked, and sent ahead", before, after)
	if after.Status != job.StatusPassed {
		t.Fatalf("%s, %+v; want passed", after.Status, after.Failure)
	}
	t.Logf("%d bars: %d batches, %d sent ahead", n, jb.batches, jb.aheads)
	if jb.batches > n/200 {
		t.Errorf("%d batches for %d bars ordered on every bar: the driver's batches shrank", jb.batches, n)
	}
}

// TestBudgetPastAnOrder: a strategy that orders once a batch, in the call
// at which the bridge's budget passes (it ends 1 ms past the budget). The
// worker still delivers that order's fill itself (the fill and its bar
// start up to a quarter of a budget past the budget) instead of yielding
// with the order for a round trip: every such order yielded so without
// it. A call that a busy machine stalls more than that past the budget
// still yields (the bridge starts no call later): at most a few. The
// run passes: the host checked each fill the worker delivered (which
// orders a run places depends on the machine's timing here, so there is
// no second run to compare it with).
func TestBudgetPastAnOrder(t *testing.T) {
	const n = 20000
	set := openBars(t, oneSymbolBars(t, n))
	const strategy = "testdata/strategies/budget_order.py"
	stopped := 0 // yields at an order the worker did not go on past
	after, jb := aheadJob(t, set, strategy, nil, func(y contract.Yield) {
		if len(y.Commands) > 0 && !y.Whole {
			stopped++
		}
	})
	if after.Status != job.StatusPassed {
		t.Fatalf("%s, %+v; want passed", after.Status, after.Failure)
	}
	var meta struct{ Orders int }
	if err := json.Unmarshal(after.Metadata, &meta); err != nil {
		t.Fatalf("metadata %s: %v", after.Metadata, err)
	}
	t.Logf("%d bars: %d orders at the budget, %d yields at one; %d batches, %d sent ahead, %d joined",
		n, meta.Orders, stopped, jb.batches, jb.aheads, jb.joined)
	if meta.Orders < 4 {
		t.Fatalf("%d orders at the budget: the run crossed too few budgets to tell", meta.Orders)
	}
	if stopped > meta.Orders/4 {
		t.Errorf("%d of %d orders placed as the budget passed ended their batch: the worker did not deliver their fills", stopped, meta.Orders)
	}
}

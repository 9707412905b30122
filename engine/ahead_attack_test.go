package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"stratbench/backtest"
	"stratbench/contract"
	"stratbench/data"
	"stratbench/job"
)

// wrappedDriver is a driver whose worker is wrap's of the engine's.
type wrappedDriver struct {
	contract.Driver
	wrap func(contract.Worker) contract.Worker
}

func (d wrappedDriver) Drive(ctx context.Context, w contract.Worker, rec contract.Records) error {
	return d.Driver.Drive(ctx, d.wrap(w), rec)
}

// stallingWorker is a worker whose host stalls once, before it asks for
// the batch at event at, until until returns: the host is slow to play an
// answer out (its goroutine not scheduled, a records write that waits for
// the disk) while the worker runs on.
type stallingWorker struct {
	contract.Worker
	at      int
	until   func()
	stalled bool
}

func (w *stallingWorker) Run(ctx context.Context, b *contract.Batch) (contract.Yield, error) {
	if !w.stalled && b.FirstEvent == w.at {
		w.stalled = true
		w.until()
	}
	return w.Worker.Run(ctx, b)
}

// yieldsWorker hands each yield of its worker to yielded.
type yieldsWorker struct {
	contract.Worker
	yielded func(contract.Yield)
}

func (w yieldsWorker) Run(ctx context.Context, b *contract.Batch) (contract.Yield, error) {
	y, err := w.Worker.Run(ctx, b)
	if err == nil {
		w.yielded(y)
	}
	return y, err
}

// aheadRun runs strategy on set, with a driver that offers the worker its
// next batch (ahead) or not, which stalls (stallingWorker) when until is
// set; it returns the report and the number of batches sent ahead.
func aheadRun(t *testing.T, set *data.Set, strategy string, params []string, ahead bool, at int, until func()) (*job.Report, int) {
	t.Helper()
	d := newDriver(t, set)
	var drv contract.Driver = d
	if !ahead {
		drv = noAhead{d}
	}
	if until != nil {
		drv = wrappedDriver{drv, func(w contract.Worker) contract.Worker { return &stallingWorker{Worker: w, at: at, until: until} }}
	}
	rep, jb := aheadStartOn(t, drv, strategy, params)
	return rep, jb.aheads
}

// aheadJob runs strategy on set with a driver that offers the worker its
// next batch and hands each yield to yielded; it returns the report and
// the job, which counts the batches.
func aheadJob(t *testing.T, set *data.Set, strategy string, params []string, yielded func(contract.Yield)) (*job.Report, *Job) {
	t.Helper()
	drv := wrappedDriver{newDriver(t, set), func(w contract.Worker) contract.Worker { return yieldsWorker{w, yielded} }}
	return aheadStartOn(t, drv, strategy, params)
}

func newDriver(t *testing.T, set *data.Set) *backtest.Driver {
	t.Helper()
	d, err := backtest.NewDriver(set, backtest.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// aheadStartOn runs strategy with drv and waits for its end.
func aheadStartOn(t *testing.T, drv contract.Driver, strategy string, params []string) (*job.Report, *Job) {
	t.Helper()
	home := t.TempDir()
	cfg := Config{Strategy: filepath.Join("..", strategy), Python: findPython(t), Home: home, CacheDir: filepath.Join(home, "cache"),
		Limits: shortLimits(), Version: "test", Host: testHost, Params: params}
	jb, err := Start(context.Background(), cfg, drv)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := jb.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return rep, jb
}

// TestAheadForgedAnswer: a worker whose answer lies (a fill it delivered
// itself at a forged price; an order it says the on_execution call before
// it placed) and ends at the batch's budget, so that the rest of the
// batch is sent ahead, fails as it fails when no batch is sent ahead,
// also when it has run into the batch sent ahead and ordered there before
// the host's play of the answer finds the lie (the host stalls until
// then): the same failure, hook and event, the same hook counts, and no
// command discarded. That batch never becomes the run's: the commands in
// the pipe and the words on the shared page are its calls', not the
// answer's.
func TestAheadForgedAnswer(t *testing.T) {
	findPython(t)
	set, err := data.Open(context.Background(), []string{oneSymbolBars(t, 6000)}, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	const strategy = "testdata/attacks/forged_local_ahead.py"
	// The 60th order (event 60) is forged; its fill is delivered at event
	// 61, whose call ends the answer at the budget. The host's play finds
	// the lie in the batch at event 60 (forge=call) or 61 (forge=price).
	const at = 60
	for _, forge := range []struct{ name, message string }{
		{"price", "itself at price"},
		{"call", "a call of on_execution"},
	} {
		t.Run(forge.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "ordered-ahead")
			params := []string{"forge=" + forge.name, "symbol=", "at=60", "marker=" + marker}
			before, _ := aheadRun(t, set, strategy, params, false, 0, nil)
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the worker ordered in a batch it was never sent")
			}
			waited := func() {
				// Until the worker has ordered in the batch sent ahead (or it
				// never will: then the test says so below).
				for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
					if _, err := os.Stat(marker); err == nil {
						return
					}
				}
			}
			after, aheads := aheadRun(t, set, strategy, params, true, at, waited)
			if _, err := os.Stat(marker); err != nil || aheads == 0 {
				t.Fatalf("the worker never ordered in a batch sent ahead (%d sent): %v", aheads, err)
			}
			for name, r := range map[string]*job.Report{"without": before, "ahead": after} {
				if f := r.Failure; r.Status != job.StatusFailed || f.Kind != contract.KindProtocol || f.Hook != contract.HookOnData ||
					!strings.Contains(f.Message, forge.message) {
					t.Errorf("%s: %s, %+v; want a protocol failure in on_data: %s", name, r.Status, f, forge.message)
				}
			}
			if after.CommandsDiscarded != 0 {
				t.Errorf("%d commands discarded: the batch sent ahead placed them", after.CommandsDiscarded)
			}
			sameRun(t, forge.name+" (no batch ahead: cold, ahead: warm)", before, after)
		})
	}
}

// TestAheadHostStall: a host that stalls for longer than the on_data
// limit after an answer (before it asks for the next batch, which was
// sent ahead and answered at once) does not make the strategy's calls
// time out: the limit is on the worker's time, as when no batch is sent
// ahead.
func TestAheadHostStall(t *testing.T) {
	findPython(t)
	set, err := data.Open(context.Background(), []string{oneSymbolBars(t, 10000)}, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	limit := shortLimits().OnData
	stall := func() { time.Sleep(2 * limit) } // the fault: the host does nothing for twice the limit
	// The first batch is 4,096 bars: its answer gets the rest sent ahead.
	before, _ := aheadRun(t, set, "testdata/strategies/noop.py", nil, false, 4096, stall)
	after, aheads := aheadRun(t, set, "testdata/strategies/noop.py", nil, true, 4096, stall)
	if aheads == 0 {
		t.Fatal("no batch was sent ahead")
	}
	if before.Status != job.StatusPassed || after.Status != job.StatusPassed {
		t.Errorf("without a batch ahead: %s, %+v; with: %s, %+v; want both passed", before.Status, before.Failure, after.Status, after.Failure)
	}
	sameRun(t, "host stall (no batch ahead: cold, ahead: warm)", before, after)
}

package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"stratbench/backtest"
	"stratbench/contract"
	"stratbench/engine"
	"stratbench/internal/testenv"
	"stratbench/job"
	"stratbench/supervisor"
	"stratbench/watch"
)

// warmStrategy is the source of the warm-session test's strategy: leading
// imports json and, with marked, loopmark (a third-party module that
// counts its imports in a log file and holds a counter each run
// increments); it buys at the third bar and sells at the tenth, and with
// mode=memory keeps 32 MiB more at every bar.
func warmStrategy(marked bool) string {
	imports, count := "import json\n", "    count = 0\n"
	if marked {
		imports += "import loopmark\n"
		count = "    loopmark.COUNT += 1\n    count = loopmark.COUNT\n"
	}
	return imports + `
MANIFEST = {"name": "warm-session", "params": {"mode": "ok"}}
bars = 0
kept = []


def on_data(ctx, history):
    global bars
    bars += 1
    if ctx.params["mode"] == "memory":
        kept.append(b"\x01" * (32 << 20))
    if bars == 3:
        ctx.buy(ctx.symbol, 10)
    elif bars == 10:
        ctx.sell(ctx.symbol, ctx.position(ctx.symbol))


def on_finish(ctx):
` + count + `    return {"bars": bars, "count": count}
`
}

// warmConfig is the Config of a warm-session test's runs of strategy on
// interpreter py, over n one-minute bars of one symbol (a CSV of their
// own), with a host and a job store of their own.
func warmConfig(t *testing.T, py, strategy string, n int) Config {
	t.Helper()
	var bars strings.Builder
	bars.WriteString("timestamp,symbol,open,high,low,close,volume\n")
	for i := range n {
		fmt.Fprintf(&bars, "%d,X,%d,108,99,%d,1\n", 1_700_000_000+60*i, 100+i%7, 100+i%5)
	}
	csv := filepath.Join(t.TempDir(), "bars.csv")
	if err := os.WriteFile(csv, []byte(bars.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	host, err := supervisor.NewHost()
	if err != nil {
		t.Fatal(err)
	}
	store, err := job.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return Config{Strategy: strategy, Host: host, Store: store, Python: py, Data: []string{csv},
		Market: backtest.DefaultOptions(), Version: "test"}
}

// TestWatchRunsForkFromTheTemplate: the workbench's and --ci --watch's
// session (KeepWarm, RefreshOn, Start) forks each run from a warm
// template. A run's result is the cold run's (fingerprint, orders hash,
// metrics); a save that adds a third-party import to the strategy has the
// template replaced, and the next run comes from a new template that
// preloaded the module (imported once, by the template: never by a run);
// each run has the module's state fresh, and its own limits (a run over
// the memory limit fails for it, and the next run passes, still warm).
func TestWatchRunsForkFromTheTemplate(t *testing.T) {
	py := testenv.Python(t)
	folder, site := t.TempDir(), t.TempDir()
	log := filepath.Join(t.TempDir(), "loopmark.log")
	mark := fmt.Sprintf("with open(%q, \"a\") as f:\n    f.write(\"imported\\n\")\nCOUNT = 0\n", log)
	if err := os.WriteFile(filepath.Join(site, "loopmark.py"), []byte(mark), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PYTHONPATH", site)
	t.Setenv("STRATBENCH_HOME", t.TempDir())
	strategy := filepath.Join(folder, "strategy.py")
	write := func(marked bool) {
		t.Helper()
		if err := os.WriteFile(strategy, []byte(warmStrategy(marked)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(false)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := Open(ctx, warmConfig(t, py, strategy, 40), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.cfg.Limits = job.DefaultLimits()
	s.cfg.Limits.MemoryBytes = 256 << 20 // what a shared test machine can spare
	s.KeepWarm()
	if s.pool == nil {
		t.Fatal("the session keeps no template")
	}
	changes := make(chan watch.Change)
	defer close(changes)
	seen := s.RefreshOn(ctx, changes)
	save := func(marked bool) {
		t.Helper()
		write(marked)
		changes <- watch.Change{Kind: watch.Changed}
		<-seen
	}
	run := func(mode string) *job.Report {
		t.Helper()
		s.cfg.Params = []string{"mode=" + mode}
		job, err := s.Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := job.Wait()
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	passed := func(what string, rep *job.Report, count int) {
		t.Helper()
		if rep.Status != job.StatusPassed {
			t.Fatalf("%s: %s, %+v", what, rep.Status, rep.Failure)
		}
		var meta struct{ Bars, Count int }
		if err := json.Unmarshal(rep.Metadata, &meta); err != nil || meta.Bars != 40 || meta.Count != count {
			t.Fatalf("%s: on_finish returned %s (%v), want 40 bars and loopmark's counter at %d", what, rep.Metadata, err, count)
		}
	}

	// The first run, forked, is the cold run.
	warm := run("ok")
	passed("the first run", warm, 0)
	d, err := s.Driver(ctx)
	if err != nil {
		t.Fatal(err)
	}
	coldJob, err := engine.Start(ctx, s.jobConfig(), d)
	if err != nil {
		t.Fatal(err)
	}
	cold, err := coldJob.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if warm.Fingerprint != cold.Fingerprint || warm.OrdersHash != cold.OrdersHash || !reflect.DeepEqual(warm.Metrics, cold.Metrics) ||
		warm.Metrics == nil || warm.Metrics.Fills != 2 {
		t.Errorf("the warm run differs from the cold one:\nwarm %s %s %+v\ncold %s %s %+v", warm.Fingerprint, warm.OrdersHash, warm.Metrics,
			cold.Fingerprint, cold.OrdersHash, cold.Metrics)
	}

	// A save adds loopmark: the next run forks from a new template that
	// preloaded it.
	save(true)
	passed("the run after the import", run("ok"), 1)
	st := s.pool.Stats()
	if st.Warm != 2 || st.Cold != 0 || st.Templates != 2 || st.Stale != 1 || !slices.Contains(st.Preloaded, "loopmark") {
		t.Fatalf("pool stats %+v: want 2 warm runs, the second from a new template that preloaded loopmark", st)
	}

	// Its own limits: over the memory limit, the run fails for it alone.
	rep := run("memory")
	if rep.Status != job.StatusFailed || rep.Failure == nil || rep.Failure.Kind != contract.KindMemory {
		t.Fatalf("the memory run: %s, %+v; want a memory failure", rep.Status, rep.Failure)
	}
	// A save that changes no import keeps the template; the module's state
	// is fresh in each run.
	save(true)
	passed("the run after the memory run", run("ok"), 1)
	if st := s.pool.Stats(); st.Warm != 4 || st.Cold != 0 || st.Templates != 2 {
		t.Errorf("pool stats %+v: want 4 warm runs from 2 templates", st)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "imported\n"); n != 1 {
		t.Errorf("loopmark was imported %d times, want once (by the template)", n)
	}
}

// TestOpenWarmsWhileTheDataLoads: Config.Warm starts the session's
// template in Open, while the data loads (none without it), and the run
// it serves is forked from it and is the cold run.
func TestOpenWarmsWhileTheDataLoads(t *testing.T) {
	py := testenv.Python(t)
	t.Setenv("STRATBENCH_HOME", t.TempDir())
	strategy := filepath.Join(t.TempDir(), "strategy.py")
	if err := os.WriteFile(strategy, []byte(warmStrategy(false)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cfg := warmConfig(t, py, strategy, 1000)
	open := func(warm bool) *Session {
		t.Helper()
		cfg.Warm = warm
		s, err := Open(ctx, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	run := func(s *Session) *job.Report {
		t.Helper()
		j, err := s.Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := j.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if rep.Status != job.StatusPassed || rep.Metrics == nil || rep.Metrics.Fills != 2 {
			t.Fatalf("the run: %s, %+v, %+v", rep.Status, rep.Failure, rep.Metrics)
		}
		return rep
	}

	cold := open(false)
	defer cold.Close()
	if cold.pool != nil {
		t.Fatal("without Warm, Open started a template")
	}
	want := run(cold)
	s := open(true)
	if s.pool == nil {
		s.Close()
		t.Fatal("with Warm, Open started no template")
	}
	got := run(s)
	st := s.pool.Stats()
	s.Close()
	if st.Warm != 1 || st.Cold != 0 || st.Templates != 1 {
		t.Errorf("pool stats %+v, want the run forked from the one template", st)
	}
	if got.Fingerprint != want.Fingerprint || got.OrdersHash != want.OrdersHash || !reflect.DeepEqual(got.Metrics, want.Metrics) {
		t.Errorf("the warm run differs from the cold one:\nwarm %s %s %+v\ncold %s %s %+v",
			got.Fingerprint, got.OrdersHash, got.Metrics, want.Fingerprint, want.OrdersHash, want.Metrics)
	}
}

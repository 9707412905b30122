package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"stratbench/backtest"
	"stratbench/contract"
	"stratbench/data"
	"stratbench/internal/leakcheck"
	"stratbench/internal/proctest"
	"stratbench/internal/testenv"
	"stratbench/job"
	"stratbench/sandbox"
	"stratbench/supervisor"
)

// sampleDriver replays the first n bars of the bundled sample (two symbols,
// one bar each a minute) through the real market.
func sampleDriver(t testing.TB, n int) contract.Driver {
	t.Helper()
	from := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	w := data.Window{From: from, To: from.Add(time.Duration(n/2-1) * time.Minute)}
	set, err := data.Sample(w)
	if err != nil {
		t.Fatal(err)
	}
	d, err := backtest.NewDriver(set, backtest.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Setup().Data.Events; got != n {
		t.Fatalf("the window has %d bars, want %d", got, n)
	}
	return d
}

// poolConfig is the Config of the jobs of a pool test: strategy (a path
// from the repository's root), a marker in the environment that every
// process of the pool carries.
func poolConfig(t testing.TB, py *Interpreter, strategy string, limits job.Limits) (Config, string) {
	home := t.TempDir()
	marker := fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
	return Config{
		Strategy: filepath.Join("..", strategy),
		Python:   py,
		Home:     home,
		CacheDir: filepath.Join(home, "cache"),
		Limits:   limits,
		Version:  "test",
		Host:     testHost,
		Env:      map[string]string{"STRATBENCH_TEST_MARKER": marker},
	}, marker
}

// interpreter returns the test environment's interpreter, which imports
// modules.
func interpreter(t testing.TB, modules ...string) *Interpreter {
	t.Helper()
	py, err := FindPython(context.Background(), testenv.Python(t, modules...))
	if err != nil {
		t.Fatal(err)
	}
	return py
}

// waitJob waits for a job and fails the test when it could not run.
func waitJob(t testing.TB, j *Job) *job.Report {
	t.Helper()
	rep, err := j.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// logText returns the lines of a job's log.
func logText(t *testing.T, dir string) []string {
	var out []string
	for _, l := range readLogs(t, dir) {
		out = append(out, l.Stream+": "+l.Line)
	}
	return out
}

// sameRun compares what a run's result is made of: everything of the
// report but its job id, times, durations, resources and hook timings.
func sameRun(t *testing.T, what string, cold, warm *job.Report) {
	t.Helper()
	type run struct {
		Status            job.Status
		Failure           *contract.Failure
		Strategy          job.StrategyInfo
		Data              contract.DataInfo
		Python            job.PythonInfo
		Fingerprint       string
		OrdersHash        string
		Metrics           *contract.Metrics
		Metadata          string
		CommandsDiscarded int
		Counts            map[contract.Hook][2]int
		TreeTracking      string
	}
	view := func(r *job.Report) run {
		counts := map[contract.Hook][2]int{}
		for h, s := range r.Hooks {
			counts[h] = [2]int{s.Count, s.Failures}
		}
		return run{r.Status, r.Failure, r.Strategy, r.Data, r.Python, r.Fingerprint, r.OrdersHash, r.Metrics,
			string(r.Metadata), r.CommandsDiscarded, counts, r.Resources.TreeTracking}
	}
	if c, w := view(cold), view(warm); !reflect.DeepEqual(c, w) {
		t.Errorf("%s: the warm run differs from the cold one:\ncold %+v\nwarm %+v", what, c, w)
	}
}

// TestPoolRunEqualsCold: a job forked from a warm template reports what the
// same job started cold reports (status, params, fingerprint, orders hash,
// metrics, hook counts, metadata, log), and its own PID namespace; with
// numpy, the template preloaded numpy and the history columns are arrays
// all the same. Every job of the pool started warm, and no process of the
// pool is left once it is closed.
func TestPoolRunEqualsCold(t *testing.T) {
	for _, tc := range []struct {
		name, strategy string
		modules        []string
	}{
		{"stdlib", "python/example/strategy.py", nil},
		{"numpy", "python/example/numpy_strategy.py", []string{"numpy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustStart := started(t)
			py := findPython(t)
			if tc.modules != nil {
				py = interpreter(t, tc.modules...)
			}
			cfg, marker := poolConfig(t, py, tc.strategy, shortLimits())
			cfg.Params = []string{"fast=5"}
			cold := waitJob(t, mustStart(Start(context.Background(), cfg, sampleDriver(t, 500))))
			if cold.Status != job.StatusPassed || cold.OrdersHash == "" || cold.Metrics.Fills == 0 {
				t.Fatalf("the cold run: %s, %+v, %d fills", cold.Status, cold.Failure, cold.Metrics.Fills)
			}
			coldDir := filepath.Join(cfg.Home, "jobs", cold.JobID)

			pool := newPool(t, cfg, 1)
			for run, params := range [][]string{{"fast=5"}, {"fast=7"}, {"fast=5"}} {
				cfg.Params = params
				j := mustStart(pool.Start(context.Background(), cfg, sampleDriver(t, 500)))
				warm := waitJob(t, j)
				if params[0] != "fast=5" {
					if warm.Status != job.StatusPassed || warm.Fingerprint == cold.Fingerprint {
						t.Errorf("run %d (%s): %s, fingerprint %s", run, params, warm.Status, warm.Fingerprint)
					}
					continue
				}
				sameRun(t, fmt.Sprintf("run %d", run), cold, warm)
				if c, w := logText(t, coldDir), logText(t, j.Dir()); !slices.Equal(c, w) {
					t.Errorf("run %d: the logs differ:\ncold %q\nwarm %q", run, c, w)
				}
			}
			st := pool.Stats()
			if st.Warm != 3 || st.Cold != 0 {
				t.Errorf("pool stats %+v, want 3 warm starts", st)
			}
			if tc.modules != nil && !slices.Contains(st.Preloaded, "numpy") {
				t.Errorf("the template preloaded %q, want numpy", st.Preloaded)
			}
			pool.Close()
			assertTreeGone(t, nil, marker, "pidns")
		})
	}
}

// newPool returns a pool of cfg's strategy with slots slots, closed when
// the test ends (Close may come earlier too: a second one does nothing).
func newPool(tb testing.TB, cfg Config, slots int) *Pool {
	tb.Helper()
	pool, err := NewPool(cfg, slots)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// passedMetadata runs a 5-bar job of cfg on pool and returns the metadata
// of its report; the job must pass.
func passedMetadata(t *testing.T, pool *Pool, cfg Config) string {
	t.Helper()
	rep := waitJob(t, started(t)(pool.Start(context.Background(), cfg, newReplay(5, 1))))
	if rep.Status != job.StatusPassed {
		t.Fatalf("%s, %+v", rep.Status, rep.Failure)
	}
	return string(rep.Metadata)
}

// started returns a function that returns the job a Start returned, and
// fails t when it returned an error.
func started(t testing.TB) func(*Job, error) *Job {
	return func(j *Job, err error) *Job {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
}

// lineSeen returns a channel closed when the job's log shows text; it reads
// the job's events until they end.
func lineSeen(j *Job, text string) <-chan struct{} {
	seen := make(chan struct{})
	go func() {
		found := false
		for e := range j.Events() {
			if l, ok := e.(job.LogLines); ok && !found {
				for _, line := range l.Lines {
					if line.Line == text {
						found = true
						close(seen)
						break
					}
				}
			}
		}
	}()
	return seen
}

// startWaiting starts a job of warm_modes.py (cfg's strategy) that waits,
// 0.1 s a bar over 600 bars, until the file until exists, and returns once
// it waits.
func startWaiting(t *testing.T, pool *Pool, cfg Config, until string) *Job {
	t.Helper()
	cfg.Params = []string{"mode=wait", "until=" + until}
	job := started(t)(pool.Start(context.Background(), cfg, newReplay(600, 1)))
	select {
	case <-lineSeen(job, "waiting"):
	case <-job.Done():
		t.Fatalf("the waiting job ended before it waited: %+v", job.report)
	}
	return job
}

// TestPoolLimitsPerRun: runs of one pool that break the memory, process and
// time limits fail for it, each killed alone with its own tree: a job that
// runs beside them on the other slot goes on and passes, every job started
// warm, and nothing of the pool is left once it is closed.
func TestPoolLimitsPerRun(t *testing.T) {
	mustStart := started(t)
	cfg, marker := poolConfig(t, findPython(t), "testdata/strategies/warm_modes.py", shortLimits())
	pool := newPool(t, cfg, 2)
	until := filepath.Join(t.TempDir(), "go")
	beside := startWaiting(t, pool, cfg, until)
	for _, tc := range []struct {
		mode string
		kind contract.FailureKind
	}{
		{"memory", contract.KindMemory},
		{"bomb", contract.KindProcesses},
		{"loop", contract.KindTimeout},
	} {
		c := cfg
		c.Params = []string{"mode=" + tc.mode}
		start := time.Now()
		j := mustStart(pool.Start(context.Background(), c, newReplay(100, 1)))
		rep := waitJob(t, j)
		if rep.Status != job.StatusFailed || rep.Failure == nil || rep.Failure.Kind != tc.kind || rep.Failure.Hook != contract.HookOnData {
			t.Fatalf("mode %s: %s, %+v; want %s in on_data", tc.mode, rep.Status, rep.Failure, tc.kind)
		}
		if j.LostWithTemplate() {
			t.Errorf("mode %s: a run that failed on its own says it was lost with its template", tc.mode)
		}
		if rep.Resources.TreeTracking != "pidns" {
			t.Errorf("mode %s: tree tracking %q", tc.mode, rep.Resources.TreeTracking)
		}
		t.Logf("mode %s: %s after %v: %s", tc.mode, rep.Failure.Kind, time.Since(start).Round(time.Millisecond), rep.Failure.Message)
		if tc.kind == contract.KindTimeout {
			// The stack the worker wrote names the strategy's frames and
			// leaves the bridge's out, as a cold start's does: the job
			// knows the bridge's path without installing it.
			strategyFrames := 0
			for _, fr := range rep.Failure.Frames {
				if filepath.Base(fr.File) == "stratbench_bridge.py" {
					t.Errorf("mode %s: the stack shows the bridge's frame %+v", tc.mode, fr)
				}
				if filepath.Base(fr.File) == filepath.Base(cfg.Strategy) {
					strategyFrames++
				}
			}
			if strategyFrames == 0 {
				t.Errorf("mode %s: no frame of the strategy in %+v", tc.mode, rep.Failure.Frames)
			}
		}
		select {
		case <-beside.Done():
			t.Fatalf("mode %s ended the job beside it: %+v", tc.mode, beside.report)
		default:
		}
	}
	if err := os.WriteFile(until, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := waitJob(t, beside)
	if rep.Status != job.StatusPassed || string(rep.Metadata) != `{"bars":600}` {
		t.Errorf("the job beside: %s, %+v, %s", rep.Status, rep.Failure, rep.Metadata)
	}
	if st := pool.Stats(); st.Warm != 4 || st.Cold != 0 {
		t.Errorf("pool stats %+v, want 4 warm starts", st)
	}
	pool.Close()
	assertTreeGone(t, nil, marker, "pidns")
}

// TestPoolJobLostWithItsTemplate: a job whose template is killed from
// outside while the job runs fails as a crash that says stratbench lost
// it, and LostWithTemplate says so; no process of it is left, and the
// pool's next job forks from a new template and passes, not lost.
func TestPoolJobLostWithItsTemplate(t *testing.T) {
	mustStart := started(t)
	cfg, marker := poolConfig(t, findPython(t), "testdata/strategies/warm_modes.py", shortLimits())
	pool := newPool(t, cfg, 1)
	j := startWaiting(t, pool, cfg, filepath.Join(t.TempDir(), "never"))
	templates := templatesOf(marker)
	if len(templates) != 1 {
		t.Fatalf("templates %v, want the one the job was forked from", templates)
	}
	if err := syscall.Kill(templates[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	rep := waitJob(t, j)
	if rep.Status != job.StatusFailed || rep.Failure == nil || rep.Failure.Kind != contract.KindCrash ||
		rep.Failure.Hook != contract.HookOnData || !strings.Contains(rep.Failure.Message, "warm template this run was forked from ended") {
		t.Fatalf("the lost job: %s, %+v; want a crash in on_data that names the template", rep.Status, rep.Failure)
	}
	if !j.LostWithTemplate() {
		t.Error("LostWithTemplate is false for the job its template took with it")
	}
	next := mustStart(pool.Start(context.Background(), cfg, newReplay(5, 1)))
	if rep := waitJob(t, next); rep.Status != job.StatusPassed || next.LostWithTemplate() {
		t.Errorf("the next job: %s, %+v, lost %v; want passed", rep.Status, rep.Failure, next.LostWithTemplate())
	}
	if now := templatesOf(marker); len(now) != 1 || now[0] == templates[0] {
		t.Errorf("templates %v after the next job, want a new one instead of %v", now, templates)
	}
	if st := pool.Stats(); st.Warm != 2 || st.Cold != 0 {
		t.Errorf("pool stats %+v, want 2 warm starts", st)
	}
	pool.Close()
	assertTreeGone(t, nil, marker, "pidns")
}

// TestPoolStartsColdPastAStalledTemplate: a template that never answers a
// fork (stopped with SIGSTOP here) holds a job for the startup limit and no
// longer: the template is killed, the job starts cold and passes, and the
// pool's next job forks from a new template.
func TestPoolStartsColdPastAStalledTemplate(t *testing.T) {
	mustStart := started(t)
	limits := shortLimits()
	limits.Startup = 8 * time.Second // it bounds the templates' starts too: room for a busy machine
	cfg, marker := poolConfig(t, findPython(t), "testdata/strategies/ok_counter.py", limits)
	pool := newPool(t, cfg, 1)
	passes := func(what string) *Job {
		t.Helper()
		j := mustStart(pool.Start(context.Background(), cfg, newReplay(5, 1)))
		select {
		case <-j.Done():
		case <-time.After(limits.Startup + 30*time.Second):
			for _, pid := range templatesOf(marker) {
				syscall.Kill(pid, syscall.SIGKILL) // so that the pool's Close can end
			}
			t.Fatalf("%s has not ended %v after it started", what, limits.Startup+30*time.Second)
		}
		if rep := waitJob(t, j); rep.Status != job.StatusPassed {
			t.Fatalf("%s: %s, %+v", what, rep.Status, rep.Failure)
		}
		return j
	}
	passes("the first job")
	stalled := templatesOf(marker)
	if len(stalled) != 1 {
		t.Fatalf("templates %v, want the one the first job was forked from", stalled)
	}
	if err := syscall.Kill(stalled[0], syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	passes("the job past the stalled template")
	waited := time.Since(start)
	st := pool.Stats()
	t.Logf("waited %v for the stalled template; the cold start's reason: %s", waited.Round(time.Millisecond), st.LastColdReason)
	if st.Warm != 1 || st.Cold != 1 || st.LastColdReason == "" {
		t.Errorf("pool stats %+v, want the second job started cold, with its reason", st)
	}
	if waited < limits.Startup {
		t.Errorf("the job passed %v after it started, before the startup limit (%v): was the template stalled?", waited, limits.Startup)
	}
	passes("the job after")
	if now := templatesOf(marker); len(now) != 1 || now[0] == stalled[0] {
		t.Errorf("templates %v after the next job, want a new one instead of the stalled %v", now, stalled)
	}
	if st := pool.Stats(); st.Warm != 2 {
		t.Errorf("pool stats %+v, want the last job forked from a new template", st)
	}
	pool.Close()
	assertTreeGone(t, nil, marker, "pidns")
}

// TestPoolStartsColdWhenItMust: without PID namespaces, and for a job whose
// Config is not the pool's, the job starts cold, as Start would start it,
// and the pool says why.
func TestPoolStartsColdWhenItMust(t *testing.T) {
	py := findPython(t)
	t.Run("fallback", func(t *testing.T) {
		mustStart := started(t)
		t.Setenv(supervisor.TrackingEnv, "fallback")
		t.Setenv(supervisor.EnvMarker, os.Getenv(supervisor.EnvMarker)) // NewHost sets its own
		h, err := supervisor.NewHost()
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ := poolConfig(t, py, "testdata/strategies/ok_counter.py", shortLimits())
		cfg.Host = h
		pool := newPool(t, cfg, 1)
		for range 2 {
			rep := waitJob(t, mustStart(pool.Start(context.Background(), cfg, newReplay(20, 1))))
			if rep.Status != job.StatusPassed || rep.Resources.TreeTracking != "fallback" {
				t.Errorf("%s, %+v, tracking %s", rep.Status, rep.Failure, rep.Resources.TreeTracking)
			}
		}
		st := pool.Stats()
		if st.Warm != 0 || st.Cold != 2 || !strings.Contains(st.ColdReason, "PID-namespace") {
			t.Errorf("pool stats %+v, want 2 cold starts for want of PID namespaces", st)
		}
	})
	t.Run("sandbox", func(t *testing.T) {
		mustStart := started(t)
		if err := sandbox.Check(); err != nil {
			t.Skip(err)
		}
		cfg, _ := poolConfig(t, py, "testdata/strategies/ok_counter.py", shortLimits())
		cfg.Sandbox = true
		pool := newPool(t, cfg, 1)
		rep := waitJob(t, mustStart(pool.Start(context.Background(), cfg, newReplay(20, 1))))
		if st := pool.Stats(); rep.Status != job.StatusPassed || !rep.Python.Sandbox || st.Cold != 1 || !strings.Contains(st.ColdReason, "sandbox") {
			t.Errorf("%s, %+v, stats %+v", rep.Status, rep.Failure, st)
		}
	})
	t.Run("other config", func(t *testing.T) {
		mustStart := started(t)
		cfg, _ := poolConfig(t, py, "testdata/strategies/ok_counter.py", shortLimits())
		pool := newPool(t, cfg, 1)
		other := cfg
		other.Env = map[string]string{"OTHER": "1"}
		rep := waitJob(t, mustStart(pool.Start(context.Background(), other, newReplay(20, 1))))
		if st := pool.Stats(); rep.Status != job.StatusPassed || st.Cold != 1 || st.ColdReason != "" || st.LastColdReason == "" {
			t.Errorf("%s, stats %+v", rep.Status, st)
		}
	})
}

// TestPoolKeepsNoGoroutine: a pool that was used and closed leaves no
// goroutine behind, nor does a job's slot (the package's leak check at
// the end of the tests sees the rest).
func TestPoolKeepsNoGoroutine(t *testing.T) {
	mustStart := started(t)
	cfg, marker := poolConfig(t, findPython(t), "testdata/strategies/ok_counter.py", shortLimits())
	pool := newPool(t, cfg, 2)
	var jobs []*Job
	for range 4 {
		jobs = append(jobs, mustStart(pool.Start(context.Background(), cfg, newReplay(50, 1))))
	}
	for _, j := range jobs {
		if rep := waitJob(t, j); rep.Status != job.StatusPassed {
			t.Errorf("%s, %+v", rep.Status, rep.Failure)
		}
	}
	pool.Close()
	pool.Close()
	if st := pool.Stats(); st.Warm != 4 {
		t.Errorf("pool stats %+v, want 4 warm starts", st)
	}
	// After Close a job still runs, cold.
	rep := waitJob(t, mustStart(pool.Start(context.Background(), cfg, newReplay(5, 1))))
	if st := pool.Stats(); rep.Status != job.StatusPassed || st.Cold != 1 {
		t.Errorf("after Close: %s, stats %+v", rep.Status, st)
	}
	assertTreeGone(t, nil, marker, "pidns")
	if left := leakcheck.Leaked("stratbench/engine.(*Pool)", "stratbench/engine.(*warmLauncher)"); left != "" {
		t.Errorf("goroutines of the pool are left:\n%s", left)
	}
}

// TestPoolReplacesARefusingTemplate: once a file of the strategy's folder
// shadows a module the template imported, the template refuses to fork: that
// job starts cold (and imports the folder's module, as a cold start must),
// and the slot's next job forks from a new template that left the module to
// the run.
func TestPoolReplacesARefusingTemplate(t *testing.T) {
	folder := t.TempDir()
	strategy := filepath.Join(folder, "strategy.py")
	src := "import fractions\n\n\ndef on_data(ctx, history):\n    pass\n\n\ndef on_finish(ctx):\n    return {\"folder\": hasattr(fractions, \"FOLDER\")}\n"
	if err := os.WriteFile(strategy, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _ := poolConfig(t, findPython(t), "", shortLimits())
	cfg.Strategy = strategy
	pool := newPool(t, cfg, 1)
	run := func() string { return passedMetadata(t, pool, cfg) }
	if got := run(); got != `{"folder":false}` {
		t.Errorf("before the shadow: metadata %s", got)
	}
	if st := pool.Stats(); st.Warm != 1 || !slices.Contains(st.Preloaded, "fractions") {
		t.Fatalf("pool stats %+v, want a warm start that preloaded fractions", st)
	}
	if err := os.WriteFile(filepath.Join(folder, "fractions.py"), []byte("FOLDER = True\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if got := run(); got != `{"folder":true}` {
			t.Errorf("run %d after the shadow: metadata %s, want the folder's module", i, got)
		}
	}
	st := pool.Stats()
	if st.Warm != 2 || st.Cold != 1 || !strings.Contains(st.LastColdReason, "shadows fractions") || slices.Contains(st.Preloaded, "fractions") {
		t.Errorf("pool stats %+v, want one cold start for the shadow, then a new template without fractions", st)
	}
}

// TestPoolGoesColdAfterRefusals: a template refuses to fork once a file
// its imports read has changed (here each run appends to the file a
// third-party module reads at import), and the pool replaces it; after
// maxRefusals refusals every job starts cold, the pool saying why. Every
// job, warm or cold, saw the file as it was when the job started.
func TestPoolGoesColdAfterRefusals(t *testing.T) {
	folder, site := t.TempDir(), t.TempDir()
	conf := filepath.Join(t.TempDir(), "conf")
	files := map[string]string{
		filepath.Join(site, "readsconf.py"): "import os\n\nwith open(os.environ[\"WARM_CONF\"]) as f:\n    CONF = f.read()\n",
		filepath.Join(folder, "strategy.py"): "import os\n\nimport readsconf\n\n\ndef on_data(ctx, history):\n    pass\n\n\n" +
			"def on_finish(ctx):\n    with open(os.environ[\"WARM_CONF\"], \"a\") as f:\n        f.write(\"x\")\n" +
			"    return {\"conf\": readsconf.CONF}\n",
		conf: "",
	}
	for path, src := range files {
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, _ := poolConfig(t, findPython(t), "", shortLimits())
	cfg.Strategy = filepath.Join(folder, "strategy.py")
	cfg.Env["PYTHONPATH"] = site
	cfg.Env["WARM_CONF"] = conf
	pool := newPool(t, cfg, 1)
	for i := range 2*maxRefusals + 2 {
		if got, want := passedMetadata(t, pool, cfg), fmt.Sprintf(`{"conf":%q}`, strings.Repeat("x", i)); got != want {
			t.Errorf("job %d: metadata %s, want %s: what a cold start would read", i, got, want)
		}
	}
	// Warm, refused, warm (a new template), refused, ...: the last refusal
	// makes every later job start cold.
	st := pool.Stats()
	if st.Warm != maxRefusals || st.Cold != maxRefusals+2 || !strings.Contains(st.ColdReason, "refused 3 forks") ||
		!strings.Contains(st.ColdReason, "changed since the template's imports read it") {
		t.Errorf("pool stats %+v, want %d warm starts and cold after %d refusals", st, maxRefusals, maxRefusals)
	}
}

// TestPoolForksOnlyJobsOfItsTemplatesEnvironment: a job whose worker's
// environment differs from the one its slot's template started with (here
// stratbench's TZ, which workers inherit, changed between two jobs) gets a
// new template: the interpreter's time zone is read once, at its start,
// and a run forked from the old template would keep the old one.
func TestPoolForksOnlyJobsOfItsTemplatesEnvironment(t *testing.T) {
	folder := t.TempDir()
	src := "import time\n\n\ndef on_data(ctx, history):\n    pass\n\n\ndef on_finish(ctx):\n    return {\"tz\": time.tzname[0]}\n"
	if err := os.WriteFile(filepath.Join(folder, "strategy.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _ := poolConfig(t, findPython(t), "", shortLimits())
	cfg.Strategy = filepath.Join(folder, "strategy.py")
	pool := newPool(t, cfg, 1)
	for _, tz := range []string{"AAA-1", "BBB-2"} {
		t.Setenv("TZ", tz)
		if got, want := passedMetadata(t, pool, cfg), fmt.Sprintf(`{"tz":%q}`, tz[:3]); got != want {
			t.Errorf("TZ=%s: metadata %s, want %s", tz, got, want)
		}
	}
	if st := pool.Stats(); st.Warm != 2 {
		t.Errorf("pool stats %+v, want two warm starts", st)
	}
}

// TestPoolLeavesAPackagedStrategysModulesToTheRun: a strategy shipped as a
// package in a site-packages (mystrats/strategy.py, importing
// mystrats.indicators) has its own code there, and the template imports
// none of it: each run imports its folder's module itself, as a cold start
// does. (The template took the folder for a library's, since its path
// holds "site-packages", and a warm run found the template's copy,
// imported once by another process.)
func TestPoolLeavesAPackagedStrategysModulesToTheRun(t *testing.T) {
	site := filepath.Join(t.TempDir(), "lib", "python3", "site-packages")
	folder := filepath.Join(site, "mystrats")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{
		"__init__.py":   "",
		"indicators.py": "import os\nPID = os.getpid()\n",
		"strategy.py": "import fractions\nfrom mystrats import indicators\nimport os\n\n\ndef on_data(ctx, history):\n    pass\n\n\n" +
			"def on_finish(ctx):\n    return {\"own\": indicators.PID == os.getpid()}\n",
	} {
		if err := os.WriteFile(filepath.Join(folder, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, _ := poolConfig(t, findPython(t), "", shortLimits())
	cfg.Strategy = filepath.Join(folder, "strategy.py")
	cfg.Env["PYTHONPATH"] = site // as an installed package is found
	pool := newPool(t, cfg, 1)
	for i := range 2 {
		if got := passedMetadata(t, pool, cfg); got != `{"own":true}` {
			t.Errorf("run %d: metadata %s, want the folder's module imported by the run itself", i, got)
		}
	}
	st := pool.Stats()
	if st.Warm != 2 || !slices.Contains(st.Preloaded, "fractions") || slices.ContainsFunc(st.Preloaded, func(m string) bool { return strings.HasPrefix(m, "mystrats") }) {
		t.Errorf("pool stats %+v, want two warm starts from a template that preloaded fractions and nothing of mystrats", st)
	}
}

// TestPoolStartsColdWhatAForkWouldShare: a module the strategy imports
// that starts a thread, keeps a file open or maps shared memory at import
// gives each cold start its own, and a run forked from a template that
// imported it none (the thread) or the template's (the file's offset, the
// memory, shared by every run). The template refuses to serve, saying which
// import did what, and the runs start cold: a sweep's runs then do what the
// same --ci runs do. (A worker thread missing in the runs made every call
// into it wait: each warm run failed with a timeout.)
func TestPoolStartsColdWhatAForkWouldShare(t *testing.T) {
	for _, tc := range []struct {
		name, module, says string
	}{
		{"thread", "import queue, threading\n_req = queue.Queue()\ndef _serve():\n    while True:\n        x, out = _req.get()\n        out.put(x * 2)\n" +
			"threading.Thread(target=_serve, daemon=True).start()\ndef use(x):\n    out = queue.Queue(1)\n    _req.put((x, out))\n    return out.get()\n",
			"importing helpermod started a thread"},
		{"file", "import os, tempfile\n_log = tempfile.TemporaryFile()\ndef use(x):\n    _log.write(b'x' * 7)\n    _log.flush()\n    return _log.tell() // 7 * 2\n",
			"importing helpermod left descriptor"},
		{"shared", "import mmap\n_page = mmap.mmap(-1, 4096, flags=mmap.MAP_SHARED)\ndef use(x):\n    _page[0] += 1\n    return _page[0] * 2\n",
			"importing helpermod mapped shared writable memory (anonymous)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lib := t.TempDir()
			if err := os.WriteFile(filepath.Join(lib, "helpermod.py"), []byte(tc.module), 0o644); err != nil {
				t.Fatal(err)
			}
			strategy := filepath.Join(t.TempDir(), "strategy.py")
			src := "import helpermod\n\n\ndef on_data(ctx, history):\n    pass\n\n\ndef on_finish(ctx):\n    return {\"got\": helpermod.use(1)}\n"
			if err := os.WriteFile(strategy, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, _ := poolConfig(t, findPython(t), "", shortLimits())
			cfg.Strategy = strategy
			cfg.Env["PYTHONPATH"] = lib // an installed module, outside the strategy's folder
			pool := newPool(t, cfg, 1)
			for i := range 2 {
				// Each run's own: one call, one write, one increment.
				if got := passedMetadata(t, pool, cfg); got != `{"got":2}` {
					t.Errorf("run %d: metadata %s, want {\"got\":2} as a cold start gives", i, got)
				}
			}
			if st := pool.Stats(); st.Warm != 0 || st.Cold != 2 || !strings.Contains(st.ColdReason, tc.says) {
				t.Errorf("pool stats %+v, want two cold starts because %s", st, tc.says)
			}
		})
	}
}

// TestPoolTemplateBlamesTheRightImport: what an import that failed left
// behind (a thread started before it raised, which runs on without its
// module) is that import's, not the next one's; and a module that closes a descriptor open before it (a
// library that closes its stdin, as a daemon does) opened none: the listing's own
// descriptor, which takes the number freed, is no descriptor of the
// template's, and the runs start warm.
func TestPoolTemplateBlamesTheRightImport(t *testing.T) {
	for _, tc := range []struct {
		name, module, strategy string
		warm                   bool
		says                   string
	}{
		{"failed import", "import threading, time\nthreading.Thread(target=time.sleep, args=(3600,), daemon=True).start()\nraise ImportError('half imported')\n",
			"try:\n    import helpermod\nexcept ImportError:\n    pass\nimport fractions\n",
			false, "importing helpermod started a thread"},
		{"closed descriptor", "import os\nos.close(0)\n", "import helpermod\nimport fractions\n", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lib := t.TempDir()
			if err := os.WriteFile(filepath.Join(lib, "helpermod.py"), []byte(tc.module), 0o644); err != nil {
				t.Fatal(err)
			}
			strategy := filepath.Join(t.TempDir(), "strategy.py")
			src := tc.strategy + "\n\ndef on_data(ctx, history):\n    pass\n\n\ndef on_finish(ctx):\n    return {\"got\": 2}\n"
			if err := os.WriteFile(strategy, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, _ := poolConfig(t, findPython(t), "", shortLimits())
			cfg.Strategy = strategy
			cfg.Env["PYTHONPATH"] = lib
			pool := newPool(t, cfg, 1)
			for i := range 2 {
				if got := passedMetadata(t, pool, cfg); got != `{"got":2}` {
					t.Errorf("run %d: metadata %s", i, got)
				}
			}
			st := pool.Stats()
			switch {
			case tc.warm && (st.Warm != 2 || st.ColdReason != ""):
				t.Errorf("pool stats %+v, want two warm starts", st)
			case !tc.warm && (st.Cold != 2 || !strings.Contains(st.ColdReason, tc.says)):
				t.Errorf("pool stats %+v, want two cold starts because %s", st, tc.says)
			}
		})
	}
}

// TestPoolRunsGetFreshModuleState: what a cold start's imports make afresh
// in each process, a run forked from the template does not share with the
// template's other runs: multiprocessing's authentication key (with the
// template's, one run could authenticate to another's managers) and
// logging's start time (the template's import, not the run's start).
func TestPoolRunsGetFreshModuleState(t *testing.T) {
	folder := t.TempDir()
	strategy := filepath.Join(folder, "strategy.py")
	src := "import logging\nimport multiprocessing\n\n\ndef on_data(ctx, history):\n    pass\n\n\n" +
		"def on_finish(ctx):\n    start = logging._startTime\n" +
		"    return {\"authkey\": multiprocessing.current_process().authkey.hex(),\n" +
		"            \"logging_start\": start / 1e9 if isinstance(start, int) else start}\n"
	if err := os.WriteFile(strategy, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _ := poolConfig(t, findPython(t), "", shortLimits())
	cfg.Strategy = strategy
	pool := newPool(t, cfg, 1)
	type state struct {
		Authkey      string  `json:"authkey"`
		LoggingStart float64 `json:"logging_start"`
	}
	var runs []state
	var starts []time.Time
	for range 2 {
		starts = append(starts, time.Now())
		var st state
		if err := json.Unmarshal([]byte(passedMetadata(t, pool, cfg)), &st); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, st)
	}
	if st := pool.Stats(); st.Warm != 2 || !slices.Contains(st.Preloaded, "multiprocessing") || !slices.Contains(st.Preloaded, "logging") {
		t.Fatalf("pool stats %+v, want two warm starts from a template that preloaded multiprocessing and logging", st)
	}
	if runs[0].Authkey == "" || runs[0].Authkey == runs[1].Authkey {
		t.Errorf("the runs' multiprocessing authkeys %q and %q: want two different keys", runs[0].Authkey, runs[1].Authkey)
	}
	for i, r := range runs {
		// The clocks are the same (the wall clock); a millisecond of slack
		// for the float.
		if started := float64(starts[i].UnixNano())/1e9 - 0.001; r.LoggingStart < started {
			t.Errorf("run %d: logging's start time %.6f is before the job started (%.6f)", i, r.LoggingStart, started)
		}
	}
}

// TestPoolRetiresASharedTemplateGently: slots that share a template do
// not lose their runs when it is replaced. A job of one slot runs (forked
// from the template) while the next job of the other is refused (a file of
// the strategy's folder now shadows a module the template imported): that
// job starts cold, the job beside it goes on and passes (not ended with the
// template it was forked from), the next job forks from a new template, and
// the old one is closed once the job beside has ended.
func TestPoolRetiresASharedTemplateGently(t *testing.T) {
	mustStart := started(t)
	folder := t.TempDir()
	strategy := filepath.Join(folder, "strategy.py")
	src := `import fractions
import os
import time

MANIFEST = {"params": {"until": ""}}
said = False


def on_data(ctx, history):
    global said
    if ctx.params["until"] and not os.path.exists(ctx.params["until"]):
        if not said:
            print("waiting", flush=True)
            said = True
        time.sleep(0.1)


def on_finish(ctx):
    return {"folder": hasattr(fractions, "FOLDER")}
`
	if err := os.WriteFile(strategy, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, marker := poolConfig(t, findPython(t), "", shortLimits())
	cfg.Strategy = strategy
	pool := newPool(t, cfg, 2)
	until := filepath.Join(t.TempDir(), "go")
	besideCfg := cfg
	besideCfg.Params = []string{"until=" + until}
	// 0.1 s a bar until the file exists: far within the time limit of a
	// call, and 60 s in all.
	beside := mustStart(pool.Start(context.Background(), besideCfg, newReplay(600, 1)))
	select {
	case <-lineSeen(beside, "waiting"):
	case <-beside.Done():
		t.Fatalf("the job beside ended before it waited: %+v", beside.report)
	}
	old := templatesOf(marker)
	if len(old) != 1 {
		t.Fatalf("templates %v, want the one the job beside was forked from", old)
	}
	if err := os.WriteFile(filepath.Join(folder, "fractions.py"), []byte("FOLDER = True\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func() string { return passedMetadata(t, pool, cfg) }
	if got := run(); got != `{"folder":true}` {
		t.Errorf("the refused job: metadata %s, want the folder's module", got)
	}
	if st := pool.Stats(); st.Warm != 1 || st.Cold != 1 || !strings.Contains(st.LastColdReason, "shadows fractions") {
		t.Errorf("pool stats %+v, want one cold start for the shadow", st)
	}
	if now := templatesOf(marker); !slices.Equal(now, old) {
		t.Errorf("templates %v while the job beside runs, want the retired one %v alive", now, old)
	}
	if err := os.WriteFile(until, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if rep := waitJob(t, beside); rep.Status != job.StatusPassed || string(rep.Metadata) != `{"folder":false}` {
		t.Errorf("the job beside: %s, %+v, metadata %s; want passed with the template's module", rep.Status, rep.Failure, rep.Metadata)
	}
	if got := run(); got != `{"folder":true}` {
		t.Errorf("the job after: metadata %s", got)
	}
	if st := pool.Stats(); st.Warm != 2 || slices.Contains(st.Preloaded, "fractions") {
		t.Errorf("pool stats %+v, want the last job forked from a new template without fractions", st)
	}
	// The job beside has ended: the retired template is closed.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		now := templatesOf(marker)
		if len(now) == 1 && now[0] != old[0] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("templates %v 10 s after the last run of the retired %v ended, want only the new one", now, old)
		}
	}
	pool.Close()
	assertTreeGone(t, nil, marker, "pidns")
}

// TestPoolFailuresEqualCold: a strategy that fails reports, forked from a
// template, the failure a cold start reports: the same kind, hook, message,
// traceback and frames (the template's own frames never show), event and
// discarded commands.
func TestPoolFailuresEqualCold(t *testing.T) {
	for _, name := range []string{"exception_helper.py", "syntax_error.py", "os_exit.py", "no_on_data.py"} {
		t.Run(name, func(t *testing.T) {
			mustStart := started(t)
			cfg, _ := poolConfig(t, findPython(t), filepath.Join("testdata", "strategies", name), shortLimits())
			cold := waitJob(t, mustStart(Start(context.Background(), cfg, newReplay(10, 1))))
			if cold.Status != job.StatusFailed {
				t.Fatalf("the cold run: %s", cold.Status)
			}
			pool := newPool(t, cfg, 1)
			for run := range 2 {
				warm := waitJob(t, mustStart(pool.Start(context.Background(), cfg, newReplay(10, 1))))
				sameRun(t, fmt.Sprintf("run %d", run), cold, warm)
			}
			if st := pool.Stats(); st.Warm != 2 {
				t.Errorf("pool stats %+v, want 2 warm starts", st)
			}
		})
	}
}

// templatesOf lists the pids of live template interpreters that carry the
// test's marker: their command line has --template, and they lie one PID
// namespace below the test's (a run forked from a template has the same
// command line, one namespace further down). A fork's intermediate process
// is listed too for the instant it lives: call it when no fork is under way.
func templatesOf(marker string) []int {
	return proctest.WarmTemplates(func(p proctest.Proc) bool { return p.HasEnv("STRATBENCH_TEST_MARKER=" + marker) })
}

// TestPoolWarmStartsTheTemplatesAhead: Warm starts the pool's templates,
// one for every slotsPerTemplate slots, before any job (the slots' jobs
// then fork from them: the same interpreters, no new one), and Close
// during a Warm still under way leaves no template and no goroutine behind.
func TestPoolWarmStartsTheTemplatesAhead(t *testing.T) {
	mustStart := started(t)
	cfg, marker := poolConfig(t, findPython(t), "testdata/strategies/ok_counter.py", shortLimits())
	slots := slotsPerTemplate + 1
	want := poolTemplates(slots, runtime.NumCPU()) // 2, on a machine of 2 CPUs or more
	pool := newPool(t, cfg, slots)
	pool.Warm()
	pool.Warm() // a second call does nothing
	var ahead []int
	for deadline := time.Now().Add(30 * time.Second); len(ahead) < want; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("templates before any job: %v, want %d", ahead, want)
		}
		ahead = templatesOf(marker)
	}
	var jobs []*Job
	for range slots {
		jobs = append(jobs, mustStart(pool.Start(context.Background(), cfg, newReplay(20, 1))))
	}
	for _, j := range jobs {
		if rep := waitJob(t, j); rep.Status != job.StatusPassed {
			t.Errorf("%s, %+v", rep.Status, rep.Failure)
		}
	}
	if st, now := pool.Stats(), templatesOf(marker); st.Warm != int64(slots) || len(now) != want || !slices.Equal(now, ahead) {
		t.Errorf("stats %+v, templates %v after the jobs, %v before: want %d warm starts from the same %d templates", st, now, ahead, slots, want)
	}
	pool.Close()
	assertTreeGone(t, nil, marker, "pidns")

	// Closed while its templates start.
	cfg, marker = poolConfig(t, interpreter(t, "numpy"), "python/example/numpy_strategy.py", shortLimits())
	pool = newPool(t, cfg, 2)
	pool.Warm()
	pool.Close()
	assertTreeGone(t, nil, marker, "pidns")
	if left := leakcheck.Leaked("stratbench/engine.(*Pool)", "stratbench/engine.(*warmLauncher)"); left != "" {
		t.Errorf("goroutines of the pool are left:\n%s", left)
	}
}

// TestPoolTemplatesAreBoundedByTheCPUs: one template for every
// slotsPerTemplate slots, never more than the CPUs, at least one: --jobs
// 200 on 2 CPUs started 50 templates, a million slots 250,000.
func TestPoolTemplatesAreBoundedByTheCPUs(t *testing.T) {
	for _, tc := range []struct{ slots, cpus, want int }{
		{1, 2, 1}, {4, 2, 1}, {5, 2, 2}, {8, 2, 2}, {200, 2, 2}, {1_000_000, 2, 2},
		{16, 64, 4}, {4096, 64, 64}, {3, 1, 1}, {8, 1, 1}, {1, 0, 1},
	} {
		if got := poolTemplates(tc.slots, tc.cpus); got != tc.want {
			t.Errorf("poolTemplates(%d slots, %d CPUs) = %d, want %d", tc.slots, tc.cpus, got, tc.want)
		}
	}
}

// TestPoolTemplateKeepsItsLimits: a template is supervised with the job's
// memory limit, though sampled less often than a run: over it (an
// interpreter that has imported the bridge holds more than 12 MiB), it is
// killed while the pool is open, not left to run until Close; the same
// template under the default limit, started first, still runs then.
func TestPoolTemplateKeepsItsLimits(t *testing.T) {
	py := findPython(t)
	roomyCfg, roomyMarker := poolConfig(t, py, "testdata/strategies/ok_counter.py", shortLimits())
	roomy := newPool(t, roomyCfg, 1)
	roomy.Warm()
	for deadline := time.Now().Add(10 * time.Second); len(templatesOf(roomyMarker)) == 0; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the template under the default limit did not start in 10 s (stats %+v)", roomy.Stats())
		}
	}
	limits := shortLimits()
	limits.MemoryBytes = 12 << 20
	cfg, marker := poolConfig(t, py, "testdata/strategies/ok_counter.py", limits)
	pool := newPool(t, cfg, 1)
	pool.Warm()
	seen := false
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		alive := len(markedProcesses(marker)) > 0
		seen = seen || alive
		if st := pool.Stats(); st.ColdReason != "" {
			// Killed before it said it was ready: the pool starts cold.
			if !strings.Contains(st.ColdReason, "memory") {
				t.Errorf("the pool went cold for %q, want the template's memory limit", st.ColdReason)
			}
			t.Logf("killed before it was ready: %s", st.ColdReason)
			break
		}
		if seen && !alive {
			t.Logf("killed after it was ready")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the template over its 12 MiB limit still runs after 10 s (processes %v)", markedProcesses(marker))
		}
	}
	if len(templatesOf(roomyMarker)) == 0 || roomy.Stats().ColdReason != "" {
		t.Errorf("the template under the default limit ended too (stats %+v): the limit is not what killed the other", roomy.Stats())
	}
	assertTreeGone(t, nil, marker, "pidns")
	roomy.Close()
	assertTreeGone(t, nil, roomyMarker, "pidns")
}

// TestTemplateOutputTailIsBounded: the tail of a template's output that its
// errors quote keeps the end of the last lines, at most tailTextBytes, cut
// at a character boundary.
func TestTemplateOutputTailIsBounded(t *testing.T) {
	tail := newTailLines(8)
	for i := range 10 {
		tail.add(supervisor.Line{Text: strings.Repeat("é", 32<<10) + fmt.Sprintf(" line %d", i)})
	}
	got := tail.text()
	if len(got) > tailTextBytes+len("…") || !utf8.ValidString(got) || !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, " line 9") {
		t.Errorf("tail of %d bytes, valid UTF-8 %v, starts %q, ends %q", len(got), utf8.ValidString(got), got[:8], got[len(got)-8:])
	}
	short := newTailLines(8)
	short.add(supervisor.Line{Text: "a"})
	short.add(supervisor.Line{Text: "b"})
	if got := short.text(); got != "a | b" {
		t.Errorf("short tail %q, want %q", got, "a | b")
	}
}

// TestWorkersRunTheBridgeBytecode: a cold worker and a template run the
// bridge's bytecode, compiled for the interpreter; an interpreter that
// names no bytecode tag, or whose file changed since it was probed, runs
// the source.
func TestWorkersRunTheBridgeBytecode(t *testing.T) {
	py := findPython(t)
	if py.BytecodeTag == "" {
		t.Fatalf("the probe named no bytecode tag: %+v", py)
	}
	untagged := *py
	untagged.BytecodeTag = ""
	// Another file at the executable's path than the one probed (as a
	// virtual environment made again leaves): its bytecode may not run.
	replaced := *py
	replaced.exe.Ino++
	for _, tc := range []struct {
		name string
		py   *Interpreter
		want string
	}{
		{"tagged", py, "stratbench_bridge." + py.BytecodeTag + ".pyc"},
		{"untagged", &untagged, "stratbench_bridge.py"},
		{"replaced since the probe", &replaced, "stratbench_bridge.py"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, marker := poolConfig(t, tc.py, "testdata/strategies/bridge_file.py", shortLimits())
			mustStart := started(t)
			cold := mustStart(Start(context.Background(), cfg, newReplay(5, 1)))
			waitJob(t, cold)
			pool := newPool(t, cfg, 1)
			warm := mustStart(pool.Start(context.Background(), cfg, newReplay(5, 1)))
			waitJob(t, warm)
			if st := pool.Stats(); st.Warm != 1 {
				t.Fatalf("pool stats %+v, want a warm start", st)
			}
			for what, j := range map[string]*Job{"cold": cold, "warm": warm} {
				lines := logText(t, j.Dir())
				want := "stdout: bridge " + filepath.Join(cfg.CacheDir, "bridge-*", tc.want)
				if len(lines) != 1 {
					t.Fatalf("%s: log %q", what, lines)
				}
				if ok, err := filepath.Match(want, lines[0]); err != nil || !ok {
					t.Errorf("%s: %q, want %q", what, lines[0], want)
				}
			}
			pool.Close()
			assertTreeGone(t, nil, marker, "pidns")
		})
	}
}

// TestWarmForksReadNoBridgeFile: a job forked from a live template starts
// no interpreter, so it neither reads nor installs the bridge (a sweep's
// runs would each read and hash its source and bytecode for nothing);
// the interpreters that do start, templates and cold starts, install and
// check it as before.
func TestWarmForksReadNoBridgeFile(t *testing.T) {
	cfg, marker := poolConfig(t, findPython(t), "testdata/strategies/ok_counter.py", shortLimits())
	pool := newPool(t, cfg, 1)
	passedMetadata(t, pool, cfg)
	installed, err := filepath.Glob(filepath.Join(cfg.CacheDir, "bridge-*"))
	if err != nil || len(installed) != 1 {
		t.Fatalf("the bridge's folders after the first job: %q (%v)", installed, err)
	}
	if err := os.RemoveAll(installed[0]); err != nil {
		t.Fatal(err)
	}
	passedMetadata(t, pool, cfg)
	if st := pool.Stats(); st.Warm != 2 || st.Cold != 0 {
		t.Fatalf("pool stats %+v, want two warm starts", st)
	}
	if _, err := os.Stat(installed[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a warm fork installed the bridge again (%v)", err)
	}
	pool.Close()
	assertTreeGone(t, nil, marker, "pidns")

	// A cold start installs it again.
	waitJob(t, started(t)(Start(context.Background(), cfg, newReplay(5, 1))))
	if _, err := os.Stat(installed[0]); err != nil {
		t.Errorf("a cold start did not install the bridge: %v", err)
	}
}

// TestPoolStaysWarmAfterAFailedInstall: when the bridge cannot be installed
// (here the cache folder's path is a file), the templates started ahead
// start none and the job that needed it fails, as a cold start would, and
// the pool's later jobs still start warm once it can be: a passing problem
// of the cache folder does not cost a sweep its warm starts.
func TestPoolStaysWarmAfterAFailedInstall(t *testing.T) {
	cfg, marker := poolConfig(t, findPython(t), "testdata/strategies/ok_counter.py", shortLimits())
	if err := os.WriteFile(cfg.CacheDir, []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	pool := newPool(t, cfg, 1)
	// The templates started ahead fail to install it too.
	pool.Warm()
	pool.warming.Wait()
	if j, err := pool.Start(context.Background(), cfg, newReplay(5, 1)); err == nil {
		if rep, err := j.Wait(); err == nil && rep.Status == job.StatusPassed {
			t.Fatal("a job passed without an installed bridge")
		}
	}
	if err := os.Remove(cfg.CacheDir); err != nil {
		t.Fatal(err)
	}
	passedMetadata(t, pool, cfg)
	passedMetadata(t, pool, cfg)
	if st := pool.Stats(); st.Warm != 2 || st.Cold != 0 || st.ColdReason != "" {
		t.Errorf("pool stats %+v, want two warm starts and no cold reason", st)
	}
	pool.Close()
	assertTreeGone(t, nil, marker, "pidns")
}

// loopmarkSite writes a folder with loopmark, a third-party module for the
// stale-template tests: it appends a line to $LOOPMARK_LOG each time it is
// imported (so the test counts the processes that imported it: a template
// once, or each cold run), and holds a counter each run increments. It
// returns the folder and the log's path.
func loopmarkSite(t *testing.T) (string, string) {
	t.Helper()
	site := t.TempDir()
	src := "import os\n\nwith open(os.environ[\"LOOPMARK_LOG\"], \"a\") as f:\n    f.write(\"imported\\n\")\nCOUNT = 0\n"
	if err := os.WriteFile(filepath.Join(site, "loopmark.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return site, filepath.Join(t.TempDir(), "loopmark.log")
}

// loopmarkStrategy is a strategy whose leading imports are json and, with
// marked, loopmark; its on_finish increments loopmark's counter and
// returns it (0 without loopmark).
func loopmarkStrategy(marked bool) string {
	if !marked {
		return "import json\n\n\ndef on_data(ctx, history):\n    pass\n\n\n" +
			"def on_finish(ctx):\n    return {\"count\": 0}\n"
	}
	return "import json\nimport loopmark\n\n\ndef on_data(ctx, history):\n    pass\n\n\n" +
		"def on_finish(ctx):\n    loopmark.COUNT += 1\n    return {\"count\": loopmark.COUNT}\n"
}

// importedLines counts the imports of loopmark that its log records.
func importedLines(t *testing.T, log string) int {
	t.Helper()
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return 0
	} else if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "imported\n")
}

// TestPoolReplacesAStaleTemplate: once the strategy's leading imports
// change (a third-party import added or removed), the next job does not
// fork from the template that imported for the old ones, nor start cold:
// it waits for a new template, which imported for the new ones, and forks
// from it. loopmark is imported only by the templates whose strategy
// imports it (never by a run), and each run gets it fresh (its counter at
// 1). Refusals as stale are not among those that make the pool go cold
// (maxRefusals).
func TestPoolReplacesAStaleTemplate(t *testing.T) {
	site, log := loopmarkSite(t)
	strategy := filepath.Join(t.TempDir(), "strategy.py")
	cfg, _ := poolConfig(t, findPython(t), "", shortLimits())
	cfg.Strategy = strategy
	cfg.Env["PYTHONPATH"] = site
	cfg.Env["LOOPMARK_LOG"] = log
	pool := newPool(t, cfg, 1)
	// The saves: no loopmark, loopmark, the same again, none, loopmark.
	for i, marked := range []bool{false, true, true, false, true} {
		if err := os.WriteFile(strategy, []byte(loopmarkStrategy(marked)), 0o644); err != nil {
			t.Fatal(err)
		}
		want := `{"count":0}`
		if marked {
			want = `{"count":1}`
		}
		if got := passedMetadata(t, pool, cfg); got != want {
			t.Fatalf("run %d: %s, want %s", i+1, got, want)
		}
		if st := pool.Stats(); marked != slices.Contains(st.Preloaded, "loopmark") {
			t.Fatalf("run %d: the latest template preloaded %v", i+1, st.Preloaded)
		}
	}
	if st := pool.Stats(); st.Warm != 5 || st.Cold != 0 || st.ColdReason != "" || st.Stale != 3 || st.Templates != 4 {
		t.Errorf("pool stats %+v: want 5 warm jobs from 4 templates, 3 replaced as stale", st)
	}
	if n := importedLines(t, log); n != 2 {
		t.Errorf("loopmark was imported %d times, want twice (by the two templates of the strategy that imports it)", n)
	}
}

// TestPoolReplacesATemplateOfAReplacedInterpreter: once the interpreter's
// file is replaced (an upgrade), a cold start would run the new one, so
// the next job forks from a new template rather than from the one the old
// interpreter runs.
func TestPoolReplacesATemplateOfAReplacedInterpreter(t *testing.T) {
	base := findPython(t)
	venv := t.TempDir()
	if out, err := exec.Command(base.Executable, "-m", "venv", "--copies", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Skipf("venv: %v: %s", err, out)
	}
	bin := filepath.Join(venv, "bin", "python")
	py, err := FindPython(context.Background(), bin)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := poolConfig(t, py, "testdata/strategies/noop.py", shortLimits())
	pool := newPool(t, cfg, 1)
	passedMetadata(t, pool, cfg)
	passedMetadata(t, pool, cfg)
	if st := pool.Stats(); st.Warm != 2 || st.Templates != 1 {
		t.Fatalf("pool stats %+v: want 2 warm jobs of one template", st)
	}
	// The upgrade: a new file in the interpreter's place.
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin+".new", b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(bin+".new", bin); err != nil {
		t.Fatal(err)
	}
	passedMetadata(t, pool, cfg)
	if st := pool.Stats(); st.Warm != 3 || st.Templates != 2 {
		t.Errorf("pool stats %+v: want the third job forked from a second template", st)
	}
}

// warmedTemplate warms pool and returns the pid of its one template as
// soon as it appears, most often before it is ready.
func warmedTemplate(t *testing.T, pool *Pool, marker string) int {
	t.Helper()
	pool.Warm()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if pids := templatesOf(marker); len(pids) > 0 {
			return pids[0]
		}
		if time.Now().After(deadline) {
			t.Fatal("no template 30 s after Warm")
		}
	}
}

// stalledTemplate is warmedTemplate, the template stopped (SIGSTOP) as it
// appears and continued (SIGCONT) when the test ends.
func stalledTemplate(t *testing.T, pool *Pool, marker string) int {
	t.Helper()
	pid := warmedTemplate(t, pool, marker)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	return pid
}

// TestPoolJobWaitingForItsTemplateIsKilled: a job whose template does not
// start (the strategy's leading third-party import hangs in it) ends as
// soon as it is killed (its ctx), saved as stopped, instead of when the
// startup limit gives up on the template: a second signal to --ci
// --watch, or the workbench's second q, waited up to a minute there. (A
// stop waits, as a cold start's startup completes before it: see
// TestPoolStopLeavesTheStartAlone.)
func TestPoolJobWaitingForItsTemplateIsKilled(t *testing.T) {
	site, folder := t.TempDir(), t.TempDir()
	hang := "import time\nprint('hangs_at_import: importing', flush=True)\ntime.sleep(1000)\n"
	if err := os.WriteFile(filepath.Join(site, "hangs_at_import.py"), []byte(hang), 0o644); err != nil {
		t.Fatal(err)
	}
	strategy := filepath.Join(folder, "strategy.py")
	if err := os.WriteFile(strategy, []byte("import hangs_at_import\n\n\ndef on_data(ctx, history):\n    pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	limits := shortLimits() // a startup limit of a minute: a job the test must not wait for
	cfg, marker := poolConfig(t, findPython(t), "testdata/strategies/ok_counter.py", limits)
	cfg.Strategy = strategy
	cfg.Env["PYTHONPATH"] = site
	pool := newPool(t, cfg, 1)
	warmedTemplate(t, pool, marker) // started, its import hanging
	ctx, kill := context.WithCancel(context.Background())
	defer kill()
	j := started(t)(pool.Start(ctx, cfg, newReplay(5, 1)))
	begin := time.Now()
	kill()
	select {
	case <-j.Done():
	case <-time.After(limits.Startup / 2):
		pool.Close()
		t.Fatalf("the job waiting for its template has not ended %v after it was killed", limits.Startup/2)
	}
	rep := waitJob(t, j)
	t.Logf("ended %v after it was killed", time.Since(begin).Round(time.Millisecond))
	if rep.Status != job.StatusStopped || rep.Failure != nil {
		t.Errorf("%s, %+v; want stopped", rep.Status, rep.Failure)
	}
	if st := pool.Stats(); st.Templates != 0 {
		t.Errorf("pool stats %+v: a template started, the import did not hang in it", st)
	}
	pool.Close()
	assertTreeGone(t, nil, marker, "pidns")
}

// TestPoolStartsColdPastATemplateThatCannotStart: a job waiting while its
// template starts, and the start fails (the template stops as it appears:
// the startup limit gives up on it), starts cold, rather than trying
// another template of the same imports and paying the startup limit twice
// before the cold start.
func TestPoolStartsColdPastATemplateThatCannotStart(t *testing.T) {
	limits := shortLimits()
	limits.Startup = 4 * time.Second // the stalled template's wait; room for a busy machine's cold start
	cfg, marker := poolConfig(t, findPython(t), "testdata/strategies/ok_counter.py", limits)
	pool := newPool(t, cfg, 1)
	stalledTemplate(t, pool, marker)
	rep := waitJob(t, started(t)(pool.Start(context.Background(), cfg, newReplay(5, 1))))
	if rep.Status != job.StatusPassed {
		t.Fatalf("%s, %+v", rep.Status, rep.Failure)
	}
	if st := pool.Stats(); st.Warm != 0 || st.Cold != 1 || st.ColdReason == "" {
		t.Errorf("pool stats %+v, want the job started cold and the pool cold since", st)
	}
	pool.Close()
	assertTreeGone(t, nil, marker, "pidns")
}

// TestPoolStopLeavesTheStartAlone: Stop never cuts a job's start, the
// wait for its template or the fork's exchange with it: a stopped job's
// startup completes and its on_finish runs, as a cold start's does (the
// workbench's end to end: SIGTERM as the first run starts). Cut, the
// fork's exchange kills the template (supervisor.Template.Fork), and
// with it the runs other slots forked from it, and may kill the job's
// worker as it starts (saved as failed: an attacker's pass hit it once in
// 330 stops). A job stopped while it forks from a stalled template waits
// out the fork's limit, starts cold, and is saved as stopped, on_finish
// run.
func TestPoolStopLeavesTheStartAlone(t *testing.T) {
	limits := shortLimits()
	limits.Startup = 3 * time.Second // the stalled fork's limit; a cold start after it on a busy machine
	cfg, marker := poolConfig(t, findPython(t), "testdata/strategies/ok_counter.py", limits)
	pool := newPool(t, cfg, 1)
	passedMetadata(t, pool, cfg) // the template is live
	live := templatesOf(marker)
	if len(live) != 1 {
		t.Fatalf("templates %v, want the one the first job was forked from", live)
	}
	if err := syscall.Kill(live[0], syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(live[0], syscall.SIGCONT)
	j := started(t)(pool.Start(context.Background(), cfg, newReplay(5, 1)))
	begin := time.Now()
	j.Stop()
	rep := waitJob(t, j)
	waited := time.Since(begin)
	t.Logf("stopped while it forked: ended after %v, %s", waited.Round(time.Millisecond), rep.Status)
	if rep.Status != job.StatusStopped || rep.Hooks[contract.HookOnFinish].Count != 1 {
		t.Errorf("%s, %+v, on_finish %+v; want stopped, on_finish run", rep.Status, rep.Failure, rep.Hooks[contract.HookOnFinish])
	}
	if waited < limits.Startup {
		t.Errorf("the job ended %v after Stop, before the fork's limit (%v): Stop cut the fork", waited, limits.Startup)
	}
	pool.Close()
	assertTreeGone(t, nil, marker, "pidns")
}

package app

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"stratbench/backtest"
	"stratbench/data"
	"stratbench/engine"
	"stratbench/internal/fixtures"
	"stratbench/internal/testenv"
	"stratbench/job"
	"stratbench/supervisor"
)

var record = flag.Bool("record", false, "record the workbench fixtures (testdata/workbench) from real runs")

// TestRecordWorkbenchFixtures runs real strategies through the engine and
// the backtest and records what their event streams showed: the fixtures
// of the workbench's golden screens and of the text outputs' tests. It runs
// only with -record (it takes about half a minute, a timeout takes its 5 s);
// the fixtures are committed.
func TestRecordWorkbenchFixtures(t *testing.T) {
	if !*record {
		t.Skip("records only with -record")
	}
	root := testenv.Root(t)
	host, err := supervisor.NewHost()
	if err != nil {
		t.Fatal(err)
	}
	py, err := engine.FindPython(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	strategies := filepath.Join(root, "testdata", "strategies")
	for _, tc := range []struct {
		name, strategy string
		limits         func(*job.Limits)
		modules        []string // the strategy imports these: the tests' environment runs it
		market         func(*backtest.Options, *data.Window)
		params         []string
		snapshot       func(job.Event) bool // stop the job once it holds, and keep the snapshot from then
	}{
		{name: "passed", strategy: filepath.Join(root, "python", "example", "strategy.py")},
		{name: "demo", strategy: filepath.Join(strategies, "workbench_demo.py"), snapshot: func(e job.Event) bool {
			p, ok := e.(job.Progress)
			return ok && p.Total > 0 && p.Done >= p.Total/4
		}},
		{name: "failed-timeout", strategy: filepath.Join(strategies, "infinite_loop.py")},
		// 256 MiB rather than 2 GiB: the memory a shared test machine can spare.
		{name: "failed-memory", strategy: filepath.Join(strategies, "memory_grandchild.py"), limits: func(l *job.Limits) { l.MemoryBytes = 256 << 20 }},
		{name: "failed-processes", strategy: filepath.Join(strategies, "process_spawner.py")},
		{name: "failed-protocol", strategy: filepath.Join(strategies, "fd_garbage.py")},
		{name: "failed-exception", strategy: filepath.Join(strategies, "exception_helper.py")},
		{name: "failed-crash", strategy: filepath.Join(strategies, "os_exit.py")},
		{name: "charts", strategy: filepath.Join(strategies, "chart_matplotlib.py"), modules: []string{"matplotlib"}},
		{name: "failed-syntax", strategy: filepath.Join(strategies, "syntax_error.py")},
		// The example with market settings and a window of its own, params
		// given: the report and the header name them all.
		{name: "passed-market", strategy: filepath.Join(root, "python", "example", "strategy.py"),
			params: []string{"fast=5"},
			market: func(o *backtest.Options, w *data.Window) {
				o.Cash, o.FeeBps, o.SlippageBps, o.AllowShort = 50_000, 2.5, 1, true
				var err error
				if *w, err = data.ParseWindow("2026-01-06T00:00:00Z", "2026-01-08T00:00:00Z"); err != nil {
					t.Fatal(err)
				}
			}},
		// A hook that hangs, caught while it runs (the hooks pane shows its
		// running time), then timed out with the worker's stack.
		{name: "hung", strategy: filepath.Join(strategies, "infinite_loop.py"), snapshot: func(e job.Event) bool {
			p, ok := e.(job.Progress)
			return ok && p.Running != nil && p.Running.Elapsed >= 3200*time.Millisecond
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			limits := job.DefaultLimits()
			if tc.limits != nil {
				tc.limits(&limits)
			}
			opts, window := backtest.DefaultOptions(), data.Window{}
			if tc.market != nil {
				tc.market(&opts, &window)
			}
			sample, err := data.Sample(window)
			if err != nil {
				t.Fatal(err)
			}
			d, err := backtest.NewDriver(sample, opts)
			if err != nil {
				t.Fatal(err)
			}
			py := py
			if tc.modules != nil {
				if py, err = engine.FindPython(context.Background(), testenv.Python(t, tc.modules...)); err != nil {
					t.Fatal(err)
				}
			}
			j, err := engine.Start(context.Background(), engine.Config{Strategy: tc.strategy, Python: py, Home: home,
				Limits: limits, Version: Version, Host: host, Params: tc.params}, d)
			if err != nil {
				t.Fatal(err)
			}
			var live, snap fixtures.Recording
			taken := false
			for e := range j.Events() {
				take(&live, e)
				if tc.snapshot != nil && !taken && tc.snapshot(e) {
					snap, taken = clone(t, &live), true
					j.Stop()
				}
			}
			if _, err := j.Wait(); err != nil {
				t.Fatal(err)
			}
			rec := live
			arts, err := job.ListArtifacts(j.Dir())
			if err != nil {
				t.Fatal(err)
			}
			rec.Artifacts = &arts
			if taken {
				rec = snap
				rec.Report, rec.Equity = live.Report, live.Equity
			}
			normalize(t, &rec, fixtures.ID(tc.name), map[string]string{
				j.Dir():                    "/home/ana/.local/state/stratbench/jobs/" + fixtures.ID(tc.name),
				filepath.Dir(tc.strategy):  "/home/ana/strategies",
				py.Executable:              "/usr/bin/python3",
				cacheDir(t):                "/home/ana/.cache/stratbench",
				filepath.Base(j.Dir()):     fixtures.ID(tc.name),
				filepath.Base(tc.strategy): "strategy.py",
				userHome(t):                "/home/ana",
			})
			fixtures.Save(t, tc.name, &rec)
			t.Logf("%s: %s", tc.name, rec.Report.Status)
		})
	}
}

// userHome is the home folder of whoever records (matplotlib's folder is
// in it).
func userHome(t *testing.T) string {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	return home
}

// maxLogs is how many of the log's last lines a recording keeps.
const maxLogs = 200

// take keeps e in r: the latest of each coalesced event, the log's tail.
func take(r *fixtures.Recording, e job.Event) {
	switch e := e.(type) {
	case job.JobStarted:
		r.Started = e
	case job.WorkerReady:
		r.Ready = &e
	case job.HookStats:
		for i := range r.Stats {
			if r.Stats[i].Hook == e.Hook {
				r.Stats[i] = e
				return
			}
		}
		r.Stats = append(r.Stats, e)
	case job.ResourceSample:
		r.Sample = &e
	case job.LogLines:
		// The tail: what a pane shows, and a fixture of reasonable size.
		r.Logs = append(r.Logs, e.Lines...)
		if n := len(r.Logs) - maxLogs; n > 0 {
			r.Logs = append(r.Logs[:0], r.Logs[n:]...)
		}
	case job.Progress:
		r.Progress = &e
	case job.Finished:
		r.Report, r.Equity = e.Report, e.Equity
	}
}

// clone copies r deeply (through JSON).
func clone(t *testing.T, r *fixtures.Recording) fixtures.Recording {
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var c fixtures.Recording
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// normalize replaces what names this machine and this moment: times move
// so that the job starts at fixtures.T0, the job id is id, and every
// occurrence of a key of paths (in the JSON) becomes its value.
func normalize(t *testing.T, r *fixtures.Recording, id string, paths map[string]string) {
	shift := fixtures.T0.Sub(r.Started.StartedAt)
	move := func(tm time.Time) time.Time {
		if tm.IsZero() {
			return tm
		}
		return tm.Add(shift).UTC()
	}
	r.Started.StartedAt = move(r.Started.StartedAt)
	if r.Sample != nil {
		r.Sample.Time = move(r.Sample.Time)
	}
	for i := range r.Logs {
		r.Logs[i].Time = move(r.Logs[i].Time)
	}
	rep := r.Report
	rep.StartedAt = move(rep.StartedAt)
	if rep.FinishedAt != nil {
		fin := move(*rep.FinishedAt)
		rep.FinishedAt = &fin
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	// Longest first: a job folder contains the home it is in.
	for len(paths) > 0 {
		longest := ""
		for k := range paths {
			if len(k) > len(longest) {
				longest = k
			}
		}
		if longest != "" {
			quoted, _ := json.Marshal(longest)
			with, _ := json.Marshal(paths[longest])
			text = strings.ReplaceAll(text, strings.Trim(string(quoted), `"`), strings.Trim(string(with), `"`))
		}
		delete(paths, longest)
	}
	*r = fixtures.Recording{}
	if err := json.Unmarshal([]byte(text), r); err != nil {
		t.Fatal(err)
	}
	r.Started.JobID, r.Report.JobID = id, id
}

// cacheDir is the user cache folder the engine installs the bridge in.
func cacheDir(t *testing.T) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "stratbench")
}

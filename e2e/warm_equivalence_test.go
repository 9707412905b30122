package e2e

// End-to-end tests that a sweep's run forked from a warm template behaves
// exactly as the same --ci run (an interpreter of its own): the same
// fingerprint, orders hash and metrics, for every strategy of testdata,
// and for the shapes of import that a template could get wrong.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"stratbench/internal/e2etest"
	"stratbench/internal/testenv"
	"stratbench/job"
	"stratbench/sweep"
)

// warmSite holds the third-party modules of testdata/warm's strategies.
var warmSite = filepath.Join("testdata", "warm", "site")

// warmVenv makes a virtual environment whose interpreter imports what the
// test packages' does (.venv-test's site-packages) and testdata/warm/site,
// both through a .pth file, as a package installed beside the strategy's
// would be; and that logs each interpreter's start: a .pth line imports a
// module that appends the interpreter's command line to
// $TMPDIR/interpreters.log (TMPDIR is the env's, which the workers
// inherit). coldBridges counts the bridges that started cold in it.
func warmVenv(t *testing.T) string {
	t.Helper()
	base := testenv.Python(t, "numpy", "pandas", "matplotlib", "plotly")
	dir := t.TempDir()
	if out, err := exec.Command(base, "-m", "venv", "--without-pip", dir).CombinedOutput(); err != nil {
		t.Fatalf("venv: %v\n%s", err, out)
	}
	py := filepath.Join(dir, "bin", "python")
	purelib := func(python string) string {
		out, err := exec.Command(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	site, testSite := purelib(py), purelib(base)
	abs, err := filepath.Abs(warmSite)
	if err != nil {
		t.Fatal(err)
	}
	pth := abs + "\n" + testSite + "\nimport _stratbench_test_startlog\n"
	logger := "import os, sys\n" +
		"with open(os.path.join(os.environ.get('TMPDIR', '/tmp'), 'interpreters.log'), 'a') as f:\n" +
		"    f.write(' '.join(getattr(sys, 'orig_argv', sys.argv)) + '\\n')\n"
	if err := os.WriteFile(filepath.Join(site, "stratbench_test.pth"), []byte(pth), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(site, "_stratbench_test_startlog.py"), []byte(logger), 0o644); err != nil {
		t.Fatal(err)
	}
	return py
}

// coldBridges counts the bridges that started an interpreter of their own
// (not a template) since the log was last cleared, and clears it.
func (e *env) coldBridges() int {
	e.T.Helper()
	path := filepath.Join(e.Tmp, "interpreters.log")
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		e.T.Fatal(err)
	}
	os.Remove(path)
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "stratbench_bridge") && strings.Contains(line, " --fds ") && !strings.Contains(line, " --template ") {
			n++
		}
	}
	return n
}

// sameAsCI runs strategy with --ci and params, and checks that res (a
// sweep's run of the same params) has its fingerprint, orders hash,
// status and metrics. It returns the --ci run's report.
func (e *env) sameAsCI(res sweep.Result, strategy string, common []string, params ...string) *job.Report {
	e.T.Helper()
	args := append([]string{"--ci", "--output", "json", strategy}, common...)
	for _, p := range params {
		args = append(args, "--param", p)
	}
	one := e.Run(args...)
	rep := e2etest.DecodeReport(e.T, one.Stdout)
	metrics, _ := json.Marshal(rep.Metrics)
	var swept bytes.Buffer
	json.Compact(&swept, res.Metrics)
	if res.Fingerprint != rep.Fingerprint || res.OrdersHash != rep.OrdersHash || string(res.Status) != string(rep.Status) ||
		swept.String() != string(metrics) {
		e.T.Errorf("%s %v: the sweep's run differs from its --ci run:\nsweep %s %s %s %s\n--ci  %s %s %s %s", strategy, params,
			res.Status, res.Fingerprint, res.OrdersHash, res.Metrics, rep.Status, rep.Fingerprint, rep.OrdersHash, metrics)
	}
	return rep
}

// TestWarmSweepOfAFolderImportEqualsCI: the shape of a warm run that took
// another branch than its --ci run. The strategy's helper tries to import
// thirdlib, a third-party module (found outside the strategy's folder,
// here through a .pth file) that uses a module of the strategy's folder
// when it can import one; the strategy's leading imports name thirdlib too.
// A template that imported thirdlib with the folder off sys.path cached
// its fallback (lot 1) for every run; a cold start finds the folder's
// stratcfg (lot 7). The template now refuses to serve such a strategy,
// saying why, and the runs start cold, each with its --ci run's results.
func TestWarmSweepOfAFolderImportEqualsCI(t *testing.T) {
	py := warmVenv(t)
	e := newEnv(t)
	strategy := filepath.Join("testdata", "warm", "folder_import", "strategy.py")
	common := []string{"--python", py, "--from", "2026-01-05", "--to", "2026-01-05 06:00:00"}
	r := e.Run(append([]string{"sweep", strategy, "--ci", "--output", "json", "--jobs", "2", "--grid", "k=1,2"}, common...)...)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "started cold") || !strings.Contains(r.Stderr, "imports stratcfg, which the strategy's folder holds") {
		t.Errorf("the sweep's stderr %q does not say its runs started cold, and why", r.Stderr)
	}
	doc := e2etest.DecodeSweep(t, r.Stdout)
	if doc.Counts.Passed != 2 {
		t.Fatalf("counts %+v", doc.Counts)
	}
	for _, res := range doc.Runs {
		k, _ := res.Params.Get("k")
		e.sameAsCI(res, strategy, common, fmt.Sprint("k=", k))
		logs, err := os.ReadFile(filepath.Join(e.Home, "jobs", res.JobID, "logs.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(logs), "lot 7") {
			t.Errorf("run k=%v did not use the folder's stratcfg (lot 7): %s", k, logs)
		}
	}
}

// warmExcluded are the strategies of testdata that TestWarmSweepRunsEqualCI
// leaves out, and why: it compares the runs that pass.
var warmExcluded = map[string]string{
	"attacks/big_int_param.py":          "fails (exception)",
	"attacks/debug_pipe.py":             "fails (timeout)",
	"check/centred_window.py":           "fails (exception): reads bars.csv beside it, which check_test.go puts there",
	"check/lookahead_file.py":           "fails (exception): reads bars.csv beside it, which check_test.go puts there",
	"check/state_file.py":               "differs from run to run by design (state kept in a file beside it, check_test.go)",
	"check/unseeded_random.py":          "differs from run to run by design (an unseeded generator, check_test.go)",
	"attacks/forged_clock.py":           "fails (timeout)",
	"attacks/forged_discards.py":        "fails (exception)",
	"attacks/forged_local_fill.py":      "fails (protocol): a forged local fill, caught with the bundled data's two symbols too",
	"attacks/forged_local_limit.py":     "fails (protocol): a limit order passed off as a market one",
	"attacks/forged_local_through.py":   "fails (protocol): a yield through one call too many",
	"attacks/forged_local_word.py":      "fails (timeout)",
	"attacks/loader_exec.py":            "fails (crash)",
	"attacks/memfd_memory.py":           "fails (exception)",
	"attacks/pipe_memory.py":            "fails (timeout)",
	"attacks/retry_rotation.py":         "fails (timeout)",
	"attacks/report_injection.py":       "its MANIFEST names constants: a sweep refuses a MANIFEST that is not a literal",
	"attacks/terminal_injection.py":     "fails (exception)",
	"attacks/thread_burst.py":           "fails (processes: over the 2,048-task bound)",
	"report/lt_message.py":              "fails (exception)",
	"strategies/artifact_hog.py":        "fails (timeout)",
	"strategies/bad_limit.py":           "fails (exception)",
	"strategies/both_hooks.py":          "fails (exception: defines on_data and on_bars)",
	"strategies/daemon_holds_pipes.py":  "fails (timeout)",
	"strategies/debug_forged_prompt.py": "fails (exception: the debugger's pipe leads nowhere outside the workbench)",
	"strategies/exception_helper.py":    "fails (exception)",
	"strategies/execution_amplifier.py": "fails (timeout)",
	"strategies/fake_idle.py":           "fails (timeout)",
	"strategies/fake_stop.py":           "fails (protocol)",
	"strategies/fd_garbage.py":          "fails (protocol)",
	"strategies/fill_flood.py":          "runs for minutes",
	"strategies/finish_huge.py":         "fails (protocol)",
	"strategies/finish_loop.py":         "fails (timeout, after 60 s)",
	"strategies/hold_first_bar.py":      "its one param is an empty string, which no --grid gives",
	"strategies/huge_exception.py":      "fails (exception)",
	"strategies/ignore_sigterm.py":      "fails (timeout)",
	"strategies/infinite_loop.py":       "fails (timeout)",
	"strategies/memory_grandchild.py":   "fails (memory)",
	"strategies/no_on_data.py":          "fails (exception)",
	"strategies/orphan_sleeper.py":      "runs for minutes",
	"strategies/os_exit.py":             "fails (crash)",
	"strategies/process_spawner.py":     "fails (processes)",
	"strategies/reject_flood.py":        "runs for minutes",
	"strategies/rejection_chain.py":     "fails (timeout)",
	"strategies/resting_flood.py":       "runs for minutes",
	"strategies/setsid_escape.py":       "fails (memory)",
	"strategies/slow_finish.py":         "passes, but sleeps 15 s in on_finish: nothing of its imports differs",
	"strategies/slow_on_finish.py":      "passes, but sleeps 10 s in on_finish: nothing of its imports differs",
	"strategies/syntax_error.py":        "fails (exception)",
}

// warmCold are the strategies whose sweeps start cold, and the reason the
// sweep gives.
var warmCold = map[string]string{
	"warm/folder_import/strategy.py": "imports stratcfg, which the strategy's folder holds",
}

// TestWarmSweepRunsEqualCI: every strategy of testdata that passes, and
// the examples, run both ways: as a --ci run (an interpreter of its own)
// and as a sweep's run of the same params forked from a warm template
// (one combination, --jobs 1). The two have the same fingerprint, orders
// hash, status and metrics, and the sweep's run started no interpreter
// (the interpreters' start log: it was forked) unless the template
// refused to serve the strategy (warmCold), which the sweep says. The
// interpreter sees testdata/warm/site through a .pth file, as installed
// packages: testdata/warm's strategies import from it what a template
// could cache differently from a cold start. Through the binary: the
// template and its runs are started as a sweep starts them (the
// interpreter probed, the templates started beside the data's load), and
// the --ci run as a user's.
func TestWarmSweepRunsEqualCI(t *testing.T) {
	py := warmVenv(t)
	var strategies []string
	for _, pattern := range []string{"testdata/*/*.py", "testdata/*/*/*.py", "python/example/*.py"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte("def on_data(")) {
				strategies = append(strategies, f)
			}
		}
	}
	sort.Strings(strategies)
	seen := map[string]bool{}
	for _, s := range strategies {
		name := filepath.ToSlash(strings.TrimPrefix(s, "testdata"+string(filepath.Separator)))
		seen[name] = true
		if why, ok := warmExcluded[name]; ok {
			t.Logf("%s: left out: %s", name, why)
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			common := []string{"--python", py, "--from", "2026-01-05", "--to", "2026-01-05 06:00:00"}
			first := e2etest.DecodeReport(t, e.Run(append([]string{"--ci", "--output", "json", s}, common...)...).Stdout)
			if first.Status != job.StatusPassed {
				t.Fatalf("--ci: %s %+v: put it in warmExcluded, saying why", first.Status, first.Failure)
			}
			param := gridParam(first.Strategy.Params)
			if n := e.coldBridges(); n != 1 {
				t.Fatalf("the --ci run started %d bridges, want 1: the start log does not work", n)
			}
			r := e.Run(append([]string{"sweep", s, "--ci", "--output", "json", "--jobs", "1", "--grid", param}, common...)...)
			doc := e2etest.DecodeSweep(t, r.Stdout)
			if len(doc.Runs) != 1 {
				t.Fatalf("the sweep: exit %d, %d runs\n%s", r.Code, len(doc.Runs), r.Stderr)
			}
			cold := e.coldBridges()
			if want, ok := warmCold[name]; ok {
				if cold != 1 || !strings.Contains(r.Stderr, want) {
					t.Errorf("the sweep started %d bridges cold, want 1, saying %q: %q", cold, want, r.Stderr)
				}
			} else if cold != 0 && !strings.Contains(r.Stderr, "of this sweep's runs started cold") || cold == 0 && strings.Contains(r.Stderr, "started cold") {
				// A run may start cold when its template refused the fork
				// (a file its imports read, matplotlib's font cache,
				// changed meanwhile): the sweep says so.
				t.Errorf("the sweep's run started an interpreter of its own (%d), not forked from a template: %q", cold, r.Stderr)
			}
			e.sameAsCI(doc.Runs[0], s, common, param)
		})
	}
	for name := range warmExcluded {
		if _, err := os.Stat(filepath.Join("testdata", name)); err != nil {
			t.Errorf("warmExcluded names %s, which is not a file of testdata: %v", name, err)
		}
	}
	for name := range warmCold {
		if !seen[name] {
			t.Errorf("warmCold names %s, which is not a strategy of testdata", name)
		}
	}
}

// gridParam is a --grid (and --param) of one value for a sweep of one
// combination: the strategy's first declared param at its default,
// preferring a number or a bool, else one it does not declare (any name is
// taken when it declares none).
func gridParam(params map[string]any) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch v := params[k].(type) {
		case float64, bool:
			return fmt.Sprint(k, "=", v)
		}
	}
	for _, k := range keys {
		if v, ok := params[k].(string); ok && v != "" && !strings.ContainsAny(v, ",:") {
			return k + "=" + v
		}
	}
	return "warm_check=1"
}

// TestSweepThreadsAsCI: a sweep of several runs at once gives each run the
// thread pools a --ci run has (python/env.go's threadEnv: one thread each
// unless the user's environment says otherwise). A sweep with --jobs 2 set
// OMP_NUM_THREADS and friends to the CPUs' share while --ci left them
// unset: OpenBLAS split blas_threads.py's long dot product otherwise, its
// last bits differed, and the run traded another orders hash under --ci's
// fingerprint (found by an attacker's pass).
func TestSweepThreadsAsCI(t *testing.T) {
	e := newEnv(t)
	py := testenv.Python(t, "numpy")
	s := filepath.Join("testdata", "strategies", "blas_threads.py")
	ci := e.Run("--ci", "--output", "json", "--python", py, "--param", "k=1", s)
	if ci.Code != 0 {
		t.Fatalf("--ci: exit %d: %s", ci.Code, ci.Stderr)
	}
	rep := e2etest.DecodeReport(t, ci.Stdout)
	sw := e.Run("sweep", s, "--ci", "--output", "json", "--python", py, "--grid", "k=1,2", "--jobs", "2")
	if sw.Code != 0 {
		t.Fatalf("sweep: exit %d: %s", sw.Code, sw.Stderr)
	}
	for _, run := range e2etest.DecodeSweep(t, sw.Stdout).Runs {
		if k, _ := run.Params.Get("k"); fmt.Sprint(k) == "1" {
			if run.Fingerprint != rep.Fingerprint || run.OrdersHash != rep.OrdersHash {
				t.Errorf("sweep run k=1: fingerprint %s orders hash %s; --ci: %s %s",
					run.Fingerprint, run.OrdersHash, rep.Fingerprint, rep.OrdersHash)
			}
			return
		}
	}
	t.Fatalf("no sweep run of k=1:\n%s", sw.Stdout)
}

package e2e

// End-to-end tests of sweeps through the binary: a sweep's runs equal the
// same --ci runs, grid order, constraints, failures, refusals before any
// job, signals and resume, the JSONL stream, walk-forward folds, and the
// listing and prune commands.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"stratbench/internal/e2etest"
	"stratbench/internal/proctest"
	"stratbench/internal/testenv"
	"stratbench/job"
	"stratbench/sweep"
)

// TestSweepEqualsRunsOneByOne: every run of a grid sweep has the
// fingerprint, orders hash and metrics of the same --ci run, carries the
// sweep's tag in its report, and the indices follow grid order with the
// last --grid varying fastest.
func TestSweepEqualsRunsOneByOne(t *testing.T) {
	e := newEnv(t)
	window := []string{"--from", "2026-01-05", "--to", "2026-01-05 12:00:00"}
	args := append([]string{"sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--jobs", "2",
		"--grid", "fast=3,5", "--grid", "slow=10:30:10"}, window...)
	r := e.Run(args...)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	doc := e2etest.DecodeSweep(t, r.Stdout)
	if doc.Status != sweep.StatusPassed || doc.Counts != (sweep.Counts{Total: 6, Done: 6, Passed: 6}) || len(doc.Runs) != 6 {
		t.Fatalf("status %s counts %+v runs %d", doc.Status, doc.Counts, len(doc.Runs))
	}
	grid := [][2]int64{{3, 10}, {3, 20}, {3, 30}, {5, 10}, {5, 20}, {5, 30}}
	byIndex := map[int64]sweep.Result{}
	for _, res := range doc.Runs {
		byIndex[res.Index] = res
	}
	for i, want := range grid {
		res, ok := byIndex[int64(i)]
		if !ok {
			t.Fatalf("no run with index %d", i)
		}
		fast, _ := res.Params.Get("fast")
		slow, _ := res.Params.Get("slow")
		if fast != want[0] || slow != want[1] {
			t.Fatalf("index %d has params %s, want fast=%d, slow=%d", i, res.Params, want[0], want[1])
		}
		one := e.Run(append([]string{"--ci", "--output", "json", e2etest.SweepStrategy, "--param", fmt.Sprint("fast=", want[0]),
			"--param", fmt.Sprint("slow=", want[1])}, window...)...)
		if one.Code != 0 {
			t.Fatalf("--ci run: exit %d %s", one.Code, one.Stderr)
		}
		rep := e2etest.DecodeReport(t, one.Stdout)
		metrics, _ := json.Marshal(rep.Metrics)
		var swept bytes.Buffer
		json.Compact(&swept, res.Metrics)
		if res.Fingerprint != rep.Fingerprint || res.OrdersHash != rep.OrdersHash || swept.String() != string(metrics) {
			t.Fatalf("index %d differs from its --ci run:\nsweep %s %s %s\n--ci  %s %s %s", i,
				res.Fingerprint, res.OrdersHash, res.Metrics, rep.Fingerprint, rep.OrdersHash, metrics)
		}
		saved := e2etest.DecodeReport(t, e.Run("status", "--output", "json", res.JobID).Stdout)
		if saved.Sweep == nil || saved.Sweep.ID != doc.SweepID || saved.Sweep.Index != int64(i) || saved.Sweep.Fold != nil {
			t.Fatalf("job %s: sweep tag %+v", res.JobID, saved.Sweep)
		}
		if rep.Sweep != nil {
			t.Fatalf("the --ci run has a sweep tag %+v", rep.Sweep)
		}
	}
	// The sweep's runs are not in the plain job list.
	plain := e.Run("jobs").Stdout
	const hiddenNote = "… 6 runs of sweeps not shown (--all lists them too, --sweep ID one sweep's; stratbench sweeps lists the sweeps)\n"
	if n := strings.Count(plain, "\n") - 2; n != 6 || !strings.HasSuffix(plain, hiddenNote) {
		t.Fatalf("jobs lists %d jobs, want the 6 --ci runs and a line saying the sweep's are hidden:\n%s", n, plain)
	}
	if n := strings.Count(e.Run("jobs", "--sweep", doc.SweepID).Stdout, "\n") - 1; n != 6 {
		t.Fatalf("jobs --sweep lists %d jobs, want 6", n)
	}
	if n := strings.Count(e.Run("jobs", "--all").Stdout, "\n") - 1; n != 12 {
		t.Fatalf("jobs --all lists %d jobs, want 12", n)
	}
	// sweeps and status SWEEP_ID show it.
	if l := e.Run("sweeps"); l.Code != 0 || !strings.Contains(l.Stdout, doc.SweepID) || !strings.Contains(l.Stdout, "6/6") {
		t.Fatalf("sweeps: exit %d\n%s", l.Code, l.Stdout)
	}
	st := e.Run("status", doc.SweepID, "--output", "json")
	if st.Code != 0 {
		t.Fatalf("status: exit %d %s", st.Code, st.Stderr)
	}
	if saved := e2etest.DecodeSweep(t, st.Stdout); saved.Best == nil || doc.Best == nil || saved.Best.Index != doc.Best.Index || saved.Counts != doc.Counts {
		t.Fatalf("status: best %+v counts %+v, want %+v %+v", saved.Best, saved.Counts, doc.Best, doc.Counts)
	}
}

// TestSweepConstraintAndFailure: the constraint keeps its combinations by
// index, a failing run is recorded with its kind while the sweep goes on,
// and the sweep then exits 1.
func TestSweepConstraintAndFailure(t *testing.T) {
	e := newEnv(t)
	r := e.Run("sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--jobs", "2", "--from", "2026-01-05", "--to", "2026-01-05 06:00:00",
		"--grid", "fast=2,3,4", "--grid", "slow=10,20", "--constraint", "fast * 5 < slow", "--param", "fail_at=2")
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	doc := e2etest.DecodeSweep(t, r.Stdout)
	// Kept: (2,20) = index 1 and (3,20) = index 3; (2,20) fails.
	if doc.Status != sweep.StatusFailed || doc.Counts != (sweep.Counts{Total: 2, Done: 2, Passed: 1, Failed: 1}) {
		t.Fatalf("status %s counts %+v", doc.Status, doc.Counts)
	}
	if len(doc.Runs) != 2 || doc.Runs[0].Index != 3 || doc.Runs[1].Index != 1 {
		t.Fatalf("runs %+v, want index 3 (passed) then index 1 (failed last)", doc.Runs)
	}
	if f := doc.Runs[1]; f.Status != sweep.RunFailed || f.FailureKind != "exception" {
		t.Fatalf("index 1: status %s kind %q, want failed exception", f.Status, f.FailureKind)
	}
	if doc.Best == nil || doc.Best.Index != 3 {
		t.Fatalf("best %+v, want index 3 (the only one that passed)", doc.Best)
	}
}

// TestSweepSignalStopsAndResumes: the first JSONL line arrives while later
// runs still run; a signal then stops the runs in flight (on_finish runs),
// saves the sweep as stopped and exits 128 + n; --resume runs only what has
// no result, and no index appears twice.
func TestSweepSignalStopsAndResumes(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			// 240 bars of 10 ms each: a run takes 2.4 s, so the run found in
			// flight is still running when the signal arrives.
			p := e.StartSweep("sweep", e2etest.SweepStrategy, "--ci", "--output", "jsonl", "--jobs", "2", "--from", "2026-01-05",
				"--to", "2026-01-05 04:00:00", "--grid", "fast=2:9:1", "--grid", "slow=20", "--param", "slow_ms=10")
			first, ok := p.Next(t, 60*time.Second)
			if !ok {
				t.Fatal("the sweep ended without a line")
			}
			var res sweep.Result
			if err := json.Unmarshal([]byte(first), &res); err != nil || res.Status != sweep.RunPassed {
				t.Fatalf("first line %q: %v", first, err)
			}
			// The first line came while later runs still run: wait until
			// one that started after it is under way (the run that started
			// with the first one is as near its end as the first was), then
			// stop the sweep.
			var started []string
			if reports, err := job.ReadStore(e.Home).List(); err == nil {
				for _, rep := range reports {
					started = append(started, rep.JobID)
				}
			}
			e.waitForRunInFlight(30*time.Second, started...)
			p.Cmd.Process.Signal(tc.sig)
			var lines []string
			for l := range p.Lines {
				lines = append(lines, l)
			}
			err := p.Cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != tc.code {
				t.Fatalf("exit %v, want %d", err, tc.code)
			}
			if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], `{"type":"summary"`) {
				t.Fatalf("no summary line last: %q", lines)
			}
			var summary struct {
				Sweep sweep.Document `json:"sweep"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &summary); err != nil {
				t.Fatal(err)
			}
			id := summary.Sweep.SweepID
			if summary.Sweep.Status != sweep.StatusStopped || summary.Sweep.Counts.Done >= 8 {
				t.Fatalf("summary: status %s counts %+v", summary.Sweep.Status, summary.Sweep.Counts)
			}
			before := e.ReadResults(id)
			if len(before) != len(lines) {
				t.Fatalf("%d results in the file, %d lines printed", len(before), len(lines))
			}
			// The runs in flight were stopped with on_finish.
			reports, err := job.ReadStore(e.Home).List()
			if err != nil {
				t.Fatal(err)
			}
			stopped := 0
			for _, rep := range reports {
				if rep.Status == job.StatusStopped {
					stopped++
					if rep, err = job.ReadStore(e.Home).Load(rep.JobID); err != nil { // List keeps no hooks
						t.Fatal(err)
					}
					if rep.Sweep == nil || rep.Sweep.ID != id || rep.Hooks["on_finish"].Count != 1 {
						t.Fatalf("stopped job %s: sweep %+v, on_finish ran %d times", rep.JobID, rep.Sweep, rep.Hooks["on_finish"].Count)
					}
				}
			}
			if stopped == 0 {
				var seen []string
				for _, rep := range reports {
					seen = append(seen, fmt.Sprintf("%s %s (on_data %d, on_finish %d)", rep.JobID, rep.Status,
						rep.Hooks["on_data"].Count, rep.Hooks["on_finish"].Count))
				}
				t.Fatalf("no run was in flight when the signal came (%d jobs: %s)", len(reports), strings.Join(seen, "; "))
			}
			if st := e2etest.DecodeSweep(t, e.Run("status", id, "--output", "json").Stdout); st.Status != sweep.StatusStopped {
				t.Fatalf("status %s, want stopped", st.Status)
			}
			// The stopped sweep's summary ends with how to resume it.
			if st := e.Run("status", id).Stdout; !strings.HasSuffix(st, "\nresume: stratbench sweep --resume "+id+"\n") {
				t.Fatalf("status of the stopped sweep does not end with the resume command:\n%s", st)
			}

			r := e.Run("sweep", "--resume", id, "--ci", "--output", "jsonl")
			if r.Code != 0 {
				t.Fatalf("resume: exit %d\n%s", r.Code, r.Stderr)
			}
			printed := strings.Split(strings.TrimSpace(r.Stdout), "\n")
			after := e.ReadResults(id)
			if len(after) != 8 || len(printed) != 8-len(before)+1 {
				t.Fatalf("after resume: %d results, %d lines printed (before: %d)", len(after), len(printed), len(before))
			}
			var indices []int64
			for _, res := range after {
				indices = append(indices, res.Index)
			}
			slices.Sort(indices)
			if !slices.Equal(indices, []int64{0, 1, 2, 3, 4, 5, 6, 7}) {
				t.Fatalf("indices after resume: %v", indices)
			}
			if st := e2etest.DecodeSweep(t, e.Run("status", id, "--output", "json").Stdout); st.Status != sweep.StatusPassed || st.Counts.Done != 8 {
				t.Fatalf("after resume: status %s counts %+v", st.Status, st.Counts)
			}
			e.assertNoLeftovers(nil, "pidns")
		})
	}
}

// stoppedSweep runs `sweep STRATEGY ARGS…` (slow runs, one at a time) and
// stops it with SIGINT once a run is in flight: a sweep with runs left to
// resume. It returns the sweep's id, from its summary line, after checking
// the exit code (130).
func (e *env) stoppedSweep(args ...string) string {
	e.T.Helper()
	p := e.StartSweep(append(append([]string{"sweep"}, args...), "--ci", "--output", "jsonl", "--jobs", "1", "--param", "slow_ms=3")...)
	e.waitForRunInFlight(60 * time.Second)
	p.Cmd.Process.Signal(syscall.SIGINT)
	var last string
	for l := range p.Lines {
		last = l
	}
	p.Cmd.Wait()
	var summary struct {
		Sweep sweep.Document `json:"sweep"`
	}
	if code := p.Cmd.ProcessState.ExitCode(); code != 130 || json.Unmarshal([]byte(last), &summary) != nil || summary.Sweep.Status != sweep.StatusStopped {
		e.T.Fatalf("exit %d, want 130 and a stopped sweep's summary line: %q\n%s", code, last, p.Stderr.String())
	}
	return summary.Sweep.SweepID
}

// TestSweepResumeRefusesAnotherPython: a resume whose --python now names
// another Python version than the sweep's runs ran (a symlink repointed,
// here) is refused, exit 2, naming both; with the first one back, it
// resumes. It needs two interpreters of different versions on the machine.
func TestSweepResumeRefusesAnotherPython(t *testing.T) {
	e := newEnv(t)
	versions := map[string]string{} // version: interpreter
	for _, name := range []string{"/usr/bin/python3", "python3", "/usr/local/bin/python3"} {
		out, err := exec.Command(name, "-c", "import platform, sys; print(platform.python_version(), sys.executable)").Output()
		if f := strings.Fields(string(out)); err == nil && len(f) == 2 && versions[f[0]] == "" {
			versions[f[0]] = f[1]
		}
	}
	if len(versions) < 2 {
		t.Skipf("two Python versions are needed, found %v", versions)
	}
	var vs, pys []string
	for v := range versions {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	for _, v := range vs[:2] {
		pys = append(pys, versions[v])
	}
	link := filepath.Join(t.TempDir(), "python")
	repoint := func(target string) {
		os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	repoint(pys[0])
	r := e.Run("sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--python", link, "--grid", "fast=3,4",
		"--from", "2026-01-05", "--to", "2026-01-05 02:00:00")
	if r.Code != 0 {
		t.Fatalf("the sweep: exit %d\n%s", r.Code, r.Stderr)
	}
	id := e2etest.DecodeSweep(t, r.Stdout).SweepID
	repoint(pys[1])
	r = e.Run("sweep", "--ci", "--resume", id)
	if r.Code != 2 || !strings.Contains(r.Stderr, "the runs would not be comparable") ||
		!strings.Contains(r.Stderr, "ran Python "+vs[0]) || !strings.Contains(r.Stderr, "is now Python "+vs[1]) {
		t.Fatalf("resume with %s behind the link: exit %d, want 2 naming Python %s and %s\n%s", pys[1], r.Code, vs[0], vs[1], r.Stderr)
	}
	repoint(pys[0])
	if r = e.Run("sweep", "--ci", "--resume", id); r.Code != 0 || !strings.Contains(r.Stderr, "nothing to resume") {
		t.Fatalf("resume with %s back: exit %d\n%s", pys[0], r.Code, r.Stderr)
	}
}

// TestSweepResumeIgnoresTheVersionRunsReport: the version a resume checks
// is the one stratbench found the interpreter to be, not what the runs
// said: a strategy that rewrites sys.version_info has its reports say
// Python 3.99.0, and its sweep still resumes with the same interpreter.
func TestSweepResumeIgnoresTheVersionRunsReport(t *testing.T) {
	e := newEnv(t)
	src, err := os.ReadFile(e2etest.SweepStrategy)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "lying.py")
	if err := os.WriteFile(path, append([]byte("import sys\nsys.version_info = (3, 99, 0, 'final', 0)\n"), src...), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.Run("sweep", path, "--ci", "--output", "json", "--grid", "fast=3,4", "--from", "2026-01-05", "--to", "2026-01-05 02:00:00")
	if r.Code != 0 {
		t.Fatalf("the sweep: exit %d\n%s", r.Code, r.Stderr)
	}
	doc := e2etest.DecodeSweep(t, r.Stdout)
	rep := e2etest.DecodeReport(t, e.Run("status", doc.Runs[0].JobID, "--output", "json").Stdout)
	if rep.Python.Version != "3.99.0" || doc.RunFlags == nil || doc.RunFlags.PythonVersion == "" || doc.RunFlags.PythonVersion == "3.99.0" {
		t.Fatalf("a run reports Python %q, the sweep recorded %+v; want the run's lie and the probe's version", rep.Python.Version, doc.RunFlags)
	}
	if r := e.Run("sweep", "--ci", "--resume", doc.SweepID); r.Code != 0 || !strings.Contains(r.Stderr, "nothing to resume") {
		t.Fatalf("resume with the same interpreter: exit %d\n%s", r.Code, r.Stderr)
	}
}

// TestSweepResumeRecordsThePythonVersion: a resume of a sweep whose
// document predates run_flags.python_version (checked then against a run's
// report) records the version it found, which later resumes check.
func TestSweepResumeRecordsThePythonVersion(t *testing.T) {
	e := newEnv(t)
	id := e.stoppedSweep(e2etest.SweepStrategy, "--grid", "fast=3,4,5", "--from", "2026-01-05", "--to", "2026-01-05 02:00:00")
	var version string
	editJSON(t, filepath.Join(e.Home, "sweeps", id, sweep.DocumentFile), func(raw map[string]any) {
		flags, _ := raw["run_flags"].(map[string]any)
		version, _ = flags["python_version"].(string)
		if version == "" {
			t.Fatalf("the new sweep recorded no python_version: %v", flags)
		}
		delete(flags, "python_version")
	})
	r := e.Run("sweep", "--ci", "--output", "json", "--resume", id)
	if r.Code != 0 {
		t.Fatalf("resume: exit %d\n%s", r.Code, r.Stderr)
	}
	if doc := e2etest.DecodeSweep(t, r.Stdout); doc.RunFlags == nil || doc.RunFlags.PythonVersion != version {
		t.Fatalf("resumed document's run flags %+v, want python_version %q recorded again", doc.RunFlags, version)
	}
}

// TestSweepResumeRefusesChanges: a resume refuses a strategy, or data,
// that changed since the sweep started.
func TestSweepResumeRefusesChanges(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	src, err := os.ReadFile(e2etest.SweepStrategy)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sma.py")
	os.WriteFile(path, src, 0o644)
	stopped := func(args ...string) string {
		return e.stoppedSweep(append([]string{path, "--grid", "fast=3,4,5"}, args...)...)
	}
	id := stopped("--from", "2026-01-05", "--to", "2026-01-05 02:00:00")
	// A finished sweep too: its resume would run nothing, and refuses all
	// the same.
	r := e.Run("sweep", path, "--ci", "--output", "json", "--from", "2026-01-05", "--to", "2026-01-05 02:00:00", "--grid", "fast=3,4")
	if r.Code != 0 {
		t.Fatalf("exit %d %s", r.Code, r.Stderr)
	}
	finished := e2etest.DecodeSweep(t, r.Stdout).SweepID
	os.WriteFile(path, append(src, []byte("\n# changed\n")...), 0o644)
	for _, id := range []string{id, finished} {
		r := e.Run("sweep", "--resume", id, "--ci")
		if r.Code != 2 || !strings.Contains(r.Stderr, "the strategy") || !strings.Contains(r.Stderr, "changed since the sweep started") {
			t.Fatalf("resume %s: exit %d, want 2\n%s", id, r.Code, r.Stderr)
		}
	}
	// A sweep that is running (its results open, here in this test) is
	// refused as running before anything of it is read: a document read
	// before the lock could be one that the running resume rewrites before
	// it ends, and this one would save its stale copy over it.
	store, err := sweep.OpenStore(e.Home)
	if err != nil {
		t.Fatal(err)
	}
	held, _, err := store.OpenResults(id)
	if err != nil {
		t.Fatal(err)
	}
	r = e.Run("sweep", "--resume", id, "--ci")
	held.Close()
	if want := "stratbench: --resume " + id + ": " + sweep.ErrBusy.Error() + "\n"; r.Code != 2 || r.Stderr != want {
		t.Fatalf("resume of a running sweep: exit %d, want 2 saying it runs (and nothing of its strategy)\n%s", r.Code, r.Stderr)
	}

	// The same with data that changed.
	os.WriteFile(path, src, 0o644)
	data := filepath.Join(dir, "bars.csv")
	writeBars := func(drift float64) {
		var b strings.Builder
		b.WriteString("timestamp,symbol,open,high,low,close,volume\n")
		for i := range 300 {
			p := 100 + float64(i)*drift
			fmt.Fprintf(&b, "%d,X,%g,%g,%g,%g,10\n", 1767225600+60*i, p, p+1, p-1, p)
		}
		os.WriteFile(data, []byte(b.String()), 0o644)
	}
	writeBars(0.01)
	id = stopped("--data", data)
	writeBars(0.02)
	r = e.Run("sweep", "--resume", id, "--ci")
	if r.Code != 2 || !strings.Contains(r.Stderr, "the data") || !strings.Contains(r.Stderr, "changed since the sweep started") {
		t.Fatalf("exit %d, want 2\n%s", r.Code, r.Stderr)
	}
}

// TestSweepWalkForward: the bundled week with train=2d,test=1d has 5 folds
// testing 2026-01-07 … 2026-01-11; each fold's test run is its best train
// combination, run on the test window exactly as --ci runs that window;
// the stitched out-of-sample return compounds the test runs'.
func TestSweepWalkForward(t *testing.T) {
	e := newEnv(t)
	r := e.Run("sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--jobs", "2", "--grid", "fast=3,8", "--grid", "slow=30",
		"--metric", "total_return", "--walk-forward", "train=2d,test=1d")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	doc := e2etest.DecodeSweep(t, r.Stdout)
	wf := doc.WalkForward
	if wf == nil || len(wf.Folds) != 5 || doc.Counts.Total != 15 || doc.Counts.Done != 15 {
		t.Fatalf("walk-forward %+v counts %+v", wf, doc.Counts)
	}
	day := 24 * time.Hour
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	growth := 1.0
	for k, f := range wf.Folds {
		trainFrom, testFrom := start.Add(time.Duration(k)*day), start.Add(time.Duration(k+2)*day)
		if !f.Train.From.Equal(trainFrom) || !f.Train.To.Equal(testFrom) || !f.Test.From.Equal(testFrom) || !f.Test.To.Equal(testFrom.Add(day)) {
			t.Fatalf("fold %d: train %s test %s", k, f.Train, f.Test)
		}
		// The best of the fold's train runs, ranked here.
		var best *sweep.Result
		bestValue := 0.0
		var test *sweep.Result
		for i := range doc.Runs {
			res := &doc.Runs[i]
			if res.Fold == nil || *res.Fold != k {
				continue
			}
			var m struct {
				TotalReturn float64 `json:"total_return"`
			}
			json.Unmarshal(res.Metrics, &m)
			switch res.Phase {
			case sweep.PhaseTrain:
				if best == nil || m.TotalReturn > bestValue || m.TotalReturn == bestValue && res.Index < best.Index {
					best, bestValue = res, m.TotalReturn
				}
			case sweep.PhaseTest:
				test = res
				growth *= 1 + m.TotalReturn
			}
		}
		if best == nil || test == nil || test.Index != best.Index || f.JobID == nil || *f.JobID != test.JobID {
			t.Fatalf("fold %d: best train %+v, test %+v", k, best, test)
		}
		rep := e2etest.DecodeReport(t, e.Run("status", "--output", "json", test.JobID).Stdout)
		if rep.Sweep == nil || rep.Sweep.Fold == nil || *rep.Sweep.Fold != k || rep.Sweep.Phase != "test" {
			t.Fatalf("fold %d test job's tag %+v", k, rep.Sweep)
		}
		if want := testFrom.Format("2006-01-02T15:04:05Z"); rep.Data.From != want {
			t.Fatalf("fold %d test run starts %s, want %s", k, rep.Data.From, want)
		}
		if k == 2 {
			from, to := f.Test.RunFlags()
			fast, _ := best.Params.Get("fast")
			one := e2etest.DecodeReport(t, e.Run("--ci", "--output", "json", e2etest.SweepStrategy, "--from", from, "--to", to,
				"--param", fmt.Sprint("fast=", fast), "--param", "slow=30").Stdout)
			if one.Fingerprint != test.Fingerprint || one.OrdersHash != test.OrdersHash {
				t.Fatalf("fold 2's test run differs from --ci --from %s --to %s", from, to)
			}
		}
	}
	if wf.OutOfSample == nil || wf.OutOfSample.Folds != 5 || !agree(wf.OutOfSample.TotalReturn, growth-1) {
		t.Fatalf("out of sample %+v, want a return of %g", wf.OutOfSample, growth-1)
	}
	// The document's best is the last fold's in-sample best; the text
	// says so, as status and sweeps show it.
	var bestRun *sweep.Result
	for i := range doc.Runs {
		if doc.Best != nil && doc.Runs[i].JobID == doc.Best.JobID {
			bestRun = &doc.Runs[i]
		}
	}
	if bestRun == nil || bestRun.Fold == nil || *bestRun.Fold != 4 || bestRun.Phase != sweep.PhaseTrain {
		t.Fatalf("best %+v is not a run of fold 4's train sweep: %+v", doc.Best, bestRun)
	}
	if st := e.Run("status", doc.SweepID).Stdout; !strings.Contains(st, "best      (fold 4 train, the in-sample best of the latest fold) #") {
		t.Fatalf("status does not say which fold the best is of:\n%s", st)
	}
	if l := e.Run("sweeps").Stdout; !strings.Contains(l, "fold 4 train: "+doc.Best.Params.String()) {
		t.Fatalf("sweeps does not say which fold the best is of:\n%s", l)
	}
}

// TestPrune: prune --sweep removes the sweep and its runs' jobs and
// nothing else; prune removes every finished job and sweep.
func TestPrune(t *testing.T) {
	e := newEnv(t)
	window := []string{"--from", "2026-01-05", "--to", "2026-01-05 02:00:00"}
	var ids []string
	for range 2 {
		r := e.Run(append([]string{"sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--grid", "fast=3,4"}, window...)...)
		if r.Code != 0 {
			t.Fatalf("exit %d %s", r.Code, r.Stderr)
		}
		ids = append(ids, e2etest.DecodeSweep(t, r.Stdout).SweepID)
	}
	if r := e.Run(append([]string{"--ci", e2etest.SweepStrategy}, window...)...); r.Code != 0 {
		t.Fatalf("exit %d", r.Code)
	}
	r := e.Run("prune", "--yes", "--sweep", ids[0])
	if r.Code != 0 || !strings.Contains(r.Stdout, "removed 1 sweep and 2 jobs") {
		t.Fatalf("prune --sweep: exit %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	if e.FolderEntries("sweeps") != 1 || e.FolderEntries("jobs") != 3 {
		t.Fatalf("after prune --sweep: %d sweeps, %d jobs", e.FolderEntries("sweeps"), e.FolderEntries("jobs"))
	}
	// What a stratbench killed while it created a sweep left an hour ago:
	// its hidden folder (sweep.Store.Create), which prune removes too.
	dead := filepath.Join(e.Home, "sweeps", ".creating-123")
	if err := os.MkdirAll(dead, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead, sweep.ResultsFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	hourAgo := time.Now().Add(-time.Hour)
	if err := os.Chtimes(dead, hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	if r := e.Run("prune", "--yes", "--older-than", "1d"); r.Code != 0 || !strings.Contains(r.Stdout, "removed 0 sweeps and 0 jobs") {
		t.Fatalf("prune --older-than 1d: exit %d %s", r.Code, r.Stdout)
	}
	if r := e.Run("prune", "--yes"); r.Code != 0 || !strings.Contains(r.Stdout, "removed 1 sweep and 3 jobs (") ||
		!strings.Contains(r.Stdout, "\nremoved 1 folder that a sweep's start left") ||
		e.FolderEntries("sweeps") != 0 || e.FolderEntries("jobs") != 0 {
		t.Fatalf("prune: exit %d %s; %d sweeps and %d jobs left", r.Code, r.Stdout, e.FolderEntries("sweeps"), e.FolderEntries("jobs"))
	}
}

// TestPruneKeepsResumableSweeps: prune removes finished sweeps only: a
// stopped one (resumable work) and its jobs stay, and prune says so;
// prune --sweep ID, which names it, removes it. A stopped sweep whose
// strategy has changed since cannot be resumed: status says so; prune
// keeps it all the same (it reads no file a record names: see
// TestPruneReadsNothingOutsideTheHome), and --sweep removes it.
func TestPruneKeepsResumableSweeps(t *testing.T) {
	e := newEnv(t)
	strategy := e2etest.CopyStrategy(t, e2etest.SweepStrategy, "sma.py")
	stopped := func() string {
		return e.stoppedSweep(strategy, "--from", "2026-01-05", "--to", "2026-01-05 04:00:00", "--grid", "fast=2:7:1", "--grid", "slow=20")
	}
	id := stopped()
	jobs := e.FolderEntries("jobs")
	r := e.Run("prune", "--yes")
	if r.Code != 0 || !strings.Contains(r.Stdout, "kept 1 stopped sweep, resumable") || !strings.Contains(r.Stdout, id) {
		t.Fatalf("prune: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if e.FolderEntries("sweeps") != 1 || e.FolderEntries("jobs") != jobs {
		t.Fatalf("after prune: %d sweeps, %d jobs; want the stopped sweep and its %d jobs kept", e.FolderEntries("sweeps"), e.FolderEntries("jobs"), jobs)
	}
	if r := e.Run("prune", "--yes", "--sweep", id); r.Code != 0 || e.FolderEntries("sweeps") != 0 || e.FolderEntries("jobs") != 0 {
		t.Fatalf("prune --sweep: exit %d, %d sweeps, %d jobs left\n%s", r.Code, e.FolderEntries("sweeps"), e.FolderEntries("jobs"), r.Stdout)
	}

	id = stopped()
	body, err := os.ReadFile(strategy)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(strategy, append(body, "\n# saved since\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if st := e.Run("status", id); !strings.Contains(st.Stdout, "the strategy has changed since: a resume would refuse this sweep") ||
		strings.Contains(st.Stdout, "resume: stratbench sweep --resume") {
		t.Errorf("status of a stopped sweep whose strategy changed:\n%s", st.Stdout)
	}
	if r := e.Run("prune", "--yes"); r.Code != 0 || e.FolderEntries("sweeps") != 1 || !strings.Contains(r.Stdout, "kept 1 stopped sweep") {
		t.Fatalf("prune of a stopped sweep that cannot resume: exit %d, %d sweeps left; want it kept\n%s",
			r.Code, e.FolderEntries("sweeps"), r.Stdout)
	}
	if r := e.Run("prune", "--yes", "--sweep", id); r.Code != 0 || e.FolderEntries("sweeps") != 0 || e.FolderEntries("jobs") != 0 {
		t.Fatalf("prune --sweep: exit %d, %d sweeps, %d jobs left\n%s", r.Code, e.FolderEntries("sweeps"), e.FolderEntries("jobs"), r.Stdout)
	}
}

// TestSweepIDsShortened: every command that takes a SWEEP_ID takes it
// shortened as a job id is (a unique prefix with or without "sw-", the
// last 4 characters, latest), refuses an ambiguous one listing the
// sweeps, and the shell completes sweep ids.
func TestSweepIDsShortened(t *testing.T) {
	e := newEnv(t)
	window := []string{"--from", "2026-01-05", "--to", "2026-01-05 02:00:00"}
	var ids []string // oldest first
	for range 2 {
		r := e.Run(append([]string{"sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--grid", "fast=3,4"}, window...)...)
		if r.Code != 0 {
			t.Fatalf("exit %d %s", r.Code, r.Stderr)
		}
		ids = append(ids, e2etest.DecodeSweep(t, r.Stdout).SweepID)
	}
	older, newer := ids[0], ids[1]
	// The last 4 characters are random: a job or the other sweep may end
	// with them too, and then they are ambiguous, not this sweep.
	suffix := newer[len(newer)-4:]
	jobIDs, err := job.ReadStore(e.Home).IDs()
	if err != nil {
		t.Fatal(err)
	}
	suffixUnique := !strings.HasSuffix(older, suffix)
	for _, id := range jobIDs {
		suffixUnique = suffixUnique && !strings.HasSuffix(id, suffix)
	}
	// status: sw-latest, the last 4 characters.
	statusOf := func(ref string) *sweep.Document {
		t.Helper()
		r := e.Run("status", ref, "--output", "json")
		if r.Code != 0 {
			t.Fatalf("status %s: exit %d %s", ref, r.Code, r.Stderr)
		}
		return e2etest.DecodeSweep(t, r.Stdout)
	}
	if got := statusOf("sw-latest").SweepID; got != newer {
		t.Fatalf("status sw-latest: %s, want %s", got, newer)
	}
	if suffixUnique {
		if got := statusOf(suffix).SweepID; got != newer {
			t.Fatalf("status %s: %s, want %s", suffix, got, newer)
		}
	}
	// jobs --sweep: latest, the id without its sw-; an ambiguous prefix.
	sweepOfJobs := func(ref string) string {
		t.Helper()
		r := e.Run("jobs", "--sweep", ref, "--output", "json")
		var reps []job.Report
		if err := json.Unmarshal([]byte(r.Stdout), &reps); r.Code != 0 || err != nil || len(reps) != 2 {
			t.Fatalf("jobs --sweep %s: exit %d, %v, %d jobs %s", ref, r.Code, err, len(reps), r.Stderr)
		}
		if reps[0].Sweep == nil || reps[1].Sweep == nil || reps[0].Sweep.ID != reps[1].Sweep.ID {
			t.Fatalf("jobs --sweep %s: tags %+v %+v", ref, reps[0].Sweep, reps[1].Sweep)
		}
		return reps[0].Sweep.ID
	}
	if got := sweepOfJobs("latest"); got != newer {
		t.Fatalf("jobs --sweep latest: the runs of %s, want %s", got, newer)
	}
	if got := sweepOfJobs(strings.TrimPrefix(older, sweep.IDPrefix)); got != older {
		t.Fatalf("jobs --sweep without sw-: the runs of %s, want %s", got, older)
	}
	if r := e.Run("jobs", "--sweep", "2026"); r.Code != 2 || !strings.Contains(r.Stderr, "fits 2 sweeps") ||
		!strings.Contains(r.Stderr, older) || !strings.Contains(r.Stderr, newer) {
		t.Fatalf("jobs --sweep 2026: exit %d, want 2 listing both sweeps: %s", r.Code, r.Stderr)
	}
	if r := e.Run("jobs", "--sweep", "cafe0"); r.Code != 2 || !strings.Contains(r.Stderr, `unknown sweep "cafe0"`) {
		t.Fatalf("jobs --sweep cafe0: exit %d, want 2: %s", r.Code, r.Stderr)
	}
	// jobs --sweep as text: each run's index and its params, the swept
	// one (fast) first.
	text := e.Run("jobs", "--sweep", "latest").Stdout
	for _, want := range []string{"RUN", "PARAMS", `#0 +fast=3 `, `#1 +fast=4 `} {
		if !regexp.MustCompile(want).MatchString(text) {
			t.Fatalf("jobs --sweep latest: no %q (the swept param first):\n%s", want, text)
		}
	}
	// Completion of the three flags that take a SWEEP_ID.
	for _, args := range [][]string{{"__complete", "sweep", "--resume", ""}, {"__complete", "jobs", "--sweep", ""},
		{"__complete", "prune", "--sweep", "sw-"}, {"__complete", "status", "sw-"}} {
		if r := e.Run(args...); !strings.Contains(r.Stdout, older) || !strings.Contains(r.Stdout, newer) {
			t.Fatalf("%v: %q", args, r.Stdout)
		}
	}
	// sweep --resume latest: the newer sweep, finished: nothing to run.
	r := e.Run("sweep", "--resume", "latest", "--ci", "--output", "json")
	if r.Code != 0 || e2etest.DecodeSweep(t, r.Stdout).SweepID != newer {
		t.Fatalf("sweep --resume latest: exit %d %s", r.Code, r.Stderr)
	}
	// prune --sweep with sw- and a prefix of the id.
	ref := older[:len(older)-2]
	if r := e.Run("prune", "--yes", "--sweep", ref); r.Code != 0 || e.FolderEntries("sweeps") != 1 {
		t.Fatalf("prune --sweep %s: exit %d, %d sweeps left %s", ref, r.Code, e.FolderEntries("sweeps"), r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(e.Home, "sweeps", newer)); err != nil {
		t.Fatalf("prune --sweep %s removed the other sweep: %v", ref, err)
	}
}

// TestSweepKilledLosesOnlyRunsInFlight: a stratbench killed with SIGKILL
// mid-sweep keeps every result it printed; the sweep lists as stopped and
// resumes to completion with no index twice.
func TestSweepKilledLosesOnlyRunsInFlight(t *testing.T) {
	e := newEnv(t)
	p := e.StartSweep("sweep", e2etest.SweepStrategy, "--ci", "--output", "jsonl", "--jobs", "2", "--from", "2026-01-05",
		"--to", "2026-01-05 04:00:00", "--grid", "fast=2:7:1", "--grid", "slow=20", "--param", "slow_ms=3")
	var printed []string
	first, ok := p.Next(t, 60*time.Second)
	if !ok {
		t.Fatal("the sweep ended without a line")
	}
	printed = append(printed, first)
	// The run in flight is one that started after the first result: the
	// first two runs start together and take as long, so the second may
	// be ending as the first's result is read.
	inFlight := e.waitForRunSaying(30*time.Second, "first bar", nil, e.jobIDs()...)
	p.Cmd.Process.Kill()
	for l := range p.Lines {
		printed = append(printed, l)
	}
	p.Cmd.Wait()
	var id string
	entries, _ := os.ReadDir(filepath.Join(e.Home, "sweeps"))
	if len(entries) != 1 {
		t.Fatalf("%d sweep folders", len(entries))
	}
	id = entries[0].Name()
	results := e.ReadResults(id)
	if len(results) < len(printed) || len(results) >= 6 {
		t.Fatalf("%d results kept, %d printed before the kill (of 6)", len(results), len(printed))
	}
	// Its status counts what results.jsonl holds, though sweep.json was
	// last written up to a second before the kill.
	st := e2etest.DecodeSweep(t, e.Run("status", id, "--output", "json").Stdout)
	if st.Status != sweep.StatusStopped || st.Counts.Done != int64(len(results)) || len(st.Runs) != len(results) {
		t.Fatalf("a killed sweep shows as %s with %+v and %d runs, want stopped with the %d results kept",
			st.Status, st.Counts, len(st.Runs), len(results))
	}
	// A run in flight is recovered as a crash with the params it ran
	// with, which `jobs --sweep` shows.
	jobs := e.Run("jobs", "--sweep", id).Stdout
	line := ""
	for _, l := range strings.Split(jobs, "\n") {
		if strings.HasPrefix(l, inFlight) {
			line = l
		}
	}
	if !strings.Contains(line, "crash") || !strings.Contains(line, " fast=") || !strings.Contains(line, " slow=20 ") {
		t.Fatalf("jobs --sweep: the run in flight %s is not a crash with its params:\n%s", inFlight, jobs)
	}
	r := e.Run("sweep", "--resume", id, "--ci", "--output", "json")
	if r.Code != 0 {
		t.Fatalf("resume: exit %d\n%s", r.Code, r.Stderr)
	}
	doc := e2etest.DecodeSweep(t, r.Stdout)
	if doc.Status != sweep.StatusPassed || doc.Counts.Done != 6 || len(e.ReadResults(id)) != 6 {
		t.Fatalf("after resume: %s %+v", doc.Status, doc.Counts)
	}
	// The time it ran, not the time since it started: the killed
	// session's is not known (its sweep.json says 0), so the resumed
	// session's alone, less than the span from the first start.
	if span := doc.FinishedAt.Sub(doc.StartedAt).Milliseconds(); doc.DurationMS >= span {
		t.Errorf("duration_ms %d, want the resumed session's, less than the %d ms since the sweep started", doc.DurationMS, span)
	}
	// A finished sweep resumes to nothing, and is left as it is.
	before, err := os.ReadFile(filepath.Join(e.Home, "sweeps", id, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	again := e.Run("sweep", "--resume", id, "--ci", "--output", "json")
	if again.Code != 0 || !strings.Contains(again.Stderr, "has finished (passed): every run has its result, nothing to resume") ||
		e2etest.DecodeSweep(t, again.Stdout).Counts != doc.Counts {
		t.Fatalf("resume of a finished sweep: exit %d\n%s\n%s", again.Code, again.Stdout, again.Stderr)
	}
	// Nor does it reach a cluster it would run nothing on (nothing
	// listens on port 1: reaching for it would fail the resume).
	onRay := e.Run("sweep", "--resume", id, "--ci", "--output", "json", "--executor", "ray", "--ray-address", "http://127.0.0.1:1")
	if onRay.Code != 0 || !strings.Contains(onRay.Stderr, "nothing to resume") {
		t.Fatalf("resume of a finished sweep on Ray: exit %d\n%s", onRay.Code, onRay.Stderr)
	}
	if after, err := os.ReadFile(filepath.Join(e.Home, "sweeps", id, "sweep.json")); err != nil || !bytes.Equal(after, before) {
		t.Errorf("sweep.json changed by a resume that had nothing to run (%v):\n%s\nwas\n%s", err, after, before)
	}
	e.assertNoLeftovers(nil, "pidns")
}

// TestSweepOutputClosedStopsIt: a sweep whose output's reader goes away
// (`stratbench sweep … | head -1`) stops as on a signal, with SIGPIPE's
// exit code: no run is recorded as crashed, the sweep is saved as stopped
// (not left running), and --resume finishes it.
func TestSweepOutputClosedStopsIt(t *testing.T) {
	e := newEnv(t)
	cmd := e.Command("sweep", e2etest.SweepStrategy, "--ci", "--output", "jsonl", "--jobs", "2", "--from", "2026-01-05",
		"--to", "2026-01-05 04:00:00", "--grid", "fast=2:9:1", "--grid", "slow=20", "--param", "slow_ms=3")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	e.Launch(cmd)
	w.Close()
	// The reader takes the first line (the first result) and goes away,
	// as head -1 does.
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("no first line: %v", err)
	}
	r.Close()
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 141 {
		t.Fatalf("exit %d (%v), want 141\nfirst line %s\n%s", code, cmd.ProcessState, line, stderr.String())
	}
	entries, _ := os.ReadDir(filepath.Join(e.Home, "sweeps"))
	if len(entries) != 1 {
		t.Fatalf("%d sweep folders", len(entries))
	}
	id := entries[0].Name()
	if doc := e.ReadSweep(id); doc.Status != sweep.StatusStopped {
		t.Errorf("sweep.json says %s, want stopped", doc.Status)
	}
	reports, err := job.ReadStore(e.Home).List()
	if err != nil {
		t.Fatal(err)
	}
	for _, rep := range reports {
		if rep.Status == job.StatusFailed {
			t.Errorf("job %s failed (%+v): the closed output was taken for the run's crash", rep.JobID, rep.Failure)
		}
	}
	// --resume finishes it. Its output is the sweep's document, printed
	// at its end: to a reader gone by then, SIGPIPE's exit code again, and
	// the sweep finished and saved all the same.
	res := e.runOutputGone("sweep", "--resume", id, "--ci", "--output", "json")
	if res.Code != 141 || len(e.ReadResults(id)) != 8 {
		t.Fatalf("resume: exit %d, %d results, want 141 and 8\n%s", res.Code, len(e.ReadResults(id)), res.Stderr)
	}
	if st := e2etest.DecodeSweep(t, e.Run("status", id, "--output", "json").Stdout); st.Status != sweep.StatusPassed || st.Counts.Done != 8 {
		t.Errorf("after the resume: %s %+v, want passed with 8 done", st.Status, st.Counts)
	}
	e.assertNoLeftovers(nil, "pidns")
}

// TestSweepRunsALostRunAgain: a run whose warm template is killed from
// outside while the run waits is not recorded as the strategy's crash: its
// job stays (failed, saying the template took it), the run starts again as
// a new job and passes, the sweep exits 0 and says on stderr which job was
// lost, and nothing of the sweep is left.
func TestSweepRunsALostRunAgain(t *testing.T) {
	e := newEnv(t)
	strategy := e2etest.CopyStrategy(t, "testdata/strategies/warm_modes.py", "warm_modes.py")
	until := filepath.Join(t.TempDir(), "go")
	// mode=wait sleeps 0.1 s a bar until the file exists: 480 bars, 48 s,
	// long enough for the kill and the run started again to meet it
	// waiting; quick once the file exists.
	p := e.StartSweep("sweep", strategy, "--ci", "--output", "jsonl", "--jobs", "1", "--from", "2026-01-05",
		"--to", "2026-01-05 04:00:00", "--grid", "mode=wait,ok", "--param", "until="+until)
	lost := e.waitForRunSaying(60*time.Second, "waiting", p.Ended)
	e2etest.KillTemplateOf(t, strategy)
	// The run started again waits too, until the file exists.
	again := e.waitForRunSaying(60*time.Second, "waiting", p.Ended, lost)
	if err := os.WriteFile(until, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for range p.Lines {
	}
	err := p.Cmd.Wait()
	if code := p.Cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit %d (%v), want 0\n%s", code, err, p.Stderr.String())
	}
	if !strings.Contains(p.Stderr.String(), "job "+lost+" was lost with its warm template") {
		t.Errorf("stderr %q does not name the lost job %s", p.Stderr.String(), lost)
	}
	rep, err := job.ReadStore(e.Home).Load(lost)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != job.StatusFailed || rep.Failure == nil || rep.Failure.Kind != "crash" ||
		!strings.Contains(rep.Failure.Message, "warm template this run was forked from ended") {
		t.Errorf("the lost job: %s, %+v; want a crash that says the template took it", rep.Status, rep.Failure)
	}
	entries, _ := os.ReadDir(filepath.Join(e.Home, "sweeps"))
	if len(entries) != 1 {
		t.Fatalf("%d sweep folders", len(entries))
	}
	results := e.ReadResults(entries[0].Name())
	if len(results) != 2 {
		t.Fatalf("%d results, want 2: %+v", len(results), results)
	}
	for _, r := range results {
		if r.Status != sweep.RunPassed {
			t.Errorf("index %d: %s (%s), want passed", r.Index, r.Status, r.FailureKind)
		}
		if r.Index == 0 && r.JobID != again {
			t.Errorf("index 0's result is job %s, want the run started again, %s (lost: %s)", r.JobID, again, lost)
		}
	}
	e.assertNoLeftovers(nil, "pidns")
}

// TestSweepRunLostWhileStoppingHasNoResult: a run whose warm template is
// killed while the sweep stops (SIGINT; the run is in its on_finish) is
// neither recorded nor started again: the sweep exits 130, stopped, with
// no result for it (the lost job is kept, failed); --resume runs it.
func TestSweepRunLostWhileStoppingHasNoResult(t *testing.T) {
	e := newEnv(t)
	strategy := e2etest.CopyStrategy(t, "testdata/strategies/warm_modes.py", "warm_modes.py")
	until := filepath.Join(t.TempDir(), "go")
	// mode=linger waits in on_data, then in on_finish, until the file exists.
	p := e.StartSweep("sweep", strategy, "--ci", "--output", "jsonl", "--jobs", "1", "--from", "2026-01-05",
		"--to", "2026-01-05 04:00:00", "--grid", "mode=linger,ok", "--param", "until="+until)
	lost := e.waitForRunSaying(60*time.Second, "waiting", p.Ended)
	p.Cmd.Process.Signal(syscall.SIGINT)
	e.waitForRunSaying(60*time.Second, "finishing", p.Ended)
	e2etest.KillTemplateOf(t, strategy)
	for range p.Lines {
	}
	p.Cmd.Wait()
	if code := p.Cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, p.Stderr.String())
	}
	entries, _ := os.ReadDir(filepath.Join(e.Home, "sweeps"))
	if len(entries) != 1 {
		t.Fatalf("%d sweep folders", len(entries))
	}
	id := entries[0].Name()
	if results := e.ReadResults(id); len(results) != 0 {
		t.Fatalf("results %+v, want none: the one run in flight was lost while the sweep stopped", results)
	}
	if doc := e.ReadSweep(id); doc.Status != sweep.StatusStopped || doc.Counts.Done != 0 {
		t.Errorf("sweep.json: %s, %+v; want stopped with nothing done", doc.Status, doc.Counts)
	}
	// Not started again: the lost job is the sweep's only one, kept, failed.
	reports, err := job.ReadStore(e.Home).List()
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 1 || reports[0].JobID != lost || reports[0].Status != job.StatusFailed {
		for _, rep := range reports {
			t.Logf("job %s: %s", rep.JobID, rep.Status)
		}
		t.Fatalf("%d jobs, want the lost %s alone, failed", len(reports), lost)
	}
	if err := os.WriteFile(until, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.Run("sweep", "--resume", id, "--ci", "--output", "json")
	if r.Code != 0 {
		t.Fatalf("resume: exit %d\n%s", r.Code, r.Stderr)
	}
	results := e.ReadResults(id)
	if len(results) != 2 {
		t.Fatalf("%d results after the resume, want 2: %+v", len(results), results)
	}
	for _, res := range results {
		if res.Status != sweep.RunPassed || res.JobID == lost {
			t.Errorf("index %d: %s from job %s, want passed from a job other than the lost %s", res.Index, res.Status, res.JobID, lost)
		}
	}
	e.assertNoLeftovers(nil, "pidns")
}

// TestSweepRandomSample: --random N --seed S runs N combinations, the same
// ones every time.
func TestSweepRandomSample(t *testing.T) {
	e := newEnv(t)
	indices := func() []int64 {
		r := e.Run("sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--from", "2026-01-05", "--to", "2026-01-05 01:00:00",
			"--grid", "fast=2:9:1", "--grid", "slow=10,20", "--random", "3", "--seed", "7")
		if r.Code != 0 {
			t.Fatalf("exit %d %s", r.Code, r.Stderr)
		}
		doc := e2etest.DecodeSweep(t, r.Stdout)
		var out []int64
		for _, res := range doc.Runs {
			out = append(out, res.Index)
		}
		slices.Sort(out)
		if doc.Counts.Total != 3 || len(out) != 3 {
			t.Fatalf("counts %+v, runs %v", doc.Counts, out)
		}
		return out
	}
	if a, b := indices(), indices(); !slices.Equal(a, b) {
		t.Fatalf("two sweeps with --seed 7 ran %v and %v", a, b)
	}
}

// TestWarmSweepOfNumpyEqualsCIRuns: a sweep of a numpy strategy (whose runs
// start from warm templates that preloaded numpy) gives every run the
// fingerprint, orders hash and metrics of the same --ci run.
func TestWarmSweepOfNumpyEqualsCIRuns(t *testing.T) {
	py := testenv.Python(t, "numpy")
	e := newEnv(t)
	numpyStrategy := filepath.Join("python", "example", "numpy_strategy.py")
	window := []string{"--from", "2026-01-05", "--to", "2026-01-05 08:00:00", "--python", py}
	r := e.Run(append([]string{"sweep", numpyStrategy, "--ci", "--output", "json", "--jobs", "2",
		"--grid", "fast=5,10", "--grid", "slow=20,30"}, window...)...)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	doc := e2etest.DecodeSweep(t, r.Stdout)
	if doc.Counts.Passed != 4 {
		t.Fatalf("counts %+v", doc.Counts)
	}
	for _, res := range doc.Runs {
		fast, _ := res.Params.Get("fast")
		slow, _ := res.Params.Get("slow")
		one := e.Run(append([]string{"--ci", "--output", "json", numpyStrategy, "--param", fmt.Sprint("fast=", fast),
			"--param", fmt.Sprint("slow=", slow)}, window...)...)
		rep := e2etest.DecodeReport(t, one.Stdout)
		metrics, _ := json.Marshal(rep.Metrics)
		var swept bytes.Buffer
		json.Compact(&swept, res.Metrics)
		if res.Fingerprint != rep.Fingerprint || res.OrdersHash != rep.OrdersHash || swept.String() != string(metrics) {
			t.Fatalf("index %d differs from its --ci run", res.Index)
		}
	}
}

// TestSweepForksFromTheProbedInterpreter: a sweep's templates start while
// the interpreter is probed, with the path FindPython will run, unless it
// is a script; when the probe names another interpreter, they are replaced
// by templates of the probed one. Two launchers of the real interpreter
// log their calls: one that is a program (the test binary, re-executed as
// python3) and one that is a script (as a pyenv shim). The program is
// called as a template (only a template started ahead of the probe has
// its path: later ones have the probed interpreter's; the launcher holds
// the probe until that template has reached it, as the probe's answer
// closes it) and the script is not; and every run forks from a template (the first process of its PID
// namespace is stratbench's run init) with either launcher and with the
// interpreter's own path. Templates kept with a launcher's path would
// start every run cold, a job Config the pool does not serve, without a
// word.
func TestSweepForksFromTheProbedInterpreter(t *testing.T) {
	e := newEnv(t)
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatal(err)
	}
	real := strings.TrimSpace(string(out))
	shimDir := t.TempDir()
	shim, shimCalls := filepath.Join(shimDir, "python3"), filepath.Join(shimDir, "calls")
	script := "#!/bin/sh\necho \"$*\" >> '" + shimCalls + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(shim, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), launcherDir)
	program, programCalls := filepath.Join(dir, "python3"), filepath.Join(dir, "calls")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "target"), []byte(real), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, program); err != nil {
		t.Fatal(err)
	}
	templateCalls := func(calls string) int {
		b, err := os.ReadFile(calls)
		if err != nil {
			t.Fatalf("the launcher was never called: %v", err)
		}
		return strings.Count(string(b), templateArg)
	}
	for _, py := range []string{real, program, shim} {
		r := e.Run("sweep", "testdata/sweep/pid1.py", "--ci", "--output", "json", "--jobs", "2", "--python", py,
			"--from", "2026-01-05", "--to", "2026-01-05 01:00:00", "--grid", "k=1:4:1")
		if r.Code != 0 || r.Stderr != "" {
			t.Fatalf("--python %s: exit %d, stderr %q", py, r.Code, r.Stderr)
		}
		doc := e2etest.DecodeSweep(t, r.Stdout)
		if doc.RunFlags == nil || doc.RunFlags.Python != real {
			t.Errorf("--python %s: the sweep's interpreter is %+v, want %s", py, doc.RunFlags, real)
		}
		var firsts []string
		for _, res := range e.ReadResults(doc.SweepID) {
			b, err := os.ReadFile(filepath.Join(e.Home, "jobs", res.JobID, "job.json"))
			if err != nil {
				t.Fatal(err)
			}
			var rep struct {
				Metadata struct {
					PID1    string `json:"pid1"`
					OwnProc bool   `json:"own_proc"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(b, &rep); err != nil {
				t.Fatal(err)
			}
			if !rep.Metadata.OwnProc && py == real {
				// The run's init mounts a /proc of the namespace where the
				// system lets it; elsewhere /proc/1 is not the run's. Known
				// from the runs with the interpreter's own path (no shim:
				// nothing to replace), which fork wherever warm starts work.
				t.Skip("the runs see a /proc of another PID namespace: their first process cannot be read")
			}
			firsts = append(firsts, rep.Metadata.PID1)
		}
		if len(firsts) != 4 || slices.ContainsFunc(firsts, func(s string) bool { return s != "stratbench-run-init" }) {
			t.Errorf("--python %s: the runs' first processes run %q, want stratbench's run init in each of 4 (forked from a template)", py, firsts)
		}
	}
	if n := templateCalls(programCalls); n != 1 {
		t.Errorf("the launcher that is a program ran %d templates, want the one started ahead of the probe (--jobs 2: one template)", n)
	}
	if n := templateCalls(shimCalls); n != 0 {
		t.Errorf("the script launcher ran %d templates, want none: nothing starts ahead for a script", n)
	}
}

// TestSweepSaysWhyRunsStartCold: a sweep whose runs cannot fork from a
// warm template (here the fallback tree tracking, which has no PID
// namespaces) says so once on stderr, with the reason; a warm one says
// nothing of it. The results are the same either way (stdout).
func TestSweepSaysWhyRunsStartCold(t *testing.T) {
	e := newEnv(t)
	args := []string{"sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--jobs", "2", "--from", "2026-01-05",
		"--to", "2026-01-05 06:00:00", "--grid", "fast=2,3", "--grid", "slow=10"}
	warm := e.Run(args...)
	if warm.Code != 0 || strings.Contains(warm.Stderr, "started cold") {
		t.Fatalf("warm sweep: exit %d, stderr %q", warm.Code, warm.Stderr)
	}
	cmd := e.Command(args...)
	cmd.Env = append(cmd.Env, "STRATBENCH_TREE_TRACKING=fallback")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("cold sweep: %v\n%s", err, errb.String())
	}
	want := "stratbench: this sweep's runs started cold, an interpreter each: "
	if n := strings.Count(errb.String(), want); n != 1 || !strings.Contains(errb.String(), "PID-namespace") {
		t.Fatalf("cold sweep's stderr says %q (%d times), want it once with the reason (no PID namespaces)", errb.String(), n)
	}
	cold := e2etest.DecodeSweep(t, out.String())
	if w := e2etest.DecodeSweep(t, warm.Stdout); cold.Counts != w.Counts || cold.Best == nil || w.Best == nil || cold.Best.Value != w.Best.Value {
		t.Fatalf("cold sweep %+v best %+v, warm %+v best %+v", cold.Counts, cold.Best, w.Counts, w.Best)
	}
}

// TestSweepSaysItIsPlanning: a plan that takes long (a constraint tried on
// each of 10^8 combinations) says so on stderr before the first run, and
// SIGINT stops it there: exit 130, no job and no sweep folder, and no
// process of the sweep (its warm templates start beside the plan) left.
func TestSweepSaysItIsPlanning(t *testing.T) {
	e := newEnv(t)
	strategy := e2etest.CopyStrategy(t, e2etest.SweepStrategy, "planning.py")
	cmd := e.Command("sweep", strategy, "--ci", "--output", "jsonl", "--jobs", "1",
		"--grid", "fast=1:1000:1", "--grid", "slow=1:1000:1", "--grid", "fail_at=1:100:1", "--constraint", "fast > slow")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	e.Launch(cmd)
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	const want = "stratbench: planning the sweep: trying the constraint on each of the grid's 100,000,000 combinations before the first run (ctrl-c stops)"
	var got []string
	deadline := time.After(60 * time.Second)
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("stderr ended without the planning note: %q", got)
			}
			got = append(got, l)
			if l == want {
				break wait
			}
		case <-deadline:
			t.Fatalf("no planning note after 60s: %q", got)
		}
	}
	ours := func(p proctest.Proc) bool { return slices.Contains(p.Args, strategy) }
	if len(proctest.WarmTemplates(ours)) == 0 {
		t.Fatal("no warm template while the sweep plans: the check below would prove nothing")
	}
	if e.FolderEntries("jobs")+e.FolderEntries("sweeps") != 0 {
		t.Fatal("a job or sweep folder exists before the plan has ended")
	}
	cmd.Process.Signal(syscall.SIGINT)
	for l := range lines {
		got = append(got, l)
	}
	if code := e.ExitCode(cmd.Wait()); code != 130 {
		t.Fatalf("exit %d, want 130\nstderr: %q", code, got)
	}
	if n := e.FolderEntries("jobs") + e.FolderEntries("sweeps"); n != 0 {
		t.Fatalf("%d job or sweep folders after a stop during the plan", n)
	}
	if left := proctest.PIDs(ours); len(left) != 0 {
		t.Fatalf("processes %v of the sweep left after it exited", left)
	}
}

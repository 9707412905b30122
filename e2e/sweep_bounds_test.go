package e2e

// End-to-end tests of a sweep's own bounds: its concurrent runs and its
// warm templates, whatever --jobs or a resumed document says.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"stratbench/internal/e2etest"
	"stratbench/internal/proctest"
	"stratbench/sweep"
)

// sampledRun is a command run to its end, with what was seen of it while it
// ran: stratbench's own peak RSS and thread count, and the most warm
// templates of its trees alive at once.
type sampledRun struct {
	e2etest.Result
	peakRSS, peakThreads, templates int64
}

// sample runs cmd and follows stratbench (cmd's process: setpriv execs
// it) until it exits; during calls it (when not nil) once stratbench runs.
func (e *attackEnv) sample(cmd *exec.Cmd, during func(pid int)) sampledRun {
	e.t.Helper()
	var r sampledRun
	marker := "TMPDIR=" + e.tmp
	r.Result = watchRun(e.t, cmd, 10*time.Millisecond, func(pid int) {
		r.peakRSS = max(r.peakRSS, peakRSS(pid))
		r.peakThreads = max(r.peakThreads, proctest.Status(pid, "Threads"))
		r.templates = max(r.templates, int64(liveTemplates(marker)))
	}, during)
	return r
}

// liveTemplates counts the warm templates of the processes whose
// environment holds marker: proctest.WarmTemplates, less the intermediate
// process of a fork in flight, which it lists for the instant it lives (its
// parent is the template, or it has ended by the time its parent is read).
func liveTemplates(marker string) int {
	pids := proctest.WarmTemplates(func(p proctest.Proc) bool { return p.HasEnv(marker) })
	n := 0
	for _, pid := range pids {
		// Gone by now (no parent to read): a fork's intermediate too.
		if ppid := int(proctest.Status(pid, "PPid")); ppid != 0 && !slices.Contains(pids, ppid) {
			n++
		}
	}
	return n
}

// noSurvivors fails the test when a process of the env's trees (they all
// inherit its TMPDIR) is alive.
func (e *attackEnv) noSurvivors() {
	e.t.Helper()
	if left := treeProcesses(e.tmp); len(left) > 0 {
		e.t.Errorf("processes of the sweep's trees survived it: %v", left)
	}
}

// TestSweepJobsAreBounded: --jobs is 1 to sweep.MaxJobs (4096): a million
// or a hundred million is refused at once (exit 2, naming the bound),
// where it took 612–797 MiB and 1,700 threads and ignored SIGTERM for
// seconds, or 9.1 GB. --jobs 4096 on 2 combinations runs 2 runs at once
// and no more templates than the CPUs (the build before started 1,024 of
// them, 220 MiB and 1,052 threads, and did not end a minute after
// SIGTERM; --jobs 200, 50). A resumed document whose spec.jobs was edited (1e9, 1000000000,
// -1, 1.5, "x") is refused, exit 2, naming the file and field; --jobs N
// overrides it. A SIGTERM while the runs are in flight stops the sweep
// (143). Every time stratbench's peak RSS stays under 256 MiB, its threads
// under 256, and no process of its trees survives. As root and as an
// unprivileged user.
func TestSweepJobsAreBounded(t *testing.T) {
	for _, mode := range []struct {
		name         string
		unprivileged bool
	}{{"root", false}, {"user", true}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			e := newAttackEnv(t, mode.unprivileged, false)
			window := []string{"--from", "2026-01-05", "--to", "2026-01-05 02:00:00"}
			sweepArgs := func(extra ...string) []string {
				return append(append([]string{"sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--grid", "fast=3,4"}, window...), extra...)
			}
			check := func(what string, r sampledRun) {
				t.Helper()
				t.Logf("%s: exit %d, peak RSS %.1f MiB, %d threads, %d templates at most", what, r.Code, float64(r.peakRSS)/(1<<20), r.peakThreads, r.templates)
				if r.peakRSS > maxHostRSS {
					t.Errorf("%s: stratbench's peak RSS %d MiB, over %d MiB", what, r.peakRSS>>20, maxHostRSS>>20)
				}
				if r.peakThreads > 256 {
					t.Errorf("%s: stratbench ran %d threads", what, r.peakThreads)
				}
				if cpus := int64(runtime.NumCPU()); r.templates > cpus {
					t.Errorf("%s: %d warm templates at once on %d CPUs", what, r.templates, cpus)
				}
				e.noSurvivors()
			}

			for _, jobs := range []string{"1000000", "100000000", "4097", "-1"} {
				r := e.sample(e.command(sweepArgs("--jobs", jobs)...), nil)
				check("--jobs "+jobs, r)
				if r.Code != 2 || !strings.Contains(r.Stderr, "--jobs "+jobs+": ") || !strings.Contains(r.Stderr, "1 to 4096") {
					t.Errorf("--jobs %s: exit %d, want 2 naming the bound\n%s", jobs, r.Code, r.Stderr)
				}
			}
			if entries, _ := os.ReadDir(filepath.Join(e.home, "sweeps")); len(entries) != 0 {
				t.Errorf("a refused --jobs left %d sweep folders", len(entries))
			}

			var doc sweep.Document
			for _, jobs := range []int{200, sweep.MaxJobs} {
				what := fmt.Sprintf("--jobs %d", jobs)
				r := e.sample(e.command(sweepArgs("--jobs", strconv.Itoa(jobs))...), nil)
				check(what, r)
				doc = sweep.Document{}
				if err := json.Unmarshal([]byte(r.Stdout), &doc); r.Code != 0 || err != nil || doc.Counts.Passed != 2 {
					t.Fatalf("%s on 2 combinations: exit %d, %v, counts %+v\n%s", what, r.Code, err, doc.Counts, r.Stderr)
				}
			}

			// A resume of the document with its spec.jobs edited.
			docPath := filepath.Join(e.home, "sweeps", doc.SweepID, sweep.DocumentFile)
			original, err := os.ReadFile(docPath)
			if err != nil {
				t.Fatal(err)
			}
			jobsField := regexp.MustCompile(`"jobs": \d+`)
			if !jobsField.Match(original) {
				t.Fatalf("no spec.jobs in %s", original)
			}
			for _, hostile := range []string{"1e9", "1000000000", "-1", "1.5", `"x"`} {
				edited := jobsField.ReplaceAll(original, []byte(`"jobs": `+hostile))
				if err := os.WriteFile(docPath, edited, 0o644); err != nil {
					t.Fatal(err)
				}
				r := e.sample(e.command("sweep", "--resume", doc.SweepID, "--ci"), nil)
				check("resume, spec.jobs "+hostile, r)
				if r.Code != 2 || !strings.Contains(r.Stderr, docPath) {
					t.Errorf("resume with spec.jobs %s: exit %d, want 2 naming %s\n%s", hostile, r.Code, docPath, r.Stderr)
				}
				if hostile == "1000000000" || hostile == "-1" {
					if !strings.Contains(r.Stderr, "spec.jobs "+hostile+": ") {
						t.Errorf("resume with spec.jobs %s does not name the field:\n%s", hostile, r.Stderr)
					}
					// --jobs N runs it on N slots instead (it has finished:
					// nothing runs).
					r := e.sample(e.command("sweep", "--resume", doc.SweepID, "--ci", "--jobs", "2"), nil)
					check("resume --jobs 2, spec.jobs "+hostile, r)
					if r.Code != 0 || !strings.Contains(r.Stderr, "nothing to resume") {
						t.Errorf("resume --jobs 2 with spec.jobs %s: exit %d\n%s", hostile, r.Code, r.Stderr)
					}
				}
			}

			// SIGTERM while the runs of --jobs 4096 are in flight.
			cmd := e.command(sweepArgs("--jobs", strconv.Itoa(sweep.MaxJobs), "--param", "slow_ms=20")...)
			var sent time.Time
			r := e.sample(cmd, func(pid int) {
				e2etest.WaitForJobSaying(t, 60*time.Second, filepath.Join(e.home, "jobs", "*"), "first bar", nil, []string{doc.Best.JobID})
				sent = time.Now()
				syscall.Kill(pid, syscall.SIGTERM)
			})
			check("SIGTERM at --jobs 4096", r)
			t.Logf("SIGTERM at --jobs 4096: exit %d %s after the signal", r.Code, time.Since(sent).Round(time.Millisecond))
			if r.Code != 143 {
				t.Errorf("SIGTERM while the runs are in flight: exit %d, want 143\n%s", r.Code, r.Stderr)
			}
		})
	}
}

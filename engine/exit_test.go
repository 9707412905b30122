package engine

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stratbench/job"
	"stratbench/sandbox"
)

// TestWorkerExitDoesWhatAnExitDoes: the worker skips the interpreter's
// teardown at its end, but not what a strategy leaves for the exit: atexit
// callbacks run, files never closed are closed outermost first (a buffered
// file's last writes, a gzip file's trailer, under a text wrapper too), and
// a thread still running is waited for (then the interpreter's own exit
// runs, teardown included). Cold and forked from a template,
// and with the sandbox where it runs.
func TestWorkerExitDoesWhatAnExitDoes(t *testing.T) {
	want := strings.Repeat("line\n", 100)
	check := func(t *testing.T, dir string, thread bool) {
		t.Helper()
		files := map[string]bool{"buffered.txt": false, "atexit.txt": false, "binary.gz": true, "text.gz": true}
		if thread {
			files["thread.txt"] = false
		}
		for name, zipped := range files {
			data, err := os.ReadFile(filepath.Join(dir, "artifacts", name))
			if err == nil && zipped {
				var r *gzip.Reader
				if r, err = gzip.NewReader(bytes.NewReader(data)); err == nil {
					var b bytes.Buffer
					if _, err = b.ReadFrom(r); err == nil {
						data = b.Bytes()
					}
				}
			}
			if err != nil || string(data) != want {
				t.Errorf("%s: %d bytes (%v), want the 100 lines the strategy wrote", name, len(data), err)
			}
		}
		// The teardown is skipped, unless a thread made the worker leave
		// by the interpreter's own exit.
		_, err := os.Stat(filepath.Join(dir, "artifacts", "teardown.txt"))
		if ran := err == nil; ran != thread {
			t.Errorf("the interpreter's teardown ran: %v, want %v", ran, thread)
		}
	}
	t.Run("sandboxed", func(t *testing.T) {
		if err := sandbox.Check(); err != nil {
			t.Skip(err)
		}
		r := runStrategyWith(t, "exit_duties.py", shortLimits(), newReplay(5, 1), func(c *Config) { c.Sandbox = true })
		if r.report.Status != job.StatusPassed {
			t.Fatalf("%s %+v", r.report.Status, r.report.Failure)
		}
		check(t, r.dir, false)
	})
	for _, thread := range []bool{false, true} {
		params := []string{fmt.Sprintf("thread=%v", thread)}
		t.Run(fmt.Sprintf("cold/thread=%v", thread), func(t *testing.T) {
			r := runStrategyWith(t, "exit_duties.py", shortLimits(), newReplay(5, 1), func(c *Config) { c.Params = params })
			if r.report.Status != job.StatusPassed {
				t.Fatalf("%s %+v", r.report.Status, r.report.Failure)
			}
			check(t, r.dir, thread)
		})
		t.Run(fmt.Sprintf("warm/thread=%v", thread), func(t *testing.T) {
			cfg, marker := poolConfig(t, findPython(t), "testdata/strategies/exit_duties.py", shortLimits())
			cfg.Params = params
			pool := newPool(t, cfg, 1)
			j := started(t)(pool.Start(context.Background(), cfg, newReplay(5, 1)))
			if rep := waitJob(t, j); rep.Status != job.StatusPassed || pool.Stats().Warm != 1 {
				t.Fatalf("%s %+v, stats %+v", rep.Status, rep.Failure, pool.Stats())
			}
			check(t, j.Dir(), thread)
			pool.Close()
			assertTreeGone(t, nil, marker, "pidns")
		})
	}
}

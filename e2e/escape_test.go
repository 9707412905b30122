package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"stratbench/contract"
	"stratbench/internal/e2etest"
	"stratbench/job"
)

// TestForgedEscapeesEndWithTheRun runs, through the binary and in both tree
// trackings, the two ways a strategy's daemons used to outlive a run: a job
// that passes after leaving daemons with a forged marker (it reported a
// peak of one process, and the daemons lived on), and a daemon that holds
// the protocol pipes through a 5 s timeout (the run waited for the daemon).
func TestForgedEscapeesEndWithTheRun(t *testing.T) {
	for _, tc := range []struct{ env, want string }{{"auto", "pidns"}, {"fallback", "fallback"}} {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			run := func(e *env, name string) (int, *job.Report) {
				cmd := e.Command("--ci", "--output", "json", e2etest.Strategy(name))
				cmd.Env = append(cmd.Env, "STRATBENCH_TREE_TRACKING="+tc.env)
				out, err := cmd.Output()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				rep := e2etest.DecodeReport(t, string(out))
				if rep.Resources.TreeTracking != tc.want {
					t.Skipf("tree tracking %q here, not %s", rep.Resources.TreeTracking, tc.want)
				}
				return code, rep
			}

			e := newEnv(t)
			code, rep := run(e, "forged_daemons.py")
			if code != 0 || rep.Status != job.StatusPassed || rep.Resources.PeakProcesses < 6 {
				t.Errorf("forged daemons: exit %d, status %s, peak %d processes; want a pass that counted the 5 daemons",
					code, rep.Status, rep.Resources.PeakProcesses)
			}
			e.assertNoLeftovers(nil, rep.Resources.TreeTracking)

			e = newEnv(t)
			code, rep = run(e, "daemon_holds_pipes.py")
			if code != 1 || rep.Failure == nil || rep.Failure.Kind != contract.KindTimeout || rep.Failure.Hook != contract.HookOnData {
				t.Fatalf("daemon holding the pipes: exit %d, failure %+v; want a timeout in on_data", code, rep.Failure)
			}
			el := rep.FinishedAt.Sub(loopStart(t, filepath.Join(e.Home, "jobs", rep.JobID, "logs.jsonl")))
			if el < 5*time.Second || el > 6500*time.Millisecond {
				t.Errorf("the run ended %s after the looping hook started, want 5.0–6.5 s", el)
			}
			t.Logf("%s: the run ended %s after the looping hook started (limit 5 s)", tc.want, el)
			e.assertNoLeftovers(nil, rep.Resources.TreeTracking)
		})
	}
}

// loopStart returns when the strategy said it started looping.
func loopStart(t *testing.T, logs string) time.Time {
	t.Helper()
	f, err := os.Open(logs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l job.LogLine
		if json.Unmarshal(bytes.TrimSpace(sc.Bytes()), &l) != nil {
			continue
		}
		if rest, ok := strings.CutPrefix(l.Line, "looping forever since "); ok {
			secs, err := strconv.ParseFloat(rest, 64)
			if err != nil {
				t.Fatalf("log line %q: %v", l.Line, err)
			}
			return time.UnixMicro(int64(secs * 1e6))
		}
	}
	t.Fatalf("no looping line in %s", logs)
	return time.Time{}
}

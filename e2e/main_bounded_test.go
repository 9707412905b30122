package e2e

// End-to-end tests of stratbench's own bounds: its memory and its records
// whatever the strategy orders, and its report when the disk is full.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"stratbench/contract"
	"stratbench/internal/e2etest"
	"stratbench/job"
)

// TestOrderFloodsKeepStratbenchBounded: strategies placing 50,000 rejected
// orders a bar, filling 5,000 orders a bar, leaving 50,000 orders open a
// bar, or answering each rejection with 50,000 more, leave stratbench's own
// memory under 256 MiB (the first two took it over 1 GiB in 20 s before),
// its record files under their cap with one notice each where they were
// cut, and a complete report.
func TestOrderFloodsKeepStratbenchBounded(t *testing.T) {
	const maxRSS = 256 << 20
	recordCap := job.DefaultLimits().RecordBytes
	for _, tc := range []struct {
		file string
		args []string
		want map[string]int // metrics
		cut  []string       // record files that must reach their cap
		fail string         // the failure's message, when the run must fail
	}{
		{
			// 40 bars, 20 a symbol. Each bar: 25,000 orders for an unknown
			// symbol (rejected at once) and 25,000 beyond the cash
			// (rejected at the symbol's next bar; the last bar's stay open).
			file: "reject_flood.py", args: []string{"--to", "2026-01-05T00:19:00Z"},
			want: map[string]int{"rejections": 40*25_000 + 2*19*25_000, "open_orders": 2 * 25_000, "fills": 0},
			cut:  []string{"orders.csv"},
		},
		{
			// 400 bars, 200 a symbol: 5,000 orders a bar, filled at the
			// symbol's next bar; every other bar sells what the one before
			// bought, one trade per share.
			file: "fill_flood.py", args: []string{"--cash", "1e9", "--to", "2026-01-05T03:19:00Z"},
			want: map[string]int{"fills": 2 * 199 * 5_000, "trades": 2 * 99 * 5_000, "open_orders": 2 * 5_000, "rejections": 0},
			cut:  []string{"orders.csv"},
		},
		{
			// 20 bars of 50,000 resting limits: the first 262,144 stay
			// open, the rest are rejected.
			file: "resting_flood.py", args: []string{"--to", "2026-01-05T00:09:00Z"},
			want: map[string]int{"open_orders": 1 << 18, "rejections": 20*50_000 - 1<<18, "fills": 0},
		},
		{
			// Stopped once the executions waiting for on_execution take
			// 64 MiB, in about 5 of its calls (long symbols make each weigh
			// about 0.5 KiB, so the guard fires long before the stall rule).
			file: "execution_amplifier.py",
			want: map[string]int{"events": 1, "fills": 0},
			fail: "on_execution places orders faster than their executions come back to it",
		},
	} {
		t.Run(tc.file, func(t *testing.T) {
			e := newEnv(t)
			r, peak := e.runWithPeakRSS(append([]string{"--ci", "--output", "json", e2etest.Strategy(tc.file)}, tc.args...)...)
			rep := e2etest.DecodeReport(t, r.Stdout)
			switch {
			case tc.fail == "" && r.Code != 0:
				t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
			case tc.fail != "" && (r.Code != 1 || rep.Failure == nil || rep.Failure.Kind != contract.KindTimeout ||
				rep.Failure.Hook != contract.HookOnExecution || !strings.Contains(rep.Failure.Message, tc.fail)):
				t.Fatalf("exit %d, failure %+v; want a timeout in on_execution saying %q", r.Code, rep.Failure, tc.fail)
			}
			var m map[string]float64
			mb, _ := json.Marshal(rep.Metrics)
			json.Unmarshal(mb, &m)
			for k, v := range tc.want {
				if int(m[k]) != v {
					t.Errorf("%s = %v, want %d", k, m[k], v)
				}
			}
			t.Logf("stratbench peak RSS %.1f MiB", float64(peak)/(1<<20))
			if peak == 0 || peak > maxRSS {
				t.Errorf("stratbench peak RSS %d bytes, want under %d", peak, maxRSS)
			}
			logs := e.Run("logs", "--output", "jsonl", rep.JobID).Stdout
			for _, rec := range job.AllRecords() {
				name := rec.CSVName()
				size, notices, last := scanRecordFile(t, e.openRecord(rep.JobID, rec))
				logged := strings.Count(logs, name+" was cut at its")
				mustCut := strings.Contains(strings.Join(tc.cut, " "), name)
				switch {
				case size > recordCap:
					t.Errorf("%s is %d bytes, over its %d-byte cap", name, size, recordCap)
				case mustCut && (notices != 1 || !strings.HasPrefix(last, "# stratbench: "+name+" was cut") || logged != 1):
					t.Errorf("%s: %d bytes, %d notices in it (last line %.80q), %d in the log; want one of each", name, size, notices, last, logged)
				case !mustCut && (notices != 0 || logged != 0):
					t.Errorf("%s: %d notices in it, %d in the log; want none", name, notices, logged)
				}
			}
		})
	}
}

// scanRecordFile returns the size of a record's text, its notice lines and
// its last line.
func scanRecordFile(t *testing.T, f io.ReadCloser) (size int64, notices int, last string) {
	t.Helper()
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		size += int64(len(sc.Bytes())) + 1
		last = sc.Text()
		if strings.HasPrefix(last, "# stratbench") {
			notices++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return size, notices, last
}

// mountSmall mounts a tmpfs of size bytes over a new folder (root only).
func mountSmall(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small file system to fill it needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount: %v %s", err, out)
		}
	})
	return dir
}

// TestDiskFullKeepsTheReport runs stratbench with STRATBENCH_HOME on a 2 MiB
// file system that a strategy's output fills: the report still reaches
// stdout and says what could not be written (path and "no space left on
// device"), the exit code and stderr say so too, job.json is the final
// report, and the next command does not call the job killed.
func TestDiskFullKeepsTheReport(t *testing.T) {
	e := newEnv(t)
	e.Home = mountSmall(t, "2m")
	r := e.Run("--ci", "--output", "json", e2etest.Strategy("log_flood.py"))
	if r.Code != 1 || !strings.Contains(r.Stderr, "no space left on device") {
		t.Fatalf("exit %d, stderr %q: want 1 and the disk's condition", r.Code, r.Stderr)
	}
	rep := e2etest.DecodeReport(t, r.Stdout)
	dir := filepath.Join(e.Home, "jobs", rep.JobID)
	if rep.Status != job.StatusPassed || rep.FinishedAt == nil || len(rep.SaveErrors) == 0 {
		t.Fatalf("report: status %s save errors %v", rep.Status, rep.SaveErrors)
	}
	for _, s := range rep.SaveErrors {
		if !strings.Contains(s, "no space left on device") || !strings.Contains(s, dir) {
			t.Errorf("save error %q does not name the disk's condition and the path", s)
		}
	}
	saved := e.Run("status", "--output", "json", rep.JobID)
	if saved.Code != 0 {
		t.Fatalf("status: exit %d %s", saved.Code, saved.Stderr)
	}
	if s := e2etest.DecodeReport(t, saved.Stdout); s.Status != job.StatusPassed || s.Failure != nil || s.OrdersHash != rep.OrdersHash {
		t.Fatalf("job.json after the next command: status %s failure %+v", s.Status, s.Failure)
	}
	// (records/ is the job's: its records stay, docs/report.md.)
	for _, f := range []string{"owner.json", "unsaved.json", ".report-reserve"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left in the job folder: %v", f, err)
		}
	}
}

// TestDiskFullBeforeTheRun: on a disk already full, the job cannot even
// be recorded; its report (a failure naming the disk) still reaches stdout.
func TestDiskFullBeforeTheRun(t *testing.T) {
	e := newEnv(t)
	e.Home = mountSmall(t, "1m")
	os.MkdirAll(filepath.Join(e.Home, "jobs"), 0o755)
	fill, err := os.Create(filepath.Join(e.Home, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = fill.Write(make([]byte, 4096))
	}
	fill.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the disk: %v", err)
	}
	r := e.Run("--ci", "--output", "json", e2etest.Strategy("ok_counter.py"))
	if r.Code != 1 || !strings.Contains(r.Stderr, "no space left on device") {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	rep := e2etest.DecodeReport(t, r.Stdout)
	if rep.Status != job.StatusFailed || rep.Failure == nil || !strings.Contains(rep.Failure.Message, "no space left on device") {
		t.Fatalf("report: %s %+v", rep.Status, rep.Failure)
	}
	if len(rep.SaveErrors) == 0 || !strings.Contains(strings.Join(rep.SaveErrors, "\n"), fmt.Sprintf("%s/job.json", rep.JobID)) {
		t.Errorf("save errors %v do not say job.json was not written", rep.SaveErrors)
	}
}

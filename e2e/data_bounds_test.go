package e2e

// End-to-end tests of what data files can make stratbench do: Parquet
// files whose headers claim what no writer would (internal/pqcraft), a
// folder of 8,000 files, a named pipe given as data, a CSV changed in
// place during the run. Each runs the real binary and checks its exit
// code and failure kind, that stratbench's own peak RSS stayed under 256
// MiB (its VmHWM, polled until it exits: the peak of the process since its
// exec; its ru_maxrss from wait4 would not do, as it starts from the test
// process's own peak, which the child shared until its exec), that no
// process is left holding the test's folders, and that nothing outside the
// home changed (the data folder and $TMPDIR: a spill file is unlinked at
// once).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/contract"
	"stratbench/internal/e2etest"
	"stratbench/internal/pqcraft"
	"stratbench/internal/testenv"
	"stratbench/job"
)

// boundedRun is the outcome of a run whose memory was watched.
type boundedRun struct {
	e2etest.Result
	peak int64 // VmHWM of the stratbench process, polled
}

// hangGuard is how long a run may take before the test calls it hung and
// kills it: a guard against a regression that blocks (a named pipe
// opened for reading), not a measure of speed.
const hangGuard = 3 * time.Minute

// runBounded runs cmd, watching its peak RSS, and kills it when it hangs.
func (e *env) runBounded(cmd *exec.Cmd) boundedRun {
	e.T.Helper()
	var peak int64
	var guard *time.Timer
	r := watchRun(e.T, cmd, 5*time.Millisecond, func(pid int) { peak = max(peak, peakRSS(pid)) }, func(pid int) {
		guard = time.AfterFunc(hangGuard, func() {
			e.T.Errorf("%v: still running after %s: killed", cmd.Args, hangGuard)
			syscall.Kill(pid, syscall.SIGKILL)
		})
	})
	guard.Stop()
	return boundedRun{Result: r, peak: peak}
}

// checkBounded checks what every run here must hold: the peak RSS, no
// process left holding the folders, the folders outside the home as they
// were.
func (e *env) checkBounded(r boundedRun, before []string, dirs ...string) {
	t := e.T
	t.Helper()
	if r.peak > maxHostRSS {
		t.Errorf("stratbench's peak RSS %d MiB, over %d MiB", r.peak>>20, maxHostRSS>>20)
	}
	if r.peak == 0 {
		t.Error("the peak RSS was not measured")
	}
	t.Logf("exit %d, peak RSS %d MiB", r.Code, r.peak>>20)
	for _, dir := range append([]string{e.Home}, dirs...) {
		if left := holders(dir); len(left) > 0 {
			t.Errorf("processes still hold files under %s: %v", dir, left)
		}
	}
	if after := snapshot(t, dirs...); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the files outside the home changed:\nbefore %v\nafter  %v", before, after)
	}
}

// TestParquetBombsStayBounded: Parquet files of a few KiB or MiB whose
// headers claim 30 or 60 million values in a page, or 50,000 to 200,000
// row groups. parquet-go, which read them before, took stratbench to 1.2
// GB (a page is decoded whole: 30 million valid bars) and read the row
// groups whatever their number. Now pages decode a piece at a time (a
// constant timestamp fails at row 2; 30 million valid bars stream), a
// footer over 16 MiB is refused before it is read, and the row groups of
// a smaller one are refused before they are allocated when they would not
// fit the index budget.
func TestParquetBombsStayBounded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		file   func() []byte
		args   []string
		exit   int
		stderr string // after "read bars PATH"
		events int
	}{
		{name: "page-of-60M-equal-times", file: func() []byte { return pqcraft.HugePage(60_000_000, true) },
			exit: 2, stderr: ` row 2 column "timestamp": X 2026-01-01T00:00:00Z duplicates row 1`},
		{name: "page-of-30M-bars", file: func() []byte { return pqcraft.HugePage(30_000_000, false) },
			args: []string{"--to", "2026-01-01 00:59:59"}, exit: 0, events: 3600},
		{name: "200k-row-groups", file: func() []byte { return pqcraft.ManyGroups(200_000) },
			exit: 2, stderr: `: its footer (the file's metadata) is 53.7 MiB: footers over 16 MiB are not read`},
		{name: "50k-row-groups", file: func() []byte { return pqcraft.ManyGroups(50_000) },
			exit: 2, stderr: `: too much to index: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			dir := t.TempDir()
			path := filepath.Join(dir, "bars.parquet")
			if err := os.WriteFile(path, tc.file(), 0o644); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir, e.Tmp)
			args := append([]string{"--ci", "--output", "json", e2etest.Strategy("ok_counter.py"), "--data", path}, tc.args...)
			r := e.runBounded(e.Command(args...))
			e.checkBounded(r, before, dir, e.Tmp)
			if r.Code != tc.exit {
				t.Fatalf("exit %d, want %d\nstderr: %s", r.Code, tc.exit, r.Stderr)
			}
			if tc.exit == 0 {
				rep := e2etest.DecodeReport(t, r.Stdout)
				if rep.Status != job.StatusPassed || rep.Data.Events != tc.events {
					t.Errorf("status %s, %d events; want passed, %d", rep.Status, rep.Data.Events, tc.events)
				}
			} else if !strings.Contains(r.Stderr, "read bars "+path+tc.stderr) || strings.Contains(r.Stdout, "job_id") {
				t.Errorf("stderr %q, want %q, no job\nstdout: %s", r.Stderr, tc.stderr, r.Stdout)
			}
		})
	}
}

// TestManyParquetFilesStayBounded: a folder of 8,000 Parquet files of 100
// bars each, written by pyarrow from a pandas frame (each with its pandas
// metadata), replays within 256 MiB. Before, every file's reader stayed
// open with its parsed footer: 695 MiB.
func TestManyParquetFilesStayBounded(t *testing.T) {
	e := newEnv(t)
	py := testenv.Python(t, "pyarrow", "pandas")
	dir := t.TempDir()
	folder := filepath.Join(dir, "symbols")
	script := `
import os, sys
import numpy as np, pandas as pd, pyarrow as pa, pyarrow.parquet as pq
out, n, k = sys.argv[1], 100, 8000
os.makedirs(out)
ts = pd.date_range("2026-01-05 14:30", periods=n, freq="min", tz="UTC")
df = pd.DataFrame({"timestamp": np.tile(ts, k), "symbol": np.repeat(["S%04d" % i for i in range(k)], n),
                   "open": 10.0, "high": 11.0, "low": 9.0, "close": 10.5, "volume": 100.0})
t = pa.Table.from_pandas(df)
for i in range(k):
    pq.write_table(t.slice(i * n, n), os.path.join(out, "S%04d.parquet" % i))
`
	if out, err := exec.Command(py, "-c", script, folder).CombinedOutput(); err != nil {
		t.Fatalf("pyarrow: %v\n%s", err, out)
	}
	before := snapshot(t, dir, e.Tmp)
	r := e.runBounded(e.Command("--ci", "--output", "json", e2etest.Strategy("noop.py"), "--data", folder))
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	rep := e2etest.DecodeReport(t, r.Stdout)
	if rep.Status != job.StatusPassed || rep.Data.Events != 800_000 || len(rep.Data.Symbols) != 8000 {
		t.Errorf("status %s, %d events, %d symbols", rep.Status, rep.Data.Events, len(rep.Data.Symbols))
	}
	if left := holders(filepath.Join(e.Home, "jobs", rep.JobID, "artifacts")); len(left) > 0 {
		t.Errorf("processes of the tree survived the run: %v", left)
	}
	e.checkBounded(r, before, dir, e.Tmp)
}

// TestDataNotARegularFile: a named pipe given as --data, or found in a
// folder given as --data under a data file's name, and a device are
// refused at once, exit 2, naming the file and what it is. Before, the
// open of a pipe blocked until a writer came (15 minutes in the report,
// deaf to SIGTERM and SIGINT).
func TestDataNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "bars.csv")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "folder")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	barsCSV(t, filepath.Join(folder, "a.csv"), []string{"SPY"}, 10, 1)
	if err := unix.Mkfifo(filepath.Join(folder, "b.csv"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ data, file, what string }{
		{fifo, fifo, "a named pipe (FIFO)"},
		{folder, filepath.Join(folder, "b.csv"), "a named pipe (FIFO)"},
		{"/dev/zero", "/dev/zero", "a character device"},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			e := newEnv(t)
			before := snapshot(t, dir, e.Tmp)
			r := e.runBounded(e.Command("--ci", e2etest.Strategy("ok_counter.py"), "--data", tc.data))
			want := "read bars " + tc.file + ": is " + tc.what + ", not a regular file"
			if r.Code != 2 || !strings.Contains(r.Stderr, want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", r.Code, r.Stderr, want)
			}
			e.checkBounded(r, before, dir, e.Tmp)
		})
	}
}

// TestDataChangedDuringTheRun: a CSV that streams (STRATBENCH_DATA_BUDGET=0)
// rewritten in place while the run is under way, same size and
// modification time restored, fails the job with kind data (exit 2) when
// the replay reaches the changed bytes: the fingerprint's data digest is of
// the bytes Open read, and the replay reads those or fails. Before, the
// run passed on the new bytes under the digest of the old ones.
func TestDataChangedDuringTheRun(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "bars.csv")
	barsCSV(t, path, []string{"AAA", "BBB", "CCC"}, 100_000, 3)
	hold := filepath.Join(dir, "go-on")
	cmd := e.Command("--ci", "--output", "json", e2etest.Strategy("hold_first_bar.py"), "--data", path, "--param", "hold="+hold)
	cmd.Env = append(cmd.Env, "STRATBENCH_DATA_BUDGET=0")
	var r boundedRun
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		r = e.runBounded(cmd)
	}()
	waitForLog(t, e.Home, "holding", 60*time.Second)
	// The last line's volume, one digit changed: the replay holds a few
	// hundred thousand bars ahead at most, of the 300,000.
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, info.Size()-2); err != nil {
		t.Fatal(err)
	}
	b[0] = '0' + (b[0]-'0'+1)%10
	if _, err := f.WriteAt(b, info.Size()-2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir, e.Tmp)
	<-finished
	if r.Code != 2 {
		t.Fatalf("exit %d, want 2\nstderr: %s", r.Code, r.Stderr)
	}
	rep := e2etest.DecodeReport(t, r.Stdout)
	fl := rep.Failure
	if rep.Status != job.StatusFailed || fl == nil || fl.Kind != contract.KindData ||
		!strings.Contains(fl.Message, "read bars "+path+" line ") || !strings.Contains(fl.Message, "the file changed since it was opened") {
		t.Fatalf("status %s, failure %+v", rep.Status, fl)
	}
	if left := holders(filepath.Join(e.Home, "jobs", rep.JobID, "artifacts")); len(left) > 0 {
		t.Errorf("processes of the tree survived the run: %v", left)
	}
	e.checkBounded(r, before, dir, e.Tmp)
}

// tinyBars is a Parquet file of n one-minute bars of sym whose pages
// take a few bytes each: delta-encoded times, one-value dictionaries.
func tinyBars(n uint64, sym string) []byte {
	ts := pqcraft.Chunk{NumValues: int64(n), Pages: [][]byte{
		pqcraft.DataPage(int32(n), pqcraft.DeltaBP, nil, pqcraft.DeltaRange(pqcraft.T0.UnixNano(), int64(time.Minute), n, 1<<16)),
	}}
	price := pqcraft.ConstChunk(n, pqcraft.PlainDouble(10))
	return pqcraft.File(pqcraft.BarColumns, []pqcraft.Group{{Rows: int64(n), Chunks: []pqcraft.Chunk{
		ts, pqcraft.ConstChunk(n, pqcraft.PlainStrings(sym)), price, price, price, price, pqcraft.ConstChunk(n, pqcraft.PlainDouble(0)),
	}}})
}

// TestSpillBounded: a folder of many tiny Parquet files (a few bytes a
// page) streams from more files than the streams' memory holds at once,
// so it spills to $TMPDIR, 64 bytes a bar whatever the files take: 3,000
// files of 12 MB in all spilled 38 GB (3,200 times the input) before. The
// spill now has a budget (16 GiB, STRATBENCH_SPILL_BUDGET) and the
// temporary folder's free space, both checked before anything is written:
// over either, the data is refused (exit 2) naming the folder, the spill
// and the bound, and $TMPDIR is left as it was.
func TestSpillBounded(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "tiny")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	var size int64
	for i := range 1000 { // 2 million bars: a spill of 122 MiB
		sym := fmt.Sprintf("S%04d", i)
		b := tinyBars(2000, sym)
		size += int64(len(b))
		if err := os.WriteFile(filepath.Join(folder, sym+".parquet"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d files, %d KiB in all", 1000, size>>10)
	for _, tc := range []struct {
		name, budget, want string
		small              bool // $TMPDIR a tmpfs of 16 MiB
	}{
		{name: "budget", budget: "16", want: ": its streams do not fit the memory for streams at once, and spilling them to $TMPDIR would take 122.1 MiB or more (64 bytes a bar of the window, a pass), over the spill budget of 16 MiB"},
		{name: "free-space", small: true, want: ": its 2000000 bars in the window would spill 122.1 MiB to "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.small {
				e.Tmp = mountSmall(t, "16m")
			}
			before := snapshot(t, dir, e.Tmp)
			cmd := e.Command("--ci", "--output", "json", e2etest.Strategy("noop.py"), "--data", folder)
			if tc.budget != "" {
				cmd.Env = append(cmd.Env, "STRATBENCH_SPILL_BUDGET="+tc.budget)
			}
			r := e.runBounded(cmd)
			e.checkBounded(r, before, dir, e.Tmp)
			if r.Code != 2 || !strings.Contains(r.Stderr+r.Stdout, folder+tc.want) {
				t.Errorf("exit %d, want 2 saying %q\nstderr: %s\nstdout: %.2000s", r.Code, tc.want, r.Stderr, r.Stdout)
			}
		})
	}
}

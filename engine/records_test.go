package engine

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"stratbench/internal/nofollow"
	"stratbench/job"
	"stratbench/supervisor"

	"stratbench/contract"
)

// TestRecordFileCap: a record file takes whole lines up to its cap, then
// one notice line (a CSV comment padded to the header's fields, so strict
// readers take it) and one notice in the log; later writes are refused and
// the run goes on. The cap counts the CSV text; the file, in records/,
// holds it compressed (gzip members) and stays there at the end.
func TestRecordFileCap(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "artifacts"), 0o755)
	os.Mkdir(filepath.Join(dir, job.RecordsDir), 0o755)
	var notices []string
	const limit = 4096
	rec := newJobRecords(dir, limit, func(s string) { notices = append(notices, s) })
	w := rec.Create("orders.csv")
	if _, err := w.Write([]byte("a,b,c\n")); err != nil {
		t.Fatal(err)
	}
	line := []byte("1,22,333\n")
	var refused int
	for i := 0; i < 1000; i++ {
		// Several lines per write, as a driver writes (its members are
		// 64 KiB but a file's last): klauspost/compress stores a member
		// under 128 bytes as it is, 25 bytes over its text, so 270-byte
		// members keep the file, not only its text, within the cap.
		chunk := bytes.Repeat(line, 30)
		n, err := w.Write(chunk)
		if err != nil {
			refused++
			if n%len(line) != 0 {
				t.Fatalf("write cut inside a line: %d bytes of a %d-byte write", n, len(chunk))
			}
			continue
		}
		if n != len(chunk) {
			t.Fatalf("short write without an error: %d of %d", n, len(chunk))
		}
	}
	if refused == 0 {
		t.Fatal("the file never reached its cap")
	}
	if errs := rec.close(); len(errs) != 0 {
		t.Fatalf("close: %v", errs)
	}
	info, err := os.Stat(filepath.Join(dir, job.RecordsDir, "orders.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() > limit {
		t.Errorf("orders.csv.gz is %d bytes, over the %d-byte cap of its text", info.Size(), limit)
	}
	folder, err := nofollow.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer folder.Close()
	f, err := job.OpenRecordIn(folder, job.RecordOrders)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > limit {
		t.Errorf("orders.csv is %d bytes of text, over its %d-byte cap", len(data), limit)
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatalf("a strict CSV reader refuses the file: %v", err)
	}
	last := rows[len(rows)-1]
	if !strings.HasPrefix(last[0], "# stratbench: orders.csv was cut at its 4.00 KiB cap") || len(last) != 3 {
		t.Errorf("last row %q", last)
	}
	if n := bytes.Count(data, []byte("# stratbench")); n != 1 {
		t.Errorf("%d notices in the file", n)
	}
	for _, r := range rows[1 : len(rows)-1] {
		if strings.Join(r, ",") != "1,22,333" {
			t.Fatalf("row %q", r)
		}
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "orders.csv was cut at its 4.00 KiB cap") {
		t.Errorf("log notices %q", notices)
	}
	if _, err := os.Stat(filepath.Join(dir, "artifacts", "orders.csv")); !os.IsNotExist(err) {
		t.Errorf("the record was moved among the artifacts: %v", err)
	}
}

// TestRecordFileDiskFull: a record file whose disk fills is written by the
// records' own goroutine: the write that fails is truncated away, the file
// ends with whole lines (and a notice when it fits), the driver's next
// writes are refused, and close names what could not be written; the log
// says so once.
func TestRecordFileDiskFull(t *testing.T) {
	dir := smallFS(t, 256<<10)
	var mu sync.Mutex
	var notices []string
	rec := newJobRecords(dir, 1<<30, func(s string) {
		mu.Lock()
		notices = append(notices, s)
		mu.Unlock()
	})
	w := rec.Create("equity.csv")
	if _, err := w.Write([]byte("event,noise\n")); err != nil {
		t.Fatal(err)
	}
	// Lines gzip cannot shrink much, in the driver's 64 KiB chunks.
	rng := rand.New(rand.NewPCG(1, 2))
	var refused bool
	for i := 0; i < 10_000 && !refused; i++ {
		var chunk []byte
		for len(chunk) < 64<<10 {
			chunk = fmt.Appendf(chunk, "%d,%x\n", i, rng.Uint64())
		}
		_, err := w.Write(chunk)
		refused = err != nil
	}
	if !refused {
		t.Fatal("the driver's writes were never refused on a full disk")
	}
	errs := rec.close()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "no space left on device") {
		t.Fatalf("close: %v", errs)
	}
	mu.Lock()
	if len(notices) != 1 || !strings.Contains(notices[0], "equity.csv could not be written in full") {
		t.Errorf("log notices %q", notices)
	}
	mu.Unlock()
	folder, err := nofollow.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer folder.Close()
	f, err := job.OpenRecordIn(folder, job.RecordEquity)
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		t.Fatalf("the file is not whole gzip members: %v", err)
	}
	rows, err := csv.NewReader(bytes.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatalf("a strict CSV reader refuses the file: %v", err)
	}
	if len(rows) < 100 {
		t.Fatalf("only %d rows kept", len(rows))
	}
	for i, r := range rows[1:] {
		last := i == len(rows)-2
		if len(r) != 2 || strings.HasPrefix(r[0], "#") && !(last && strings.HasPrefix(r[0], "# stratbench: could not write more")) {
			t.Fatalf("row %d of %d: %q", i+1, len(rows), r)
		}
	}
}

// TestRecordFileBadName: a name with a folder is refused, and said so.
func TestRecordFileBadName(t *testing.T) {
	dir := t.TempDir()
	rec := newJobRecords(dir, 1<<20, func(string) {})
	if _, err := rec.Create("../x.csv").Write([]byte("a\n")); err == nil {
		t.Fatal("a record file outside the records folder was written")
	}
	if errs := rec.close(); len(errs) != 1 {
		t.Fatalf("close: %v", errs)
	}
}

// TestLogFileCap runs a strategy that prints 100 MiB with logs.jsonl capped
// at 1 MiB: the file stays under its cap and ends with one notice; the
// output is still counted (64 MiB kept by the output cap) and the run
// passes.
func TestLogFileCap(t *testing.T) {
	l := roomyLimits()
	l.LogFileBytes = 1 << 20
	r := runStrategy(t, "log_flood.py", l, newReplay(10, 1), nil)
	if r.report.Status != job.StatusPassed || r.report.Logs.Bytes != 64<<20 || len(r.report.SaveErrors) != 0 {
		t.Fatalf("status %s logs %+v save errors %v", r.report.Status, r.report.Logs, r.report.SaveErrors)
	}
	info, err := os.Stat(filepath.Join(r.dir, "logs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() > l.LogFileBytes {
		t.Fatalf("logs.jsonl is %d bytes, over its %d-byte cap", info.Size(), l.LogFileBytes)
	}
	cut := 0
	lines := readLogs(t, r.dir)
	for _, ll := range lines {
		if ll.Stream == "system" && strings.Contains(ll.Line, "logs.jsonl reached its 1.00 MiB cap") {
			cut++
		}
	}
	if cut != 1 {
		t.Fatalf("%d cut notices in logs.jsonl", cut)
	}
	if info.Size() < l.LogFileBytes-2*systemRoom {
		t.Errorf("logs.jsonl cut at %d bytes, well before its cap", info.Size())
	}
	// The event stream still carried every kept line.
	var streamed int
	for _, e := range r.events {
		if ll, ok := e.(job.LogLines); ok {
			streamed += len(ll.Lines) + ll.Dropped
		}
	}
	if streamed <= len(lines) {
		t.Errorf("the event stream carried %d lines, the file %d", streamed, len(lines))
	}
}

// TestSaveReportThroughTheReserve: on a full disk the final report still
// replaces job.json through the room kept at the start; a report larger
// than that room is saved without metadata and traceback, and says so.
func TestSaveReportThroughTheReserve(t *testing.T) {
	dir := smallFS(t, 1<<20)
	for _, big := range []bool{false, true} {
		t.Run(fmt.Sprintf("big=%v", big), func(t *testing.T) {
			j := filepath.Join(dir, fmt.Sprint(big))
			os.Mkdir(j, 0o755)
			res, err := makeReserve(j)
			if err != nil {
				t.Fatal(err)
			}
			rep := &job.Report{JobID: "j", Status: job.StatusRunning, StartedAt: time.Now()}
			if err := writeJSONAtomic(filepath.Join(j, "job.json"), rep); err != nil {
				t.Fatal(err)
			}
			fill := fillDisk(t, dir)
			defer os.Remove(fill)
			rep.Status = job.StatusFailed
			rep.Failure = &contract.Failure{Kind: contract.KindException, Hook: contract.HookOnData, Message: "boom", Traceback: strings.Repeat("t", 1000)}
			rep.Metadata = []byte(`{"note":"kept"}`)
			if big {
				rep.Metadata = []byte(`"` + strings.Repeat("m", 2*reserveBytes) + `"`)
			}
			if err := saveReport(j, rep, res); err != nil {
				t.Fatalf("saveReport on a full disk: %v", err)
			}
			saved := loadJobJSON(t, j)
			if saved.Status != job.StatusFailed || saved.Failure == nil || saved.Failure.Message != "boom" {
				t.Fatalf("job.json: %+v", saved)
			}
			if _, err := os.Stat(filepath.Join(j, reserveFile)); !os.IsNotExist(err) {
				t.Errorf("reserve left: %v", err)
			}
			var meta bytes.Buffer
			json.Compact(&meta, saved.Metadata)
			switch {
			case !big && (meta.String() != `{"note":"kept"}` || saved.Failure.Traceback == "" || len(saved.SaveErrors) != 0):
				t.Errorf("small report not saved whole: %s %v", saved.Metadata, saved.SaveErrors)
			case big && (meta.String() != "null" || saved.Failure.Traceback != "" || len(saved.SaveErrors) != 1 ||
				!strings.Contains(saved.SaveErrors[0], "no space left on device")):
				t.Errorf("big report: metadata %.20s… save errors %v", saved.Metadata, saved.SaveErrors)
			case big && (len(rep.SaveErrors) != 1 || len(rep.Metadata) < reserveBytes):
				t.Errorf("the report in memory lost its metadata or does not say what was cut: %v", rep.SaveErrors)
			}
		})
	}
}

// smallFS mounts a tmpfs of size bytes (root only) and returns its folder.
func smallFS(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small file system to fill it needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount: %v %s", err, out)
		}
	})
	return dir
}

// fillDisk writes a file in dir until the disk is full and returns it.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	f, err := os.CreateTemp(dir, "fill")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return f.Name()
		}
	}
}

// TestUnsavedReportIsNotAKill: a job that could not keep room for its final
// report, on a disk its artifacts then fill, cannot write job.json at the end;
// Wait still returns the complete report with the disk's condition, the
// owner record becomes unsaved.json, and recovery marks the job failed as
// unsaved, not killed.
func TestUnsavedReportIsNotAKill(t *testing.T) {
	if os.Getenv(supervisor.TrackingEnv) == "fallback" {
		// The fallback's state file (procs.json) is removed when the tree
		// ends, which frees room for job.json: the test needs a full disk.
		t.Skip("needs the PID-namespace tree tracking")
	}
	home := smallFS(t, 1<<20)
	store, err := job.OpenStore(home)
	if err != nil {
		t.Fatal(err)
	}
	// Leave less free space than the reserve needs, but enough to start.
	fill := fillDisk(t, home)
	info, _ := os.Stat(fill)
	if err := os.Truncate(fill, info.Size()-96<<10); err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		// It fills the disk in on_finish and prints nothing, so that no log
		// page is freed by cutting the log: job.json finds no room.
		Strategy: filepath.Join("..", "testdata", "strategies", "disk_filler.py"),
		Python:   findPython(t),
		Home:     home,
		CacheDir: t.TempDir(),
		Limits:   roomyLimits(),
		Version:  "test",
		Host:     testHost,
	}
	j, err := Start(context.Background(), cfg, newReplay(10, 1))
	if err != nil {
		t.Fatal(err)
	}
	for range j.Events() {
	}
	rep, err := j.Wait()
	var saveErr *SaveError
	if !errors.As(err, &saveErr) || rep == nil {
		t.Fatalf("Wait: %v, %v; want the report and a *SaveError", rep, err)
	}
	if rep.Status != job.StatusPassed || !strings.Contains(strings.Join(rep.SaveErrors, "\n"), filepath.Join(j.Dir(), "job.json")) ||
		!strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("report: %s, save errors %v", rep.Status, rep.SaveErrors)
	}
	if _, err := os.Stat(filepath.Join(j.Dir(), unsavedFile)); err != nil {
		t.Fatalf("no unsaved marker: %v", err)
	}
	if saved := loadJobJSON(t, j.Dir()); saved.Status != job.StatusRunning {
		t.Fatalf("job.json says %s: the test did not fill the disk in time", saved.Status)
	}
	os.Remove(fill)
	ids, err := Recover(store)
	if err != nil || len(ids) != 1 {
		t.Fatalf("recovered %v, %v", ids, err)
	}
	after := loadJobJSON(t, j.Dir())
	if after.Status != job.StatusFailed || after.Failure == nil || !strings.Contains(after.Failure.Message, "could not be saved") ||
		strings.Contains(after.Failure.Message, "killed") {
		t.Fatalf("recovered job: %s %+v", after.Status, after.Failure)
	}
}

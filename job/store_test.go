package job

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestLoadRefusesMalformedMetrics: the report's metrics are typed, so a
// job.json whose metrics are not an object (moved here from the workbench's
// test of the metrics it shows) is an error naming the file, not a report
// without metrics.
func TestLoadRefusesMalformedMetrics(t *testing.T) {
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for id, metrics := range map[string]string{"20260101-000000.000-null": "null", "20260101-000000.000-list": "[1]"} {
		dir := store.JobDir(id)
		os.MkdirAll(dir, 0o755)
		doc := `{"job_id":"` + id + `","status":"passed","metrics":` + metrics + `}`
		if err := os.WriteFile(filepath.Join(dir, "job.json"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if rep, err := store.Load("20260101-000000.000-null"); err != nil || rep.Metrics != nil {
		t.Fatalf("metrics null: %+v, %v; want a report without metrics", rep, err)
	}
	if _, err := store.Load("20260101-000000.000-list"); err == nil || !strings.Contains(err.Error(), "job.json") {
		t.Fatalf("metrics [1]: %v; want an error naming job.json", err)
	}
}

// FuzzLoadReport: whatever a job folder's job.json holds, Load returns the
// report of the folder's job or an error, never a report of another id.
func FuzzLoadReport(f *testing.F) {
	const id = "20260101-000000.000-fuzz"
	f.Add([]byte(`{"job_id":"` + id + `","status":"passed"}`))
	f.Add([]byte(`{"job_id":"..","status":"passed"}`))
	f.Add([]byte(`{"job_id":"../../victim"}`))
	f.Add([]byte(`{"job_id":"` + id + `","metrics":[1]}`))
	f.Add([]byte(`{"job_id":"` + id + `","strategy":{"params":{"a":1e999}}}`))
	f.Add([]byte(`{} {}`))
	store, err := OpenStore(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	dir := store.JobDir(id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, "job.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := store.Load(id)
		if err == nil && rep.JobID != id {
			t.Fatalf("loaded the report of %q from the folder of %s", rep.JobID, id)
		}
		var re *RecordError
		if err != nil && !errors.As(err, &re) {
			t.Fatalf("an error that is not a RecordError: %v", err)
		}
	})
}

// TestLoadPrecheckFollowsNothing: a precheck record that is a link (to a
// valid record elsewhere) or a FIFO is no pass, read without being
// followed or waited on.
func TestLoadPrecheckFollowsNothing(t *testing.T) {
	root := t.TempDir()
	store, err := OpenStore(filepath.Join(root, "home"))
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(root, "record.json")
	if err := os.WriteFile(elsewhere, []byte(`{"key":"linked"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := store.SavePrecheck(&Precheck{Key: "kept"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, store.precheckPath("linked")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(store.precheckPath("fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"linked", "fifo", "absent"} {
		if p, err := store.LoadPrecheck(key); p != nil || err != nil {
			t.Errorf("LoadPrecheck(%s) = %+v, %v; want no pass", key, p, err)
		}
	}
	if p, err := store.LoadPrecheck("kept"); p == nil || err != nil {
		t.Errorf("LoadPrecheck(kept) = %+v, %v", p, err)
	}
}

// logsOf writes logs as job id's logs.jsonl (with a report) and returns
// what Logs gives, without following.
func logsOf(t testing.TB, store *Store, logs []byte) ([]LogLine, error) {
	const id = "20260101-000000.000-logs"
	dir := store.JobDir(id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "job.json"), []byte(`{"job_id":"`+id+`","status":"passed"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "logs.jsonl"), logs, 0o644); err != nil {
		t.Fatal(err)
	}
	var got []LogLine
	err := store.Logs(context.Background(), id, nil, func(l LogLine) error {
		got = append(got, l)
		return nil
	})
	return got, err
}

// TestLogsSkipLinesOverTheCap: a logs.jsonl line longer than any the
// engine writes (MaxLogRecord: a 64 KiB line of output, every byte
// escaped) is skipped with a system line naming the file, the line and
// its size, and an unfinished last line is said, not dropped silently;
// the lines around them are read. The longest line the engine writes is
// under the cap.
func TestLogsSkipLinesOverTheCap(t *testing.T) {
	worst, err := json.Marshal(LogLine{Time: time.Now(), Stream: "stderr", Line: strings.Repeat("\x01", 64<<10) + " … [line cut]"})
	if err != nil || len(worst) > MaxLogRecord {
		t.Fatalf("the longest line the engine writes takes %d bytes, over MaxLogRecord (%d): %v", len(worst), MaxLogRecord, err)
	}
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	logs.WriteString(`{"t":"2026-01-01T00:00:00Z","stream":"stdout","line":"first"}` + "\n")
	logs.Write(worst)
	logs.WriteString("\n")
	logs.WriteString(strings.Repeat("a", 3<<20) + "\n")
	logs.WriteString(`{"t":"2026-01-01T00:00:01Z","stream":"stdout","line":"after"}` + "\n")
	logs.WriteString(strings.Repeat("b", 5<<20))
	got, err := logsOf(t, store, logs.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[0].Line != "first" || got[1].Stream != "stderr" || got[3].Line != "after" {
		t.Fatalf("got %d lines: %v", len(got), got)
	}
	if l := got[2]; l.Stream != "system" || !strings.Contains(l.Line, "logs.jsonl line 3 left out: 3.00 MiB") {
		t.Errorf("the line over the cap: %+v", l)
	}
	if l := got[4]; l.Stream != "system" || !strings.Contains(l.Line, "ends in an unfinished line (5.00 MiB") {
		t.Errorf("the unfinished line: %+v", l)
	}
}

// FuzzLogs: whatever logs.jsonl holds, Logs gives lines of at most
// MaxLogRecord bytes, or an error; it never panics.
func FuzzLogs(f *testing.F) {
	f.Add([]byte(`{"t":"2026-01-01T00:00:00Z","stream":"stdout","line":"a"}` + "\n"))
	f.Add([]byte(`{"line":"no newline"}`))
	f.Add([]byte("\n\n"))
	f.Add([]byte(`{"line":1}` + "\n"))
	store, err := OpenStore(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, _ := logsOf(t, store, data)
		for _, l := range got {
			if len(l.Line) > MaxLogRecord {
				t.Fatalf("a line of %d bytes", len(l.Line))
			}
		}
	})
}

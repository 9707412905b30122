package job

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

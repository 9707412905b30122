package ray

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stratbench/job"
)

// writeJobFolder writes a finished job's folder as the engine leaves it on
// a node: its report, a log of lines lines and the given artifacts.
func writeJobFolder(t *testing.T, home, id string, lines int, artifacts map[string]string) string {
	t.Helper()
	dir := filepath.Join(home, "jobs", id)
	if err := os.MkdirAll(filepath.Join(dir, "artifacts"), 0o755); err != nil {
		t.Fatal(err)
	}
	rep, _ := json.Marshal(job.Report{JobID: id, Status: job.StatusPassed})
	os.WriteFile(filepath.Join(dir, "job.json"), rep, 0o644)
	var log bytes.Buffer
	for i := 0; i < lines; i++ {
		b, _ := json.Marshal(job.LogLine{Stream: "stdout", Line: strings.Repeat("x", 100)})
		log.Write(append(b, '\n'))
	}
	os.WriteFile(filepath.Join(dir, "logs.jsonl"), log.Bytes(), 0o644)
	for name, content := range artifacts {
		p := filepath.Join(dir, "artifacts", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	os.MkdirAll(filepath.Join(dir, job.RecordsDir), 0o755)
	os.WriteFile(filepath.Join(dir, job.RecordsDir, "equity.csv.gz"), []byte("the record"), 0o644)
	return dir
}

// TestRayJobRoundTrip: a job folder collected on a node comes back whole
// into the local store (report, log, artifacts in subfolders, records,
// where it ran), and the node's folder is removed.
func TestRayJobRoundTrip(t *testing.T) {
	node := writeJobFolder(t, t.TempDir(), "20260101-000000.000-abcd", 10, map[string]string{"equity.csv": "t,equity\n", "mine/out.txt": "hello"})
	res := collectJob(node)
	if res.Error != "" || res.NodeDir != "" {
		t.Fatalf("collect: %+v", res)
	}
	if _, err := os.Stat(node); err == nil {
		t.Error("the node's folder was kept although all of it came back")
	}
	store, err := job.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := importJob(store, res, runPlace{RayJob: "stratbench-x", NodeID: "n1", Attempt: 2})
	if err != nil {
		t.Fatal(err)
	}
	dir := store.JobDir(rep.JobID)
	for name, want := range map[string]string{"artifacts/mine/out.txt": "hello", "artifacts/equity.csv": "t,equity\n",
		"records/equity.csv.gz": "the record"} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v", name, got, err)
		}
	}
	var place runPlace
	if raw, err := os.ReadFile(filepath.Join(dir, PlaceFile)); err != nil || json.Unmarshal(raw, &place) != nil || place.Attempt != 2 {
		t.Errorf("%s: %+v, %v", PlaceFile, place, err)
	}
	var lines int
	if err := store.Logs(t.Context(), rep.JobID, nil, func(job.LogLine) error { lines++; return nil }); err != nil || lines != 10 {
		t.Errorf("logs: %d lines, %v", lines, err)
	}
}

// TestRayJobLogCut: a log over what comes back is cut between two lines,
// with one notice naming where the whole log stays; the node keeps it.
func TestRayJobLogCut(t *testing.T) {
	lines := LogReturnBytes/100 + 100
	node := writeJobFolder(t, t.TempDir(), "20260101-000000.000-abce", lines, nil)
	res := collectJob(node)
	if !res.LogCut || res.NodeDir != node {
		t.Fatalf("collect: cut %v, node dir %q", res.LogCut, res.NodeDir)
	}
	store, _ := job.OpenStore(t.TempDir())
	rep, err := importJob(store, res, runPlace{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(store.JobDir(rep.JobID), "logs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, l := range all {
		var ll job.LogLine
		if err := json.Unmarshal([]byte(l), &ll); err != nil {
			t.Fatalf("line %d is not a whole log line: %v", i, err)
		}
		if i == len(all)-1 && (ll.Stream != "system" || !strings.Contains(ll.Line, filepath.Join(node, "logs.jsonl"))) {
			t.Errorf("last line %+v: want the notice naming the node's log", ll)
		}
	}
	if len(data) > LogReturnBytes+1024 || len(all) >= lines {
		t.Errorf("%d bytes, %d lines of %d", len(data), len(all), lines)
	}
}

// TestRayJobImportRefuses: what a node sends is checked: a zip entry
// outside the folder, artifacts over the limit, a job id that is a path.
func TestRayJobImportRefuses(t *testing.T) {
	zipOf := func(name string, size int) []byte {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		w, _ := zw.Create(name)
		w.Write(bytes.Repeat([]byte("a"), size))
		zw.Close()
		return b.Bytes()
	}
	report := func(id string) json.RawMessage {
		b, _ := json.Marshal(job.Report{JobID: id})
		return b
	}
	for _, tc := range []struct {
		name string
		res  runResult
		says string
	}{
		{"escaping entry", runResult{Report: report("j1"), Artifacts: zipOf("../../evil", 1)}, "not a file under the folder"},
		{"absolute entry", runResult{Report: report("j2"), Artifacts: zipOf("/etc/evil", 1)}, "not a file under the folder"},
		{"too large", runResult{Report: report("j3"), Artifacts: zipOf("big", ArtifactsReturnBytes+1)}, "over"},
		{"job id a path", runResult{Report: report("../j4")}, "job id"},
		{"not a report", runResult{Report: json.RawMessage(`[1]`)}, "the report"},
	} {
		home := t.TempDir()
		store, _ := job.OpenStore(home)
		_, err := importJob(store, tc.res, runPlace{})
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.says)
		}
		if entries, _ := os.ReadDir(filepath.Join(home, "jobs")); len(entries) != 0 {
			t.Errorf("%s: %d entries left in jobs/", tc.name, len(entries))
		}
	}
}

// FuzzImportRayJob: whatever a node sends, the import either fails leaving
// nothing in jobs/, or writes one job folder and nothing outside it.
func FuzzImportRayJob(f *testing.F) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("a/b.txt")
	w.Write([]byte("x"))
	zw.Close()
	f.Add([]byte(`{"job_id":"j1","status":"passed"}`), []byte{}, b.Bytes())
	f.Add([]byte(`{"job_id":"j1"}`), []byte{0x1f, 0x8b}, []byte("PK"))
	f.Fuzz(func(t *testing.T, report, log, artifacts []byte) {
		home := t.TempDir()
		store, err := job.OpenStore(home)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := importJob(store, runResult{Report: report, Log: log, Artifacts: artifacts}, runPlace{})
		entries, _ := os.ReadDir(filepath.Join(home, "jobs"))
		if err != nil {
			if len(entries) != 0 {
				t.Fatalf("failed (%v) but left %d entries", err, len(entries))
			}
			return
		}
		if len(entries) != 1 || entries[0].Name() != rep.JobID {
			t.Fatalf("entries %v for job %q", entries, rep.JobID)
		}
		top, _ := os.ReadDir(home)
		if len(top) != 1 {
			t.Fatalf("%d entries in the home, want jobs/ only", len(top))
		}
	})
}

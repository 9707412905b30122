package sweep

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFollow: a follower sees a running sweep's results as they are
// appended (a line half-written waits for its end), its document when it
// is saved, and that it stopped running, having read all it wrote; it
// takes no lock, so the sweep can be resumed while it follows.
func TestFollow(t *testing.T) {
	store, doc := newSweep(t)
	res, _, err := store.OpenResults(doc.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Append(passed(0, 0.5)); err != nil {
		t.Fatal(err)
	}
	f, got, prior, err := store.Follow(doc.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	if got.SweepID != doc.SweepID || len(prior) != 1 || prior[0].Index != 0 {
		t.Fatalf("follow: document %s, prior %+v", got.SweepID, prior)
	}
	poll := func() ([]Result, *Document, bool) {
		t.Helper()
		results, d, running, err := f.Poll()
		if err != nil {
			t.Fatal(err)
		}
		return results, d, running
	}
	if results, d, running := poll(); len(results) != 0 || d != nil || !running {
		t.Fatalf("nothing new: %d results, document %v, running %v", len(results), d != nil, running)
	}
	if err := res.Append(failed(1)); err != nil {
		t.Fatal(err)
	}
	// Half a line, as a writer in the middle of its write leaves it.
	path := filepath.Join(store.Dir(doc.SweepID), ResultsFile)
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteString(`{"index": 2, "fold": null, "phase": null, "par`); err != nil {
		t.Fatal(err)
	}
	if results, _, _ := poll(); len(results) != 1 || results[0].Index != 1 {
		t.Fatalf("after one line and a half: %+v", results)
	}
	if _, err := w.WriteString(`ams": {"fast": 2}, "job_id": "j2", "status": "passed", "failure_kind": null, "metrics": {"sharpe": 1}, ` +
		`"fingerprint": "f", "orders_hash": "o", "duration_ms": 1}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if results, _, _ := poll(); len(results) != 1 || results[0].Index != 2 {
		t.Fatalf("the rest of the line: %+v", results)
	}
	// A save of the document (written whole, by a rename).
	saved := *got
	saved.Counts.Done = 3
	if err := store.Save(&saved); err != nil {
		t.Fatal(err)
	}
	if _, d, _ := poll(); d == nil || d.Counts.Done != 3 {
		t.Fatalf("the saved document: %+v", d)
	}
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
	if results, _, running := poll(); running || len(results) != 0 {
		t.Fatalf("after the sweep stopped: running %v, %d results", running, len(results))
	}
	// The follower held nothing: a resume opens the results.
	again, _, err := store.OpenResults(doc.SweepID)
	if err != nil {
		t.Fatalf("a resume while a follower follows: %v", err)
	}
	again.Close()
}

// TestFollowRefusesARewrittenFile: results.jsonl shorter than what was
// read is an error, not results read twice.
func TestFollowRefusesARewrittenFile(t *testing.T) {
	store, doc := newSweep(t)
	res, _, err := store.OpenResults(doc.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Append(passed(0, 0.5)); err != nil {
		t.Fatal(err)
	}
	res.Close()
	f, _, _, err := store.Follow(doc.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store.Dir(doc.SweepID), ResultsFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := f.Poll(); err == nil {
		t.Fatal("a rewritten results file was followed")
	}
}

package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The session keeps its data between runs (watch mode) while the files are
// unchanged, opens it again when they change, and closes a replaced set
// one replacement later, when no run can still read it.
func TestSessionKeepsData(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bars.csv")
	write := func(closeAt string, mtime time.Time) {
		t.Helper()
		text := "timestamp,symbol,open,high,low,close,volume\n" +
			"2026-01-05T00:00:00Z,X,100,101,99,100,1\n2026-01-05T00:01:00Z,X,100,101,99," + closeAt + ",1\n"
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour)
	write("100.5", old)
	s := New(Config{Data: []string{dir}})
	defer s.Close()
	ctx := context.Background()
	first, err := s.DataSet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.DataSet(ctx); err != nil || again != first {
		t.Fatalf("unchanged data opened again: %v", err)
	}
	write("100.25", old.Add(time.Minute))
	second, err := s.DataSet(ctx)
	if err != nil || second == first {
		t.Fatalf("changed data not opened again: %v", err)
	}
	// The replaced set stays open (a run that was stopping may read it)…
	if s.retired != first {
		t.Fatal("the replaced set is not kept open")
	}
	// …until it is replaced in turn.
	write("100.75", old.Add(2*time.Minute))
	if _, err := s.DataSet(ctx); err != nil {
		t.Fatal(err)
	}
	if s.retired != second {
		t.Error("the set replaced last is not the one kept open")
	}
	// Bad data is bad input, naming the file, line and field.
	write("abc", old.Add(3*time.Minute))
	_, err = s.DataSet(ctx)
	if err == nil || !strings.Contains(err.Error(), `bars.csv line 3 field "close": not a number: "abc"`) {
		t.Errorf("bad data: %v", err)
	}
}

// The set the setup opened is the first run's, even when its files look
// changed since (a file written within two seconds of its opening is not
// taken as unchanged): opening it again would hold the data twice. The
// runs after it ask Stale as before.
func TestSessionFirstRunTakesSetupData(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bars.csv")
	text := "timestamp,symbol,open,high,low,close,volume\n2026-01-05T00:00:00Z,X,100,101,99,100,1\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s := New(Config{Data: []string{dir}})
	defer s.Close()
	ctx := context.Background()
	setup, err := s.DataSet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.fresh = true // as Open's loader leaves it
	if err := os.WriteFile(path, []byte(strings.Replace(text, "100,1\n", "100,2\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if first, err := s.DataSet(ctx); err != nil || first != setup {
		t.Fatalf("the first run did not take the setup's set: %v", err)
	}
	if again, err := s.DataSet(ctx); err != nil || again == setup {
		t.Fatalf("changed data not opened again for the second run: %v", err)
	}
}

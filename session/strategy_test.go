package session

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOfferExample(t *testing.T) {
	empty := t.TempDir()
	var out strings.Builder
	path, err := OfferExample(empty, strings.NewReader("\n"), &out)
	if err != nil || path != filepath.Join(empty, "strategy.py") || !strings.Contains(out.String(), "Write the example strategy to") {
		t.Fatalf("empty folder, yes: %q %v, asked %q", path, err, out.String())
	}
	if data, err := os.ReadFile(path); err != nil || !strings.Contains(string(data), "MANIFEST") {
		t.Fatalf("the example was not written: %v", err)
	}
	// Not empty any more: nothing is asked.
	out.Reset()
	if path, _ := OfferExample(empty, strings.NewReader("y\n"), &out); path != "" || out.Len() != 0 {
		t.Fatalf("a folder with files: %q, asked %q", path, out.String())
	}
	other := t.TempDir()
	if path, _ := OfferExample(other, strings.NewReader("n\n"), &out); path != "" {
		t.Fatalf("no: %q", path)
	}
	if entries, _ := os.ReadDir(other); len(entries) != 0 {
		t.Fatal("no, yet something was written")
	}
}

// TestMissingStrategyAsks: a STRATEGY that is not there is said so, with
// the nearest .py file of its folder; at a terminal the answer opens that
// file (the default), waits for the one asked for (c), or quits, exit 2;
// elsewhere it is exit 2 at once. The workbench waited for the file,
// whatever its name.
func TestMissingStrategyAsks(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rsi.py"), []byte("def on_data(ctx, h): pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "rsii.py")
	_, statErr := os.Stat(missing)
	for _, tc := range []struct {
		answer string
		want   string // the path opened; "" for a refusal
	}{
		{"\n", filepath.Join(dir, "rsi.py")},
		{"o\n", filepath.Join(dir, "rsi.py")},
		{"c\n", missing},
		{"q\n", ""},
		{"", filepath.Join(dir, "rsi.py")}, // end of input: the default
	} {
		var out strings.Builder
		got, err := AskMissing(missing, statErr, true, strings.NewReader(tc.answer), &out)
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("answer %q: %q, %v; want %q", tc.answer, got, err, tc.want)
		}
		if !strings.Contains(out.String(), "No strategy "+missing+" here. Open "+filepath.Join(dir, "rsi.py")+" instead [o]") {
			t.Errorf("the question: %q", out.String())
		}
		if err != nil && !strings.Contains(err.Error(), "rsii.py: no such file; did you mean "+filepath.Join(dir, "rsi.py")+"?") {
			t.Errorf("the refusal: %v", err)
		}
	}
	if _, err := AskMissing(missing, statErr, false, strings.NewReader("o\n"), io.Discard); err == nil {
		t.Error("without a terminal to answer on, a missing strategy opened")
	}
	// A folder without a .py file: create it, or quit (the default).
	empty := filepath.Join(t.TempDir(), "new.py")
	_, statErr = os.Stat(empty)
	var out strings.Builder
	if got, err := AskMissing(empty, statErr, true, strings.NewReader("\n"), &out); err == nil || got != "" ||
		!strings.Contains(out.String(), "Create it and wait for its first save [c], or quit [q]? [c/Q]") {
		t.Errorf("an empty folder's default: %q, %v, %q", got, err, out.String())
	}
	if got, err := AskMissing(empty, statErr, true, strings.NewReader("c\n"), io.Discard); err != nil || got != empty {
		t.Errorf("c in an empty folder: %q, %v", got, err)
	}
}

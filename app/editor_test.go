package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEditorSetting(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"EDITOR": "vim"}, "vim"},
		{map[string]string{"EDITOR": "vim", "VISUAL": "code --wait"}, "code --wait"},
		{map[string]string{"EDITOR": "vim", "VISUAL": "code", "STRATBENCH_EDITOR": "ed --line {line} {file}"}, "ed --line {line} {file}"},
		{map[string]string{"VISUAL": "  "}, ""},
	} {
		if got := editorSetting(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.env, got, tc.want)
		}
	}
}

func TestOfferExample(t *testing.T) {
	empty := t.TempDir()
	var out strings.Builder
	path, err := offerExample(empty, strings.NewReader("\n"), &out)
	if err != nil || path != filepath.Join(empty, "strategy.py") || !strings.Contains(out.String(), "Write the example strategy to") {
		t.Fatalf("empty folder, yes: %q %v, asked %q", path, err, out.String())
	}
	if data, err := os.ReadFile(path); err != nil || !strings.Contains(string(data), "MANIFEST") {
		t.Fatalf("the example was not written: %v", err)
	}
	// Not empty any more: nothing is asked.
	out.Reset()
	if path, _ := offerExample(empty, strings.NewReader("y\n"), &out); path != "" || out.Len() != 0 {
		t.Fatalf("a folder with files: %q, asked %q", path, out.String())
	}
	other := t.TempDir()
	if path, _ := offerExample(other, strings.NewReader("n\n"), &out); path != "" {
		t.Fatalf("no: %q", path)
	}
	if entries, _ := os.ReadDir(other); len(entries) != 0 {
		t.Fatal("no, yet something was written")
	}
}

package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// TestIsScript: a "#!" script is a launcher of another interpreter; a
// program (this test binary, an ELF file), an empty file and a missing one
// are not.
func TestIsScript(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{write("shim", "#!/usr/bin/env bash\nexec python3 \"$@\"\n"), true},
		{write("bang", "#!"), true},
		{self, false},
		{write("empty", ""), false},
		{write("hash", "#"), false},
		{filepath.Join(dir, "missing"), false},
	} {
		if got := IsScript(tc.path); got != tc.want {
			t.Errorf("IsScript(%s) = %v, want %v", filepath.Base(tc.path), got, tc.want)
		}
	}
}

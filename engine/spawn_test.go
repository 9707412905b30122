package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"stratbench/sandbox"
	"stratbench/supervisor"
)

// TestKeptUnderTmp: the sandbox policy's paths under the host's /tmp are
// kept visible under the private /tmp, read-only unless written; /tmp itself
// is the private one when written, and a refusal when read.
func TestKeptUnderTmp(t *testing.T) {
	dir := t.TempDir()
	if !strings.HasPrefix(dir, "/tmp/") {
		t.Skipf("the test's folder %s is not under /tmp", dir)
	}
	strat, arts, bin := filepath.Join(dir, "strat"), filepath.Join(dir, "home", "artifacts"), filepath.Join(dir, "venv", "bin")
	for _, d := range []string{strat, arts, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	py, err := os.Executable() // any executable file
	if err != nil {
		t.Fatal(err)
	}
	pol := sandbox.Policy{ReadDirs: []string{strat, "/usr/lib"}, ExecFiles: []string{py},
		WriteDirs: []string{arts, "/tmp"}, WriteFiles: []string{"/dev/null"}}
	kept, err := keptUnderTmp(pol, filepath.Join(bin, "python"))
	if err != nil {
		t.Fatal(err)
	}
	want := []supervisor.TmpMount{{Path: strat}, {Path: bin}, {Path: arts, Writable: true}}
	if strings.HasPrefix(py, "/tmp/") {
		want = slices.Insert(want, 1, supervisor.TmpMount{Path: py})
	}
	if !slices.Equal(kept, want) {
		t.Errorf("kept %+v, want %+v", kept, want)
	}
	pol.ReadDirs = append(pol.ReadDirs, "/tmp")
	if _, err := keptUnderTmp(pol, filepath.Join(bin, "python")); err == nil || !strings.Contains(err.Error(), "move the strategy into a folder of its own") {
		t.Errorf("/tmp read: %v, want a refusal", err)
	}
}

package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteFileReplacesAndLeavesNothingBehind(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "job.json")
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, d := range []Durability{Durable, Volatile} {
		for _, content := range []string{"first", "second, longer"} {
			if err := WriteFile(path, []byte(content), 0o644, d); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != content {
				t.Fatalf("content %q, %v; want %q", got, err, content)
			}
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, %v; want 0644 whatever the umask", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("%d files in the folder, want only the target", len(entries))
	}
}

func TestWriteFileErrorNamesThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "job.json")
	err := WriteFile(path, []byte("x"), 0o644, Durable)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v, want one naming %s", err, path)
	}
}

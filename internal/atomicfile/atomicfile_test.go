package atomicfile

import (
	"errors"
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

// TestWriteRegularReplacesNothingButAFile: a path that is a link (as
// /dev/stdout is), a FIFO or a folder is refused, named, and left as it
// was; a regular file or a new name is written.
func TestWriteRegularReplacesNothingButAFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	fifo := filepath.Join(dir, "fifo")
	sub := filepath.Join(dir, "sub")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, what := range map[string]string{link: "a symbolic link", fifo: "a FIFO", sub: "a folder"} {
		before, _ := os.Lstat(path)
		err := WriteRegular(path, []byte("new"), 0o644, Durable)
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), what) {
			t.Errorf("WriteRegular(%s): %v; want ErrNotRegular naming it as %s", path, err, what)
		}
		after, err := os.Lstat(path)
		if err != nil || after.Mode() != before.Mode() {
			t.Errorf("%s was %v, is %v (%v)", path, before.Mode(), after.Mode(), err)
		}
	}
	if got, _ := os.ReadFile(target); string(got) != "kept" {
		t.Errorf("the link's target holds %q: written through the link", got)
	}
	for _, path := range []string{target, filepath.Join(dir, "new")} {
		if err := WriteRegular(path, []byte("new"), 0o644, Durable); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != "new" {
			t.Errorf("%s holds %q", path, got)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 5 {
		t.Errorf("%d entries, want the 5 files and no temporary one", len(entries))
	}
}

func TestCheckTargetNamesAFolderThatIsNot(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing", "r.html"), filepath.Join(file, "r.html")} {
		if err := CheckTarget(path); err == nil || !strings.Contains(err.Error(), filepath.Dir(path)) {
			t.Errorf("CheckTarget(%s): %v; want an error naming its folder", path, err)
		}
	}
}

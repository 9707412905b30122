package nofollow

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// tree makes, in a temporary folder: home/ with a folder, a file, links to
// a victim folder and file outside it, and a FIFO; and victim/ beside it
// holding a file. It returns the two folders.
func tree(t *testing.T) (home, victim string) {
	t.Helper()
	root := t.TempDir()
	home, victim = filepath.Join(root, "home"), filepath.Join(root, "victim")
	for _, dir := range []string{filepath.Join(home, "job", "artifacts"), victim} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.WriteFile(filepath.Join(victim, "keep"), []byte("victim"), 0o644))
	must(t, os.WriteFile(filepath.Join(home, "job", "job.json"), []byte("{}"), 0o644))
	must(t, os.Symlink(victim, filepath.Join(home, "linked")))
	must(t, os.Symlink(victim, filepath.Join(home, "job", "artifacts", "out")))
	must(t, os.Symlink(filepath.Join(victim, "keep"), filepath.Join(home, "job", "keep")))
	must(t, unix.Mkfifo(filepath.Join(home, "job", "fifo"), 0o644))
	return home, victim
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func victimIntact(t *testing.T, victim string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(victim, "keep")); err != nil || string(b) != "victim" {
		t.Fatalf("the victim outside the folder changed: %q, %v", b, err)
	}
}

func TestLinksAreNeverFollowed(t *testing.T) {
	home, victim := tree(t)
	if _, err := Open(filepath.Join(home, "linked")); !errors.Is(err, ErrSymlink) {
		t.Errorf("Open of a link to a folder: %v, want ErrSymlink", err)
	}
	d, err := Open(home)
	must(t, err)
	defer d.Close()
	if _, err := d.Sub("linked"); !errors.Is(err, ErrSymlink) {
		t.Errorf("Sub of a link: %v, want ErrSymlink", err)
	}
	job, err := d.Sub("job")
	must(t, err)
	defer job.Close()
	if _, err := job.ReadFile("keep", 1<<20); !errors.Is(err, ErrSymlink) {
		t.Errorf("ReadFile of a link: %v, want ErrSymlink", err)
	}
	// A FIFO with no writer: the open must not wait for one.
	if _, err := job.ReadFile("fifo", 1<<20); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile of a FIFO: %v, want ErrNotRegular", err)
	}
	if _, err := job.ReadFile("artifacts", 1<<20); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile of a folder: %v, want ErrNotRegular", err)
	}
	if b, err := job.ReadFile("job.json", 1<<20); err != nil || string(b) != "{}" {
		t.Errorf("ReadFile: %q, %v", b, err)
	}
	if _, err := job.ReadFile("job.json", 1); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile over its limit: %v, want ErrTooLarge", err)
	}
	for _, name := range []string{"", ".", "..", "../victim", "a/b", "a\x00"} {
		if _, err := d.Sub(name); !errors.Is(err, ErrBadName) {
			t.Errorf("Sub(%q): %v, want ErrBadName", name, err)
		}
		if err := d.RemoveAll(name); !errors.Is(err, ErrBadName) {
			t.Errorf("RemoveAll(%q): %v, want ErrBadName", name, err)
		}
	}
	info, err := d.Lstat("linked")
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat of a link: %v, %v", info, err)
	}
	// Writing over a link replaces the link.
	must(t, job.WriteFile("keep", []byte("new"), 0o644))
	if b, err := job.ReadFile("keep", 10); err != nil || string(b) != "new" {
		t.Errorf("after WriteFile: %q, %v", b, err)
	}
	victimIntact(t, victim)
}

func TestRemoveAllRemovesLinksNotTargets(t *testing.T) {
	home, victim := tree(t)
	d, err := Open(home)
	must(t, err)
	defer d.Close()
	must(t, d.RemoveAll("linked"))
	must(t, d.RemoveAll("job"))
	must(t, d.RemoveAll("job")) // gone: no error
	entries, err := d.Entries()
	if err != nil || len(entries) != 0 {
		t.Fatalf("left %v, %v", entries, err)
	}
	victimIntact(t, victim)
	// A folder swapped for a link between a listing and the removal: the
	// link goes, its target stays.
	must(t, os.Symlink(victim, filepath.Join(home, "job")))
	must(t, d.RemoveAll("job"))
	victimIntact(t, victim)
}

func TestEntriesAreTheEntriesOwnTypes(t *testing.T) {
	home, _ := tree(t)
	d, err := Open(home)
	must(t, err)
	defer d.Close()
	entries, err := d.Entries()
	must(t, err)
	got := map[string]fs.FileMode{}
	for _, e := range entries {
		got[e.Name()] = e.Type()
	}
	if got["job"] != fs.ModeDir || got["linked"] != fs.ModeSymlink {
		t.Fatalf("types %v", got)
	}
}

// TestRemoveAllInBatches: a folder of more names than a batch, some of
// them folders and links, is removed whole.
func TestRemoveAllInBatches(t *testing.T) {
	home, victim := tree(t)
	big := filepath.Join(home, "big")
	must(t, os.MkdirAll(filepath.Join(big, "sub", "deeper"), 0o755))
	for i := range 2*removeBatch + 7 {
		must(t, os.WriteFile(filepath.Join(big, fmt.Sprintf("f%05d", i)), nil, 0o644))
	}
	must(t, os.Symlink(victim, filepath.Join(big, "sub", "deeper", "out")))
	d, err := Open(home)
	must(t, err)
	defer d.Close()
	must(t, d.RemoveAll("big"))
	if _, err := os.Lstat(big); !os.IsNotExist(err) {
		t.Fatalf("the folder is still there: %v", err)
	}
	victimIntact(t, victim)
}

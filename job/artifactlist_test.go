package job

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestListArtifacts: files by name with their sizes, folders the strategy
// made included, links not followed, the caps beside them; past
// MaxListedArtifacts the rest are counted, not named.
func TestListArtifacts(t *testing.T) {
	job := t.TempDir()
	dir := filepath.Join(job, "artifacts")
	write := func(name string, n int) {
		t.Helper()
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.Repeat("x", n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, err := ListArtifacts(job)
	if err != nil || len(a.Files) != 0 || a.Bytes != 0 {
		t.Fatalf("no artifacts folder: %+v, %v", a, err)
	}
	write("equity.png", 300)
	write("plots/b.html", 20)
	write("a.csv", 1)
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	a, err = ListArtifacts(job)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, f := range a.Files {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, []string{"a.csv", "equity.png", "link", "plots/b.html"}) || a.Files[1].Bytes != 300 {
		t.Errorf("files %+v", a.Files)
	}
	if a.Bytes != 321+int64(len("/etc/passwd")) || a.CapBytes != 2<<30 || a.FileCapBytes != 1<<30 || a.Unlisted != 0 {
		t.Errorf("listing %+v", a)
	}
	if got := a.Path(a.Files[3]); got != filepath.Join(dir, "plots", "b.html") {
		t.Errorf("path %s", got)
	}
	for i := range MaxListedArtifacts + 5 {
		write(fmt.Sprintf("many/%04d", i), 2)
	}
	a, err = ListArtifacts(job)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Files) != MaxListedArtifacts || a.Unlisted != 9 || a.Bytes != 321+11+2*(MaxListedArtifacts+5) {
		t.Errorf("%d listed, %d unlisted, %d bytes", len(a.Files), a.Unlisted, a.Bytes)
	}
}

package job

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseBudget(t *testing.T) {
	for in, want := range map[string]Budget{
		"":            DefaultBudget(),
		"all":         {},
		" ALL ":       {},
		"500":         {Jobs: 500, Bytes: DefaultKeepBytes},
		"2GiB":        {Jobs: DefaultKeepJobs, Bytes: 2 << 30},
		"800MB":       {Jobs: DefaultKeepJobs, Bytes: 800e6},
		"500,2GiB":    {Jobs: 500, Bytes: 2 << 30},
		"1.5 GiB, 20": {Jobs: 20, Bytes: 3 << 29},
	} {
		got, err := ParseBudget(in)
		if err != nil || got != want {
			t.Errorf("ParseBudget(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "-1", "x", "500,", ",", "1,2", "1GiB,2GiB", "5 parsecs", "1KB", "1e400GiB", "1,2,3", "NaNGiB"} {
		if b, err := ParseBudget(in); err == nil || !strings.Contains(err.Error(), "STRATBENCH_KEEP=") {
			t.Errorf("ParseBudget(%q) = %+v, %v; want an error", in, b, err)
		}
	}
}

func FuzzParseBudget(f *testing.F) {
	for _, s := range []string{"500", "2GiB", "500,2GiB", "all", "1.5TB", ",", "9999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBudget(s)
		if err == nil && (b.Jobs < 0 || b.Bytes < 0) {
			t.Fatalf("%q: %+v", s, b)
		}
	})
}

// TestBudgetOver: the newest removable jobs are kept while they fit; the
// job that just ran counts and stays; jobs kept apart neither count nor go.
func TestBudgetOver(t *testing.T) {
	now := time.Now()
	mk := func(id string, bytes int64, status Status, kept bool) Folder {
		r := &Report{JobID: id, Status: status}
		if status != StatusRunning {
			r.FinishedAt = &now
		}
		return Folder{ID: id, Report: r, Bytes: bytes, Kept: kept}
	}
	jobs := []Folder{ // newest first
		mk("j9", 10, StatusPassed, false), // just ran
		mk("j8", 10, StatusRunning, false),
		mk("j7", 10, StatusFailed, false),
		mk("j6", 10, StatusPassed, true),
		mk("j5", 10, StatusPassed, false), // of a kept sweep
		mk("j4", 10, StatusPassed, false),
		mk("j3", 10, StatusPassed, false),
	}
	apart := func(f Folder) bool { return f.ID == "j5" }
	ids := func(fs []Folder) string {
		var s []string
		for _, f := range fs {
			s = append(s, f.ID)
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		b    Budget
		ran  string
		want string
	}{
		{Budget{Jobs: 2}, "j9", "j4 j3"},
		{Budget{Jobs: 1}, "j9", "j7 j4 j3"},
		{Budget{Jobs: 1}, "j7", "j4 j3"}, // j9 is newer: it fits; j7 is over but stays
		{Budget{Bytes: 25}, "j9", "j4 j3"},
		{Budget{Jobs: 9, Bytes: 5}, "j9", "j7 j4 j3"},
		{Budget{}, "j9", ""},
	} {
		if got := ids(tc.b.Over(jobs, apart, tc.ran)); got != tc.want {
			t.Errorf("%+v ran %s: over %q, want %q", tc.b, tc.ran, got, tc.want)
		}
	}
}

// TestKeepAndJobFolders: a mark set by Keep shows in JobFolders and goes
// with Unkeep; a mark that is a link or a folder is no mark.
func TestKeepAndJobFolders(t *testing.T) {
	home := t.TempDir()
	s, err := OpenStore(home)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"20260101-000000.000-aaaa", "20260101-000000.000-bbbb", "20260101-000000.000-cccc"}
	for _, id := range ids {
		os.MkdirAll(filepath.Join(s.JobDir(id), "artifacts", "deep"), 0o755)
		b, _ := json.Marshal(Report{JobID: id, Status: StatusPassed})
		os.WriteFile(filepath.Join(s.JobDir(id), "job.json"), b, 0o644)
		os.WriteFile(filepath.Join(s.JobDir(id), "artifacts", "deep", "x"), make([]byte, 1000), 0o644)
	}
	if err := s.Keep(ids[0]); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(home, "elsewhere"), filepath.Join(s.JobDir(ids[1]), keepFile))
	os.Mkdir(filepath.Join(s.JobDir(ids[2]), keepFile), 0o755)
	if err := s.Keep("../x"); err == nil {
		t.Error("Keep of a path")
	}
	folders, bad, err := s.JobFolders()
	if err != nil || len(bad) != 0 || len(folders) != 3 {
		t.Fatalf("%d folders, %d bad, %v", len(folders), len(bad), err)
	}
	for _, f := range folders {
		if f.Kept != (f.ID == ids[0]) || f.Bytes < 1000 {
			t.Errorf("%s: kept %v, %d bytes", f.ID, f.Kept, f.Bytes)
		}
	}
	if err := s.Unkeep(ids[0]); err != nil {
		t.Fatal(err)
	}
	if folders, _, _ := s.JobFolders(); folders[2].Kept {
		t.Error("still kept after Unkeep")
	}
}

// TestRemoveEndedLooksAgain: RemoveEnded leaves a job that a command
// holds, one marked to keep and one whose report says running, each with
// its error, and removes an ended one once nothing holds it.
func TestRemoveEndedLooksAgain(t *testing.T) {
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	finished := time.Now()
	write := func(id string, status Status) {
		os.MkdirAll(s.JobDir(id), 0o755)
		rep := Report{JobID: id, Status: status}
		if status != StatusRunning {
			rep.FinishedAt = &finished
		}
		b, _ := json.Marshal(rep)
		os.WriteFile(filepath.Join(s.JobDir(id), "job.json"), b, 0o644)
	}
	held, kept, running := "20260101-000000.000-aaaa", "20260101-000000.000-bbbb", "20260101-000000.000-cccc"
	write(held, StatusPassed)
	write(kept, StatusFailed)
	write(running, StatusRunning)
	h, err := HoldFolder(s.JobDir(held))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Keep(kept); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]error{held: ErrInUse, kept: ErrKept, running: ErrRunning} {
		if err := s.RemoveEnded(id); !errors.Is(err, want) {
			t.Errorf("RemoveEnded(%s) = %v, want %v", id, err, want)
		}
		if _, err := os.Stat(s.JobDir(id)); err != nil {
			t.Errorf("%s removed: %v", id, err)
		}
	}
	h.Release()
	h.Release() // a second Release does nothing
	if err := s.RemoveEnded(held); err != nil {
		t.Fatalf("RemoveEnded once released: %v", err)
	}
	if _, err := os.Stat(s.JobDir(held)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s still there once released: %v", held, err)
	}
}

// TestRemoveLeftovers: RemoveLeftovers removes the scratch folders of
// tmp/ that nothing holds and that lay unchanged a while, never a held or
// a fresh one.
func TestRemoveLeftovers(t *testing.T) {
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.RemoveLeftovers(); n != 0 || err != nil {
		t.Fatalf("without tmp/: %d, %v", n, err)
	}
	held, err := s.HoldTemp("check-")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	dead, err := s.HoldTemp("check-")
	if err != nil {
		t.Fatal(err)
	}
	dead.Release() // as the kernel does when its process is killed
	fresh, err := s.HoldTemp("check-")
	if err != nil {
		t.Fatal(err)
	}
	fresh.Release()
	os.WriteFile(filepath.Join(dead.Path(), "cut.csv"), []byte("x"), 0o644)
	old := time.Now().Add(-2 * leftoverAfter)
	for _, p := range []string{held.Path(), dead.Path()} {
		os.Chtimes(p, old, old)
	}
	if n, err := s.RemoveLeftovers(); n != 1 || err != nil {
		t.Fatalf("RemoveLeftovers: %d, %v; want 1", n, err)
	}
	for p, want := range map[string]bool{held.Path(): true, dead.Path(): false, fresh.Path(): true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: there %v, want %v", p, err == nil, want)
		}
	}
}

package e2e

// End-to-end tests of what stratbench trusts in its home: nothing a record
// there holds names a path, and nothing is reached through a link.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"stratbench/sweep"
)

// copyTree copies the folder src to dst (files and folders only).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPruneRemovesNothingOutsideTheHome: a home whose records name other
// paths (a job.json whose job_id is "../../victim", "..", or another job's
// id; a sweep.json whose sweep_id is "../../victim" and whose strategy is a
// FIFO), whose jobs/ID and sweeps/ID are links to folders outside it that
// look like a job's and a sweep's, and whose finished job holds a link to
// the outside: prune removes the one real finished job (without following
// its link), leaves every other folder alone, says so on stderr naming the
// folders, and nothing outside jobs/ and sweeps/ changes: not the victims
// beside the home, not the home's own files. As root and as an unprivileged
// user who owns the victims. Before the fix prune removed the victim and
// the whole home (and said "removed 3 jobs").
func TestPruneRemovesNothingOutsideTheHome(t *testing.T) {
	for _, mode := range []struct {
		name         string
		unprivileged bool
	}{{"root", false}, {"user", true}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			e := newAttackEnv(t, mode.unprivileged, false)
			// The home and the victims share a parent the user may write
			// in, so that only stratbench's own rules keep the victims.
			base := t.TempDir()
			e.home = filepath.Join(base, "home")
			victim, victimSweep := filepath.Join(base, "victim"), filepath.Join(base, "victim-sweep")
			for _, dir := range []string{e.home, victim, victimSweep} {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if mode.unprivileged {
				chownTree(t, base, attackUID)
			}
			r := e.run("--ci", "--output", "json", strategy("ok_counter.py"))
			if r.code != 0 {
				t.Fatalf("--ci: exit %d\n%s", r.code, r.stderr)
			}
			var rep struct {
				JobID string `json:"job_id"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatal(err)
			}
			jobs := filepath.Join(e.home, "jobs")
			good := filepath.Join(jobs, rep.JobID)
			// The victim looks like a finished job's folder.
			copyTree(t, good, victim)
			if err := os.WriteFile(filepath.Join(victim, "keep.txt"), []byte("the user's"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(e.home, "keep.txt"), []byte("the home's own"), 0o644); err != nil {
				t.Fatal(err)
			}
			// Job folders whose job.json names another path, or another job.
			hostile := map[string]string{}
			for i, recorded := range []string{"../../victim", "..", rep.JobID} {
				id := rep.JobID[:len(rep.JobID)-4] + "ee0" + strconv.Itoa(i)
				copyTree(t, good, filepath.Join(jobs, id))
				editJSON(t, filepath.Join(jobs, id, "job.json"), func(doc map[string]any) { doc["job_id"] = recorded })
				hostile[id] = recorded
			}
			// A job folder that is a link to the victim (under the victim's
			// own id), and a link to the victim inside the finished job.
			linkedJob := rep.JobID[:len(rep.JobID)-4] + "ff00"
			editJSON(t, filepath.Join(victim, "job.json"), func(doc map[string]any) { doc["job_id"] = linkedJob })
			if err := os.Symlink(victim, filepath.Join(jobs, linkedJob)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, filepath.Join(good, "artifacts", "out")); err != nil {
				t.Fatal(err)
			}
			// A finished sweep's folder outside, linked from sweeps/; and a
			// sweep folder whose sweep.json names another path, stopped,
			// with a FIFO for its strategy (prune reads a stopped sweep's
			// strategy to tell whether it can resume).
			fifo := filepath.Join(victimSweep, "strategy.py")
			if err := unix.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			sweepDoc := func(id, status string) []byte {
				b, _ := json.Marshal(map[string]any{"sweep_id": id, "status": status, "strategy": map[string]any{"path": fifo, "sha256": "00"},
					"started_at": "2026-01-05T00:00:00Z", "finished_at": "2026-01-05T00:00:01Z"})
				return b
			}
			linkedSweep := sweep.IDPrefix + "20260105-000000.000-ff00"
			if err := os.WriteFile(filepath.Join(victimSweep, sweep.DocumentFile), sweepDoc(linkedSweep, "passed"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(e.home, "sweeps"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victimSweep, filepath.Join(e.home, "sweeps", linkedSweep)); err != nil {
				t.Fatal(err)
			}
			awaySweep := sweep.IDPrefix + "20260105-000000.000-ee00"
			if err := os.MkdirAll(filepath.Join(e.home, "sweeps", awaySweep), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(e.home, "sweeps", awaySweep, sweep.DocumentFile), sweepDoc("../../victim-sweep", "stopped"), 0o644); err != nil {
				t.Fatal(err)
			}
			stoppedSweep := sweep.IDPrefix + "20260105-000000.000-ee01"
			if err := os.MkdirAll(filepath.Join(e.home, "sweeps", stoppedSweep), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(e.home, "sweeps", stoppedSweep, sweep.DocumentFile), sweepDoc(stoppedSweep, "stopped"), 0o644); err != nil {
				t.Fatal(err)
			}
			if mode.unprivileged {
				chownTree(t, base, attackUID)
			}
			homeFile := filepath.Join(e.home, "keep.txt")
			outside := func() []string { return snapshot(t, victim, victimSweep, homeFile) }
			before := outside()

			r = e.run("prune", "--yes")
			// The finished job goes, and the stopped sweep whose strategy
			// cannot be read (it cannot resume).
			if r.code != 0 || !strings.Contains(r.stdout, "removed 1 sweep and 1 job (") {
				t.Errorf("prune: exit %d, want 0 removing the finished job and the stopped sweep\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			if after := outside(); !slices.Equal(before, after) {
				t.Errorf("prune changed what lies outside jobs/ and sweeps/:\nbefore %v\nafter  %v", before, after)
			}
			if _, err := os.Lstat(good); !os.IsNotExist(err) {
				t.Errorf("the finished job's folder is still there: %v", err)
			}
			for id, recorded := range hostile {
				if _, err := os.Stat(filepath.Join(jobs, id, "job.json")); err != nil {
					t.Errorf("the folder %s (job_id %q) was not left alone: %v", id, recorded, err)
				}
				if !strings.Contains(r.stderr, filepath.Join(jobs, id)+" alone") {
					t.Errorf("prune does not say it left %s alone:\n%s", id, r.stderr)
				}
			}
			if !strings.Contains(r.stderr, filepath.Join(e.home, "sweeps", awaySweep)+" alone") {
				t.Errorf("prune does not say it left the sweep %s alone:\n%s", awaySweep, r.stderr)
			}
			for _, link := range []string{filepath.Join(jobs, linkedJob), filepath.Join(e.home, "sweeps", linkedSweep)} {
				if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
					t.Errorf("%s: %v; want the link left as it is", link, err)
				}
			}
			if peak := r.peakRSS; peak > maxHostRSS {
				t.Errorf("stratbench's peak RSS %d MiB", peak>>20)
			}
			// The listings leave the hostile folders out, and say so.
			if j := e.run("jobs", "--output", "json"); j.code != 0 || !strings.Contains(j.stderr, "left out") {
				t.Errorf("jobs: exit %d\n%s", j.code, j.stderr)
			}
			if after := outside(); !slices.Equal(before, after) {
				t.Errorf("jobs changed what lies outside jobs/ and sweeps/")
			}

			// A home whose jobs folder is a link: refused, nothing removed.
			other := filepath.Join(base, "home2")
			if err := os.MkdirAll(other, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, filepath.Join(other, "jobs")); err != nil {
				t.Fatal(err)
			}
			if mode.unprivileged {
				chownTree(t, other, attackUID)
			}
			e.home = other
			r = e.run("prune", "--yes")
			if r.code != 2 || !strings.Contains(r.stderr, "symbolic link") {
				t.Errorf("prune in a home whose jobs folder is a link: exit %d, want 2\n%s", r.code, r.stderr)
			}
			if after := outside(); !slices.Equal(before, after) {
				t.Errorf("prune through a linked jobs folder changed what lies outside it")
			}
		})
	}
}

// chownTree gives the tree at root (links themselves, not their targets)
// to uid.
func chownTree(t *testing.T, root string, uid int) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

package e2e

// End-to-end tests of what stratbench trusts in its home: nothing a record
// there holds names a path, and nothing is reached through a link.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"stratbench/internal/e2etest"
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
			r := e.run("--ci", "--output", "json", e2etest.Strategy("ok_counter.py"))
			if r.Code != 0 {
				t.Fatalf("--ci: exit %d\n%s", r.Code, r.Stderr)
			}
			var rep struct {
				JobID string `json:"job_id"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
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
			// with a FIFO for its strategy (prune opens no file a record
			// names: the sweep is kept, as every stopped one is).
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
			// The finished job goes; the stopped sweep stays (resumable,
			// for all prune reads: nothing outside the home).
			if r.Code != 0 || !strings.Contains(r.Stdout, "removed 0 sweeps and 1 job (") || !strings.Contains(r.Stdout, "kept 1 stopped sweep") {
				t.Errorf("prune: exit %d, want 0 removing the finished job, keeping the stopped sweep\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
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
				if !strings.Contains(r.Stderr, filepath.Join(jobs, id)+" alone") {
					t.Errorf("prune does not say it left %s alone:\n%s", id, r.Stderr)
				}
			}
			if !strings.Contains(r.Stderr, filepath.Join(e.home, "sweeps", awaySweep)+" alone") {
				t.Errorf("prune does not say it left the sweep %s alone:\n%s", awaySweep, r.Stderr)
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
			if j := e.run("jobs", "--output", "json"); j.Code != 0 || !strings.Contains(j.Stderr, "left out") {
				t.Errorf("jobs: exit %d\n%s", j.Code, j.Stderr)
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
			if r.Code != 2 || !strings.Contains(r.Stderr, "symbolic link") {
				t.Errorf("prune in a home whose jobs folder is a link: exit %d, want 2\n%s", r.Code, r.Stderr)
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

// homeWithSweep makes a home with one finished sweep of two runs (and
// their jobs) and returns the sweep's id.
func homeWithSweep(t *testing.T, e *env) string {
	t.Helper()
	r := e.Run("sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--grid", "fast=3,4", "--jobs", "1")
	if r.Code != 0 {
		t.Fatalf("sweep: exit %d: %s", r.Code, r.Stderr)
	}
	var doc sweep.Document
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.SweepID
}

// TestLogsLineOverTheCap: nothing read from the home sizes an allocation.
// A job's logs.jsonl of one 400 MB line without a newline (a line
// stratbench never writes: an output line is cut at 64 KiB) was held
// whole by `logs`, `logs --follow` and `report` (2.37 GB of RSS for 800 MB)
// and dropped without a word. Now a line over job.MaxLogRecord is skipped,
// held no more than the cap, and a system line names the file and says
// what was left out.
func TestLogsLineOverTheCap(t *testing.T) {
	e := newEnv(t)
	homeWithSweep(t, e)
	ids, err := os.ReadDir(filepath.Join(e.Home, "jobs"))
	if err != nil || len(ids) == 0 {
		t.Fatal(err, ids)
	}
	id := ids[0].Name()
	logs := filepath.Join(e.Home, "jobs", id, "logs.jsonl")
	if err := os.WriteFile(logs, bytes.Repeat([]byte("a"), 400<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"logs", id}, {"logs", "--follow", id}, {"report", id, "--out", filepath.Join(t.TempDir(), "r.html")}} {
		r := e.runBounded(e.Command(args...))
		t.Logf("%v: exit %d, peak %d MiB", args, r.Code, r.peak>>20)
		if r.Code != 0 {
			t.Errorf("%v: exit %d: %s", args, r.Code, r.Stderr)
		}
		if r.peak > maxHostRSS {
			t.Errorf("%v: stratbench's peak RSS %d MiB, over %d MiB", args, r.peak>>20, maxHostRSS>>20)
		}
		if args[0] == "logs" && !strings.Contains(r.Stdout, logs+" ends in an unfinished line (400.00 MiB without its newline), left out") {
			t.Errorf("%v does not say what it left out:\n%.500s", args, r.Stdout)
		}
	}
}

// TestRunningSweepResultsBounded: a sweep.json saying "running" and a
// results.jsonl of 24 lines of 12 MB each (each under the 16 MiB line
// limit; the bulk a metrics field no report has) made `status SWEEP`,
// `sweeps` and `sweep --resume` hold them all: memory grew with the file
// (494–921 MiB for 300 MB). What is kept of a results line is now what a
// run writes (the report's metrics), and no more lines than the sweep's
// planned runs.
func TestRunningSweepResultsBounded(t *testing.T) {
	e := newEnv(t)
	id := homeWithSweep(t, e)
	editJSON(t, filepath.Join(e.Home, "sweeps", id, sweep.DocumentFile), func(m map[string]any) { m["status"] = "running"; m["finished_at"] = nil })
	results := filepath.Join(e.Home, "sweeps", id, sweep.ResultsFile)
	f, err := os.Create(results)
	if err != nil {
		t.Fatal(err)
	}
	big := "[" + strings.Repeat("1,", 6<<20) + "1]"
	for i := range 24 {
		fmt.Fprintf(f, `{"index":%d,"fold":null,"phase":null,"params":{"fast":3},"job_id":"x","status":"passed","failure_kind":null,"metrics":{"sharpe":1,"x":%s},"fingerprint":"a","orders_hash":"b","duration_ms":1}`+"\n", i, big)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"status", id}, {"sweeps"}, {"sweep", "--resume", id, "--ci"}} {
		r := e.runBounded(e.Command(args...))
		t.Logf("%v: exit %d, peak %d MiB: %.300s", args, r.Code, r.peak>>20, r.Stderr)
		if r.peak > maxHostRSS {
			t.Errorf("%v: stratbench's peak RSS %d MiB, over %d MiB", args, r.peak>>20, maxHostRSS>>20)
		}
		if args[0] == "sweep" && (r.Code != 2 || !strings.Contains(r.Stderr, results+" line 3: more results than the sweep's 2 planned runs")) {
			t.Errorf("resume: exit %d, want 2 naming the line past the plan: %s", r.Code, r.Stderr)
		}
	}
}

// TestPruneReadsNothingOutsideTheHome: a record must not name a path that
// stratbench reads. prune hashed the file a stopped sweep's sweep.json
// names as its strategy, whole, to tell whether the sweep could still
// resume: named a sparse file of 1 TiB outside the home, prune read it
// for minutes (a larger one, days). prune now keeps a stopped sweep
// whatever its strategy (until --older-than or --sweep) and opens no file
// outside the home; status, which says whether a resume would take it,
// does not read a file larger than any strategy.
func TestPruneReadsNothingOutsideTheHome(t *testing.T) {
	e := newEnv(t)
	id := homeWithSweep(t, e)
	sparse := filepath.Join(t.TempDir(), "strategy.py")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Skip("no sparse file of 1 TiB here:", err)
	}
	f.Close()
	editJSON(t, filepath.Join(e.Home, "sweeps", id, sweep.DocumentFile), func(m map[string]any) {
		m["status"] = "stopped"
		m["strategy"].(map[string]any)["path"] = sparse
	})
	// inotify tells whether anything opened the file.
	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(in)
	if _, err := unix.InotifyAddWatch(in, sparse, unix.IN_OPEN|unix.IN_ACCESS); err != nil {
		t.Fatal(err)
	}
	opened := func() bool {
		buf := make([]byte, 4096)
		n, _ := unix.Read(in, buf)
		return n > 0
	}
	if r := e.runBounded(e.Command("prune", "--yes")); r.Code != 0 || !strings.Contains(r.Stdout, "kept 1 stopped sweep") {
		t.Errorf("prune: exit %d, want 0 keeping the stopped sweep\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if opened() {
		t.Errorf("prune opened %s, named by %s", sparse, sweep.DocumentFile)
	}
	if r := e.runBounded(e.Command("status", id)); r.Code != 0 {
		t.Errorf("status: exit %d: %s", r.Code, r.Stderr)
	}
	if opened() {
		t.Errorf("status opened %s, 1 TiB, to hash it", sparse)
	}
}

// TestListingsHoldWhatTheyShow: `jobs` and `prune` held every job's
// report at once (Store.Checked), each up to the 32 MiB a job.json may
// take: 20 forged jobs whose failure traceback is 30 MB took them to 919
// MiB of RSS, growing with the number of jobs. A listing now keeps what it
// shows of each report (no traceback), reading them one at a time; `jobs
// --output json` writes the whole reports, one at a time.
func TestListingsHoldWhatTheyShow(t *testing.T) {
	e := newEnv(t)
	homeWithSweep(t, e)
	ids, err := os.ReadDir(filepath.Join(e.Home, "jobs"))
	if err != nil || len(ids) == 0 {
		t.Fatal(err, ids)
	}
	b, err := os.ReadFile(filepath.Join(e.Home, "jobs", ids[0].Name(), "job.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "sweep")
	m["status"] = "failed"
	m["failure"] = map[string]any{"kind": "exception", "hook": "on_data", "message": "m", "traceback": strings.Repeat("x", 30<<20)}
	for i := range 20 {
		id := fmt.Sprintf("20261206-0500%02d.000-ab%02d", i, i)
		m["job_id"] = id
		if err := os.MkdirAll(filepath.Join(e.Home, "jobs", id), 0o755); err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(m)
		if err := os.WriteFile(filepath.Join(e.Home, "jobs", id, "job.json"), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"jobs"}, {"jobs", "--output", "json", "--limit", "0"}, {"prune", "--yes", "--older-than", "1000d"}} {
		r := e.runBounded(e.Command(args...))
		t.Logf("%v: exit %d, peak %d MiB", args, r.Code, r.peak>>20)
		if r.Code != 0 {
			t.Errorf("%v: exit %d: %s", args, r.Code, r.Stderr)
		}
		if r.peak > maxHostRSS {
			t.Errorf("%v: stratbench's peak RSS %d MiB, over %d MiB", args, r.peak>>20, maxHostRSS>>20)
		}
		if len(args) == 1 && strings.Count(r.Stdout, "exception in on_data") != 20 {
			t.Errorf("jobs lists %d failed jobs, want 20:\n%.2000s", strings.Count(r.Stdout, "exception in on_data"), r.Stdout)
		}
		if len(args) == 5 {
			var list []map[string]any
			if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil || len(list) != 20 ||
				len(list[0]["failure"].(map[string]any)["traceback"].(string)) != 30<<20 {
				t.Errorf("jobs --output json: %d reports, %v; want 20, whole", len(list), err)
			}
		}
	}
}

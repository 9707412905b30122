package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/contract"
	"stratbench/job"
	"stratbench/supervisor"
)

// A job whose stratbench died without leaving a process-tree record (killed
// before the first sample, or after the tree was gone) is found by its owner
// record and marked failed; logs --follow does not wait for it. So is a job
// whose owner record a crash of the machine left empty (writeOwner does not
// wait for the disk).
func TestRecoverOwnerlessRunningJob(t *testing.T) {
	store, err := job.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	self, err := supervisor.Self()
	if err != nil {
		t.Fatal(err)
	}
	for id, owner := range map[string]supervisor.ProcID{
		"20260101-000000.000-dead": deadOwner(t),
		"20260101-000000.000-live": self,
	} {
		dir := runningJob(t, store, &job.Report{JobID: id, Status: job.StatusRunning, StartedAt: time.Now()}, owner)
		os.WriteFile(filepath.Join(dir, "logs.jsonl"), nil, 0o644)
	}
	crashed := store.JobDir("20260101-000000.000-crash")
	os.MkdirAll(crashed, 0o755)
	if err := writeJSONAtomic(filepath.Join(crashed, "job.json"), &job.Report{JobID: "20260101-000000.000-crash", Status: job.StatusRunning, StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(crashed, ownerFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := store.Logs(ctx, "20260101-000000.000-dead", RunnerGone, func(job.LogLine) error { return nil }); err != nil || ctx.Err() != nil {
		t.Fatalf("logs --follow of a job whose stratbench is gone: %v, waited: %v", err, ctx.Err())
	}

	ids, err := Recover(store)
	if err != nil || len(ids) != 2 || !slices.Contains(ids, "20260101-000000.000-dead") || !slices.Contains(ids, "20260101-000000.000-crash") {
		t.Fatalf("recovered %v, %v", ids, err)
	}
	for _, id := range ids {
		rep, _ := store.Load(id)
		if rep.Status != job.StatusFailed || rep.Failure == nil || rep.Failure.Kind != contract.KindCrash || rep.FinishedAt == nil {
			t.Fatalf("recovered job: %+v", rep)
		}
		if _, err := os.Stat(filepath.Join(store.JobDir(rep.JobID), ownerFile)); !os.IsNotExist(err) {
			t.Fatalf("%s: owner record kept", id)
		}
	}
	if live, _ := store.Load("20260101-000000.000-live"); live.Status != job.StatusRunning {
		t.Fatalf("a job of a live stratbench was touched: %s", live.Status)
	}
}

// TestRecoverKeepsTheParamsExactly: the report of a job whose stratbench
// was killed is written back with its params as they were, an int beyond
// 2**53 too (a float64 would round it), and Load gives them as written.
func TestRecoverKeepsTheParamsExactly(t *testing.T) {
	store, err := job.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	id := "20260101-000000.000-dead"
	params := map[string]any{"seed": int64(1<<53 + 1), "fast": int64(3), "ratio": 0.25, "mode": "fast", "short": true}
	running := &job.Report{JobID: id, Status: job.StatusRunning, StartedAt: time.Now(), Strategy: job.StrategyInfo{Params: params}}
	dir := runningJob(t, store, running, deadOwner(t))
	if ids, err := Recover(store); err != nil || !slices.Equal(ids, []string{id}) {
		t.Fatalf("recovered %v, %v", ids, err)
	}
	saved, err := os.ReadFile(filepath.Join(dir, "job.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Status   job.Status `json:"status"`
		Strategy struct {
			Params json.RawMessage `json:"params"`
		} `json:"strategy"`
	}
	if err := json.Unmarshal(saved, &got); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(params)
	var compact bytes.Buffer
	json.Compact(&compact, got.Strategy.Params)
	if got.Status != job.StatusFailed || compact.String() != string(want) {
		t.Fatalf("recovered job.json: status %s params %s, want failed with %s", got.Status, compact.String(), want)
	}
	rep, err := store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprint(rep.Strategy.Params); s != "map[fast:3 mode:fast ratio:0.25 seed:9007199254740993 short:true]" {
		t.Fatalf("loaded params %s", s)
	}
}

// TestRecoverTellsUnsavedFromKilled: a job whose stratbench ended it but
// could not write its final report (its owner record renamed to
// unsaved.json) is marked failed saying so, never as killed; one whose
// stratbench died while running it is marked killed. Both keep the records
// their run left.
func TestRecoverTellsUnsavedFromKilled(t *testing.T) {
	store, err := job.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	owner := supervisor.ProcID{PID: dead.Process.Pid, Start: 1}
	for id, marker := range map[string]string{"20260101-000000.000-kill": ownerFile, "20260101-000000.000-full": unsavedFile} {
		dir := store.JobDir(id)
		os.MkdirAll(filepath.Join(dir, "artifacts"), 0o755)
		os.MkdirAll(filepath.Join(dir, job.RecordsDir), 0o755)
		os.WriteFile(filepath.Join(dir, job.RecordsDir, "orders.csv"), []byte("record\n"), 0o644)
		if err := writeJSONAtomic(filepath.Join(dir, "job.json"), &job.Report{JobID: id, Status: job.StatusRunning, StartedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if err := writeJSONAtomic(filepath.Join(dir, marker), owner); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := Recover(store)
	if err != nil || len(ids) != 2 {
		t.Fatalf("recovered %v, %v", ids, err)
	}
	for id, want := range map[string]string{
		"20260101-000000.000-kill": "(it was killed)",
		"20260101-000000.000-full": "its final report could not be saved",
	} {
		rep, err := store.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Status != job.StatusFailed || rep.Failure == nil || !strings.Contains(rep.Failure.Message, want) {
			t.Errorf("%s: %s %+v, want a failure saying %q", id, rep.Status, rep.Failure, want)
		}
		if strings.HasSuffix(id, "full") && strings.Contains(rep.Failure.Message, "killed") {
			t.Errorf("%s is called killed: %s", id, rep.Failure.Message)
		}
		dir := store.JobDir(id)
		// The records of the run stay where they are (an older
		// version's plain CSV in records/ is read there).
		if _, err := os.Stat(filepath.Join(dir, job.RecordsDir, "orders.csv")); err != nil {
			t.Errorf("%s: records moved: %v", id, err)
		}
		for _, f := range []string{ownerFile, unsavedFile} {
			if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
				t.Errorf("%s: %s left", id, f)
			}
		}
	}
}

// deadOwner is the owner record of a stratbench that has died: a process
// that ran and was reaped.
func deadOwner(t *testing.T) supervisor.ProcID {
	t.Helper()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	return supervisor.ProcID{PID: dead.Process.Pid, Start: 1}
}

// runningJob writes the folder of a job that rep says is running, owned by
// owner, and returns the folder.
func runningJob(t *testing.T, store *job.Store, rep *job.Report, owner supervisor.ProcID) string {
	t.Helper()
	dir := store.JobDir(rep.JobID)
	os.MkdirAll(dir, 0o755)
	if err := writeJSONAtomic(filepath.Join(dir, "job.json"), rep); err != nil {
		t.Fatal(err)
	}
	if err := writeJSONAtomic(filepath.Join(dir, ownerFile), owner); err != nil {
		t.Fatal(err)
	}
	return dir
}

// snapshot returns every path under root with its content (a folder's is
// "dir", a link's its target), to tell that nothing there changed.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case d.Type()&os.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			out[path] = "link " + target
		case d.IsDir():
			out[path] = "dir"
		default:
			b, _ := os.ReadFile(path)
			out[path] = string(b)
		}
		return nil
	})
	return out
}

// victimJob makes, beside the home, a folder that looks like the folder
// of a running job whose stratbench died (a report, an owner record, the
// records of its run): what Recover and prune would act on.
func victimJob(t *testing.T, dir, id string) {
	t.Helper()
	os.MkdirAll(filepath.Join(dir, job.RecordsDir), 0o755)
	os.MkdirAll(filepath.Join(dir, "artifacts"), 0o755)
	os.WriteFile(filepath.Join(dir, job.RecordsDir, "orders.csv"), []byte("record\n"), 0o644)
	if err := writeJSONAtomic(filepath.Join(dir, "job.json"), &job.Report{JobID: id, Status: job.StatusRunning, StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := writeJSONAtomic(filepath.Join(dir, ownerFile), deadOwner(t)); err != nil {
		t.Fatal(err)
	}
}

// TestStoreTrustsNoRecordedPath: a job is its folder. A job.json whose
// job_id is not its folder's name ("..", "../../victim", another job's) is
// a RecordError that listings leave out and Recover does not act on; a
// jobs/ID that is a link to a job folder elsewhere is no job (not listed,
// not loaded, not recovered, and Remove removes the link, not what it
// points to); a job.json that is a link or a FIFO is refused without
// being followed or waited on; and a jobs folder that is a link is
// refused. Nothing outside the home changes.
func TestStoreTrustsNoRecordedPath(t *testing.T) {
	root := t.TempDir()
	home, victim := filepath.Join(root, "home"), filepath.Join(root, "victim")
	store, err := job.OpenStore(home)
	if err != nil {
		t.Fatal(err)
	}
	const linkedID = "20260101-000000.000-link"
	victimJob(t, victim, linkedID)
	os.WriteFile(filepath.Join(victim, "keep"), []byte("victim"), 0o644)
	before := snapshot(t, victim)

	ids := map[string]string{
		"20260101-000000.000-dots": "..",
		"20260101-000000.000-away": "../../victim",
		"20260101-000000.000-copy": "20260101-000000.000-good",
	}
	for id, recorded := range ids {
		dir := store.JobDir(id)
		victimJob(t, dir, recorded)
	}
	good := "20260101-000000.000-good"
	if err := os.MkdirAll(store.JobDir(good), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeJSONAtomic(filepath.Join(store.JobDir(good), "job.json"), &job.Report{JobID: good, Status: job.StatusPassed}); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, store.JobDir(linkedID)); err != nil {
		t.Fatal(err)
	}
	fifo := "20260101-000000.000-fifo"
	os.MkdirAll(store.JobDir(fifo), 0o755)
	if err := unix.Mkfifo(filepath.Join(store.JobDir(fifo), "job.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	linkedReport := "20260101-000000.000-lrep"
	os.MkdirAll(store.JobDir(linkedReport), 0o755)
	if err := os.Symlink(filepath.Join(victim, "job.json"), filepath.Join(store.JobDir(linkedReport), "job.json")); err != nil {
		t.Fatal(err)
	}

	for id := range ids {
		var re *job.RecordError
		if _, err := store.Load(id); !errors.As(err, &re) || re.ID != id {
			t.Errorf("Load(%s): %v, want a RecordError", id, err)
		}
	}
	for _, id := range []string{fifo, linkedReport} {
		var re *job.RecordError
		if _, err := store.Load(id); !errors.As(err, &re) {
			t.Errorf("Load(%s): %v, want a RecordError", id, err)
		}
	}
	if _, err := store.Load(linkedID); !errors.Is(err, job.ErrUnknownJob) {
		t.Errorf("Load of a link: %v, want ErrUnknownJob", err)
	}
	reports, bad, err := store.Checked()
	if err != nil || len(reports) != 1 || reports[0].JobID != good || len(bad) != 5 {
		t.Errorf("Checked: %d reports, %d bad, %v; want %s only and 5 bad", len(reports), len(bad), err, good)
	}
	if marked, err := Recover(store); err != nil || len(marked) != 0 {
		t.Errorf("Recover marked %v, %v; want nothing", marked, err)
	}
	for id := range ids {
		// Left alone: its owner record, its records and its report stay.
		if _, err := os.Stat(filepath.Join(store.JobDir(id), job.RecordsDir, "orders.csv")); err != nil {
			t.Errorf("%s: Recover acted on a folder whose report is not its own: %v", id, err)
		}
	}
	if err := store.Remove(linkedID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(store.JobDir(linkedID)); !os.IsNotExist(err) {
		t.Errorf("the link is still there: %v", err)
	}
	for _, id := range []string{"..", "../victim", "", "a/b"} {
		if err := store.Remove(id); !errors.Is(err, job.ErrUnknownJob) {
			t.Errorf("Remove(%q): %v, want ErrUnknownJob", id, err)
		}
	}
	if after := snapshot(t, victim); !maps.Equal(before, after) {
		t.Errorf("the folder outside the home changed:\nbefore %v\nafter  %v", before, after)
	}

	// A jobs folder that is a link is refused.
	linkedHome := filepath.Join(root, "linked-home")
	os.MkdirAll(linkedHome, 0o755)
	if err := os.Symlink(victim, filepath.Join(linkedHome, "jobs")); err != nil {
		t.Fatal(err)
	}
	if _, err := job.OpenStore(linkedHome); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("OpenStore of a home whose jobs folder is a link: %v", err)
	}
	if ids, err := job.ReadStore(linkedHome).IDs(); err == nil {
		t.Errorf("IDs through a linked jobs folder: %v", ids)
	}
}

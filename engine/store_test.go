package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"stratbench/supervisor"
)

// A job whose stratbench died without leaving a process-tree record (killed
// before the first sample, or after the tree was gone) is found by its owner
// record and marked failed; logs --follow does not wait for it.
func TestRecoverOwnerlessRunningJob(t *testing.T) {
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	self, err := supervisor.Self()
	if err != nil {
		t.Fatal(err)
	}
	for id, owner := range map[string]supervisor.Owner{
		"20260101-000000.000-dead": {PID: dead.Process.Pid, Start: 1},
		"20260101-000000.000-live": self,
	} {
		dir := store.JobDir(id)
		os.MkdirAll(dir, 0o755)
		if err := writeJSONAtomic(filepath.Join(dir, "job.json"), &Report{JobID: id, Status: StatusRunning, StartedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if err := writeJSONAtomic(filepath.Join(dir, ownerFile), owner); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "logs.jsonl"), nil, 0o644)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := store.Logs(ctx, "20260101-000000.000-dead", true, func(LogLine) error { return nil }); err != nil || ctx.Err() != nil {
		t.Fatalf("logs --follow of a job whose stratbench is gone: %v, waited: %v", err, ctx.Err())
	}

	ids, err := store.Recover()
	if err != nil || len(ids) != 1 || ids[0] != "20260101-000000.000-dead" {
		t.Fatalf("recovered %v, %v", ids, err)
	}
	rep, _ := store.Load("20260101-000000.000-dead")
	if rep.Status != StatusFailed || rep.Failure == nil || rep.Failure.Kind != KindCrash || rep.FinishedAt == nil {
		t.Fatalf("recovered job: %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(store.JobDir(rep.JobID), ownerFile)); !os.IsNotExist(err) {
		t.Fatal("owner record kept")
	}
	if live, _ := store.Load("20260101-000000.000-live"); live.Status != StatusRunning {
		t.Fatalf("a job of a live stratbench was touched: %s", live.Status)
	}
}

package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"stratbench/contract"
	"stratbench/supervisor"
)

// A job whose stratbench died without leaving a process-tree record (killed
// before the first sample, or after the tree was gone) is found by its owner
// record and marked failed; logs --follow does not wait for it. So is a job
// whose owner record a crash of the machine left empty (writeOwner does not
// wait for the disk).
func TestRecoverOwnerlessRunningJob(t *testing.T) {
	store, err := OpenStore(t.TempDir())
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
		dir := runningJob(t, store, &Report{JobID: id, Status: StatusRunning, StartedAt: time.Now()}, owner)
		os.WriteFile(filepath.Join(dir, "logs.jsonl"), nil, 0o644)
	}
	crashed := store.JobDir("20260101-000000.000-crash")
	os.MkdirAll(crashed, 0o755)
	if err := writeJSONAtomic(filepath.Join(crashed, "job.json"), &Report{JobID: "20260101-000000.000-crash", Status: StatusRunning, StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(crashed, ownerFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := store.Logs(ctx, "20260101-000000.000-dead", true, func(LogLine) error { return nil }); err != nil || ctx.Err() != nil {
		t.Fatalf("logs --follow of a job whose stratbench is gone: %v, waited: %v", err, ctx.Err())
	}

	ids, err := store.Recover()
	if err != nil || len(ids) != 2 || !slices.Contains(ids, "20260101-000000.000-dead") || !slices.Contains(ids, "20260101-000000.000-crash") {
		t.Fatalf("recovered %v, %v", ids, err)
	}
	for _, id := range ids {
		rep, _ := store.Load(id)
		if rep.Status != StatusFailed || rep.Failure == nil || rep.Failure.Kind != contract.KindCrash || rep.FinishedAt == nil {
			t.Fatalf("recovered job: %+v", rep)
		}
		if _, err := os.Stat(filepath.Join(store.JobDir(rep.JobID), ownerFile)); !os.IsNotExist(err) {
			t.Fatalf("%s: owner record kept", id)
		}
	}
	if live, _ := store.Load("20260101-000000.000-live"); live.Status != StatusRunning {
		t.Fatalf("a job of a live stratbench was touched: %s", live.Status)
	}
}

// TestRecoverKeepsTheParamsExactly: the report of a job whose stratbench
// was killed is written back with its params as they were, an int beyond
// 2**53 too (a float64 would round it), and Load gives them as written.
func TestRecoverKeepsTheParamsExactly(t *testing.T) {
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	id := "20260101-000000.000-dead"
	params := map[string]any{"seed": int64(1<<53 + 1), "fast": int64(3), "ratio": 0.25, "mode": "fast", "short": true}
	running := &Report{JobID: id, Status: StatusRunning, StartedAt: time.Now(), Strategy: StrategyInfo{Params: params}}
	dir := runningJob(t, store, running, deadOwner(t))
	if ids, err := store.Recover(); err != nil || !slices.Equal(ids, []string{id}) {
		t.Fatalf("recovered %v, %v", ids, err)
	}
	saved, err := os.ReadFile(filepath.Join(dir, "job.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Status   Status `json:"status"`
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
	if got.Status != StatusFailed || compact.String() != string(want) {
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
// stratbench died while running it is marked killed. Both get the records
// their run left.
func TestRecoverTellsUnsavedFromKilled(t *testing.T) {
	store, err := OpenStore(t.TempDir())
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
		os.MkdirAll(filepath.Join(dir, recordsDir), 0o755)
		os.WriteFile(filepath.Join(dir, recordsDir, "orders.csv"), []byte("record\n"), 0o644)
		if err := writeJSONAtomic(filepath.Join(dir, "job.json"), &Report{JobID: id, Status: StatusRunning, StartedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if err := writeJSONAtomic(filepath.Join(dir, marker), owner); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := store.Recover()
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
		if rep.Status != StatusFailed || rep.Failure == nil || !strings.Contains(rep.Failure.Message, want) {
			t.Errorf("%s: %s %+v, want a failure saying %q", id, rep.Status, rep.Failure, want)
		}
		if strings.HasSuffix(id, "full") && strings.Contains(rep.Failure.Message, "killed") {
			t.Errorf("%s is called killed: %s", id, rep.Failure.Message)
		}
		dir := store.JobDir(id)
		if _, err := os.Stat(filepath.Join(dir, "artifacts", "orders.csv")); err != nil {
			t.Errorf("%s: records not moved into artifacts: %v", id, err)
		}
		for _, f := range []string{ownerFile, unsavedFile, recordsDir} {
			if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
				t.Errorf("%s: %s left", id, f)
			}
		}
	}
}

// TestLoadRefusesMalformedMetrics: the report's metrics are typed, so a
// job.json whose metrics are not an object (moved here from the workbench's
// test of the metrics it shows) is an error naming the file, not a report
// without metrics.
func TestLoadRefusesMalformedMetrics(t *testing.T) {
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for id, metrics := range map[string]string{"20260101-000000.000-null": "null", "20260101-000000.000-list": "[1]"} {
		dir := store.JobDir(id)
		os.MkdirAll(dir, 0o755)
		doc := `{"job_id":"` + id + `","status":"passed","metrics":` + metrics + `}`
		if err := os.WriteFile(filepath.Join(dir, "job.json"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if rep, err := store.Load("20260101-000000.000-null"); err != nil || rep.Metrics != nil {
		t.Fatalf("metrics null: %+v, %v; want a report without metrics", rep, err)
	}
	if _, err := store.Load("20260101-000000.000-list"); err == nil || !strings.Contains(err.Error(), "job.json") {
		t.Fatalf("metrics [1]: %v; want an error naming job.json", err)
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
func runningJob(t *testing.T, store *Store, rep *Report, owner supervisor.ProcID) string {
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

package app

import (
	"bytes"
	"context"
	"strings"
	"syscall"
	"testing"

	"stratbench/internal/signals"
	"stratbench/sweep"
	"stratbench/sweep/local"
)

// TestStoppedSweepSaysHowToResume: a stopped sweep's summary ends with the
// command that resumes it; a finished one's does not.
func TestStoppedSweepSaysHowToResume(t *testing.T) {
	doc := &sweep.Document{SweepID: "sw-20260105-093000.123-1a2b", Status: sweep.StatusStopped, Spec: sweep.SpecDoc{Metric: "sharpe"},
		Counts: sweep.Counts{Total: 4, Done: 1, Passed: 1}, Best: &sweep.Best{Metric: "sharpe"},
		Runs: []sweep.Result{{Index: 0, Status: sweep.RunPassed, JobID: "j"}}}
	if text := sweepSummary(doc, nil); !strings.HasSuffix(text, "\nresume: stratbench sweep --resume sw-20260105-093000.123-1a2b\n") {
		t.Errorf("stopped:\n%s", text)
	}
	doc.Status = sweep.StatusPassed
	if text := sweepSummary(doc, nil); strings.Contains(text, "resume") {
		t.Errorf("passed:\n%s", text)
	}
	// As the sweep ran: headless (a script pasting it must not open the
	// view), its output, on Ray.
	for _, tc := range []struct {
		o    SweepOptions
		want string
	}{
		{SweepOptions{RunOptions: RunOptions{Output: "text"}}, "stratbench sweep --resume ID"},
		{SweepOptions{RunOptions: RunOptions{Output: "text"}, CI: true}, "stratbench sweep --resume ID --ci"},
		{SweepOptions{RunOptions: RunOptions{Output: "jsonl"}, CI: true}, "stratbench sweep --resume ID --ci --output jsonl"},
		{SweepOptions{RunOptions: RunOptions{Output: "json"}, CI: true, Executor: "ray", RayAddress: "http://head:8265", Jobs: 16},
			"stratbench sweep --resume ID --ci --output json --executor ray --ray-address http://head:8265 --jobs 16"},
		{SweepOptions{RunOptions: RunOptions{Output: "text"}, Executor: "ray", RayAddress: "http://a b", Jobs: 2, CI: true},
			"stratbench sweep --resume ID --ci --executor ray --ray-address 'http://a b' --jobs 2"},
		{SweepOptions{RunOptions: RunOptions{Output: "text"}, Executor: "local", Jobs: 2, CI: true}, "stratbench sweep --resume ID --ci"},
	} {
		if got := resumeCommand(&tc.o, "ID"); got != tc.want {
			t.Errorf("resumeCommand(%+v) = %q, want %q", tc.o, got, tc.want)
		}
	}
}

// TestSweepStoppedInItsSetupOpensNoView: a stop signal taken while the
// sweep was set up, after its folder was made, opens no view and starts no
// run: the sweep is saved as stopped (resumable), its results closed, its
// summary printed, and the exit is the signal's.
func TestSweepStoppedInItsSetupOpensNoView(t *testing.T) {
	store, err := sweep.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	doc := &sweep.Document{Status: sweep.StatusRunning, Spec: sweep.SpecDoc{Metric: "sharpe"}, Counts: sweep.Counts{Total: 4}}
	results, err := store.Create(doc)
	if err != nil {
		t.Fatal(err)
	}
	signals := signals.New(signalExit)
	signals.Take(syscall.SIGINT, func() {}, func() { t.Fatal("a first signal taken as a second") })
	var out bytes.Buffer
	o := SweepOptions{RunOptions: RunOptions{Streams: Streams{Stdout: &out, Stderr: &out}}}
	// sr has no session, data or plan: reaching the view or a run would
	// panic on them.
	err = runSweepView(context.Background(), o, &sweepRun{Sweep: &local.Sweep{Store: store, Doc: doc, Results: results}}, signals)
	if code, _ := ExitCode(err); code != 130 {
		t.Fatalf("exit %d (%v), want 130", code, err)
	}
	saved, err := store.Load(doc.SweepID)
	if err != nil || saved.Status != sweep.StatusStopped || saved.FinishedAt == nil {
		t.Fatalf("saved document %+v, %v: want it stopped", saved, err)
	}
	if running, err := store.Running(doc.SweepID); err != nil || running {
		t.Fatalf("the sweep's results are still open: %v, %v", running, err)
	}
	if !strings.Contains(out.String(), "resume: stratbench sweep --resume "+doc.SweepID) {
		t.Fatalf("summary:\n%s", out.String())
	}
}

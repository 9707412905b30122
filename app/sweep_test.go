package app

import (
	"bytes"
	"context"
	"strings"
	"syscall"
	"testing"

	"stratbench/internal/signals"
	"stratbench/present"
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
	// As it ran: with --ci (ranAs; present.ResumeCommand's test has the rest).
	o := SweepOptions{RunOptions: RunOptions{Output: "jsonl"}, CI: true, Executor: "local", Jobs: 2}
	if got := present.ResumeCommand("ID", ranAs(&o)); got != "stratbench sweep --resume ID --ci --output jsonl" {
		t.Errorf("ranAs(%+v): %q", o, got)
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
	err = runSweepView(context.Background(), o, &local.Sweep{Store: store, Doc: doc, Results: results}, nil, signals)
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

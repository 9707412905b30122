package local

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"stratbench/contract"
	"stratbench/job"
	"stratbench/sweep"
)

// fakeJob is a job that has ended: passed, failed of its own, or lost with
// its warm template.
type fakeJob struct {
	id    string
	lost  bool
	fails bool
	err   error // Wait's error beside its report (a start that failed)
	stops atomic.Int32
}

func (f *fakeJob) ID() string             { return f.id }
func (f *fakeJob) Dir() string            { return "/jobs/" + f.id }
func (f *fakeJob) Stop()                  { f.stops.Add(1) }
func (f *fakeJob) LostWithTemplate() bool { return f.lost }

func (f *fakeJob) Wait() (*job.Report, error) {
	rep := &job.Report{JobID: f.id, Status: job.StatusPassed, Strategy: job.StrategyInfo{SHA256: "sha"}}
	if f.lost || f.fails {
		rep.Status = job.StatusFailed
		rep.Failure = &contract.Failure{Kind: contract.KindCrash}
	}
	if f.stops.Load() > 0 {
		rep.Status, rep.Failure = job.StatusStopped, nil
	}
	if f.err != nil {
		rep.Status = job.StatusFailed
		rep.Failure = &contract.Failure{Kind: contract.KindCrash, Hook: contract.HookStartup, Message: "stratbench: " + f.err.Error()}
	}
	return rep, f.err
}

// TestStartedJobRunsALostJobAgain: a run whose job was lost with its warm
// template starts again as a new job, up to lostRetries times (the last
// loss is the result), never once the run is being stopped or killed (no
// result then), and a job that failed of its own is the run's result.
func TestStartedJobRunsALostJobAgain(t *testing.T) {
	for _, tc := range []struct {
		name     string
		jobs     []*fakeJob // the first job, then each restart's
		stop     int        // Stop the run before its job ends (1), or during the nth restart (n+1); 0: never
		kill     bool       // the run's ctx ended
		failNext bool       // the restart fails
		// want
		restarts int
		status   sweep.RunStatus // "" for no result
		errText  string
		lost     []string
		dropped  []string
	}{
		{name: "lost, then passed", jobs: []*fakeJob{{id: "a", lost: true}, {id: "b"}},
			restarts: 1, status: sweep.RunPassed, lost: []string{"a"}, dropped: []string{"/jobs/a"}},
		{name: "lost every time", jobs: []*fakeJob{{id: "a", lost: true}, {id: "b", lost: true}, {id: "c", lost: true}, {id: "d"}},
			restarts: lostRetries, status: sweep.RunFailed, lost: []string{"a", "b"}, dropped: []string{"/jobs/a", "/jobs/b"}},
		{name: "failed of its own", jobs: []*fakeJob{{id: "a", fails: true}, {id: "b"}},
			restarts: 0, status: sweep.RunFailed},
		{name: "lost while it stops", jobs: []*fakeJob{{id: "a", lost: true}, {id: "b"}}, stop: 1,
			restarts: 0, dropped: []string{"/jobs/a"}},
		{name: "lost while killed", jobs: []*fakeJob{{id: "a", lost: true}, {id: "b"}}, kill: true,
			restarts: 0, dropped: []string{"/jobs/a"}},
		{name: "stopped while it starts again", jobs: []*fakeJob{{id: "a", lost: true}, {id: "b"}}, stop: 2,
			restarts: 1, lost: []string{"a"}, dropped: []string{"/jobs/a"}},
		{name: "the restart fails", jobs: []*fakeJob{{id: "a", lost: true}}, failNext: true,
			restarts: 1, errText: "after job a was lost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			lost := &lostJobs{}
			s := &Run{ctx: ctx, sha256: "sha", lost: lost, job: tc.jobs[0]}
			restarts := 0
			s.restart = func() (runJob, error) {
				restarts++
				if tc.stop == restarts+1 {
					s.Stop()
				}
				if tc.failNext {
					return nil, errors.New("no room")
				}
				return tc.jobs[restarts], nil
			}
			if tc.stop == 1 {
				s.Stop()
			}
			if tc.kill {
				cancel()
			}
			res, err := s.Wait()
			switch {
			case tc.errText != "":
				if err == nil || !strings.Contains(err.Error(), tc.errText) {
					t.Errorf("Wait: %+v, %v; want an error with %q", res, err, tc.errText)
				}
			case tc.status == "":
				if !errors.Is(err, sweep.ErrRunStopped) {
					t.Errorf("Wait: %+v, %v; want no result (ErrRunStopped)", res, err)
				}
			case err != nil || res.Status != tc.status || res.JobID != tc.jobs[restarts].id:
				t.Errorf("Wait: %+v, %v; want %s from job %s", res, err, tc.status, tc.jobs[restarts].id)
			}
			if restarts != tc.restarts {
				t.Errorf("%d restarts, want %d", restarts, tc.restarts)
			}
			if !slices.Equal(lost.ids, tc.lost) {
				t.Errorf("lost jobs %v, want %v", lost.ids, tc.lost)
			}
			if got := s.Dropped(); !slices.Equal(got, tc.dropped) {
				t.Errorf("dropped %v, want %v", got, tc.dropped)
			}
			if tc.stop == 2 && tc.jobs[1].stops.Load() == 0 {
				t.Error("a Stop during the restart did not reach the new job")
			}
		})
	}
}

// TestStartedJobKilledAtItsStart: a run killed while its job's worker
// started (a sweep's second signal cuts a fork short) is no result: the
// job ends stopped (engine's TestCancelAtStartIsAStop), a resume runs it
// again, and the sweep exits 130. A start that failed otherwise is the
// error that ends the sweep.
func TestStartedJobKilledAtItsStart(t *testing.T) {
	startErr := errors.New("start worker: supervisor: fork: the template did not answer")
	for _, killed := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		job := &fakeJob{id: "a", err: startErr}
		if killed {
			cancel()
			job = &fakeJob{id: "a"}
			job.stops.Add(1) // as the engine reports it: stopped, no error
		}
		s := &Run{ctx: ctx, sha256: "sha", job: job}
		res, err := s.Wait()
		cancel()
		switch {
		case killed && !errors.Is(err, sweep.ErrRunStopped):
			t.Errorf("killed: Wait %+v, %v; want no result (ErrRunStopped)", res, err)
		case !killed && !errors.Is(err, startErr):
			t.Errorf("not killed: Wait %+v, %v; want the start's error", res, err)
		}
	}
}

// TestLostNotice: the sweep's notice names the lost jobs, a few of them.
func TestLostNotice(t *testing.T) {
	l := &lostJobs{}
	if got := l.notice(); got != "" {
		t.Errorf("no lost job: notice %q", got)
	}
	l.add("j1")
	if got := l.notice(); !strings.HasPrefix(got, "job j1 was lost with its warm template") {
		t.Errorf("one: notice %q", got)
	}
	for _, id := range []string{"j2", "j3", "j4", "j5", "j6", "j7"} {
		l.add(id)
	}
	if got := l.notice(); !strings.HasPrefix(got, "7 jobs were lost") || !strings.HasSuffix(got, "j1, j2, j3, j4, j5 and 2 more") {
		t.Errorf("seven: notice %q", got)
	}
	if got := (*lostJobs)(nil).notice(); got != "" {
		t.Errorf("nil: notice %q", got)
	}
}

// TestColdNoticeIsOneCleanLine: the cold notice may quote a template's
// output; it reaches the terminal as one line without escape sequences.
func TestColdNoticeIsOneCleanLine(t *testing.T) {
	got := coldNotice("the template did not start (its last output: \x1b[2J\x1b]0;owned\x07boom\nnext)")
	if strings.ContainsAny(got, "\x1b\x07\n") || !strings.Contains(got, "boom") || !strings.HasPrefix(got, "this sweep's runs started cold") {
		t.Errorf("coldNotice = %q", got)
	}
}

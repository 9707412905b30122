package session

import (
	"context"
	"path/filepath"

	"stratbench/engine"
	"stratbench/internal/signals"
	"stratbench/job"
	"stratbench/watch"
)

// RunOnce runs one job under the signal policy (the first signal stops
// it: on_finish runs, the job is saved as stopped; a second kills it) and
// returns its report. follow reads the job's events until they end (the
// progress line). The error is the job's: a *engine.UsageError when it
// could not run, or why its folder could not be written in full (the
// report is returned all the same).
func (s *Session) RunOnce(ctx context.Context, policy *signals.Policy, follow func(<-chan job.Event)) (*job.Report, error) {
	ctx, kill := context.WithCancel(ctx)
	defer kill()
	j, err := s.Start(ctx)
	if err != nil {
		return nil, err
	}
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		follow(j.Events())
	}()
	for waiting := true; waiting; {
		select {
		case <-j.Done():
			waiting = false
		case sg := <-policy.C():
			policy.Take(sg, j.Stop, kill)
		}
	}
	rep, err := j.Wait()
	<-followed
	return rep, err
}

// WatchOutput is what Watch says, as it happens.
type WatchOutput struct {
	Waiting func(name string)      // the strategy file is missing: waiting for it
	Warning func(error)            // the watcher's warning
	Error   func(error)            // a run could not start, or its job not be saved in full
	Report  func(*job.Report)      // a run's report, as it ended
	Follow  func(<-chan job.Event) // reads a run's events until they end
}

// Watch runs a job for every change of the strategy file (changes), and
// tells each run's report, until a signal or the end of changes. A change
// during a run stops it first (on_finish runs) and tells its report. A
// signal stops the run in flight the same way and ends the watch; a
// second kills that run at once.
func (s *Session) Watch(ctx context.Context, changes <-chan watch.Change, policy *signals.Policy, out WatchOutput) {
	var (
		current *engine.Job
		kill    context.CancelFunc // kills current at once
		reports = make(chan *job.Report, 1)
	)
	// finish waits for the run in flight to end, after asking it to stop,
	// and tells its report. A first signal meanwhile lets it stop and
	// ends the watch after; a second one kills it.
	finish := func() {
		if current == nil {
			return
		}
		current.Stop()
		for {
			select {
			case rep := <-reports:
				kill()
				current = nil
				out.Report(rep)
				return
			case sg := <-policy.C():
				policy.Take(sg, func() {}, kill) // the run is stopping already
			}
		}
	}
	for {
		select {
		case sg := <-policy.C():
			// The first signal: the run in flight stops (a second,
			// meanwhile, kills it) and the watch ends.
			policy.Take(sg, func() {}, func() {})
			finish()
			return
		case rep := <-reports:
			kill()
			current = nil
			out.Report(rep)
		case ch, ok := <-changes:
			if !ok {
				finish()
				return
			}
			switch ch.Kind {
			case watch.Missing:
				out.Waiting(filepath.Base(s.cfg.Strategy))
				continue
			case watch.Warning:
				out.Warning(ch.Err)
				continue
			}
			finish()
			if policy.Stopped() {
				return
			}
			jobCtx, cancel := context.WithCancel(ctx)
			j, err := s.Start(jobCtx)
			if err != nil {
				cancel()
				out.Error(err)
				continue
			}
			current, kill = j, cancel
			events := j.Events()
			go func() {
				out.Follow(events)
				rep, err := j.Wait()
				if err != nil {
					out.Error(err)
				}
				reports <- rep
			}()
		}
	}
}

package app

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"

	"stratbench/engine"
	"stratbench/themes"
	"stratbench/ui"
	"stratbench/watch"
)

// Workbench runs the workbench on the terminal: a run of the strategy at
// start and on every save, until the user quits (nil) or a signal stops it
// (128 + n, once the run in flight stopped and its job is saved).
func Workbench(ctx context.Context, o RunOptions) error {
	if err := checkOutput(o.Output, "text", "json"); err != nil {
		return err
	}
	if o.OutputSet || o.Watch {
		return usage(errors.New("--output and --watch go with --ci"))
	}
	if o.Theme != "" && o.Theme != "auto" {
		if _, err := themes.Named(o.Theme); err != nil {
			return usage(err)
		}
	}
	strategy, workspace, err := resolveStrategy(o.Strategy)
	if err != nil {
		return usage(err)
	}
	s, err := newSession(ctx, o, strategy)
	if err != nil {
		return err
	}
	defer s.close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := watch.New(strategy, watch.Options{Poll: o.Poll})
	if err != nil {
		return usage(err)
	}
	go w.Run(ctx)

	// The signal policy, as the workbench takes it: the first signal stops
	// the run in flight and quits once it has ended (as q does), a second
	// quits at once (as a second q does; the run is killed).
	signals := listenSignals()
	defer signals.close()
	interrupts := make(chan ui.Interrupt, 2)
	go func() {
		for {
			select {
			case sg := <-signals.C():
				signals.take(sg, func() { send(interrupts, ui.InterruptStop) }, func() { send(interrupts, ui.InterruptKill) })
			case <-ctx.Done():
				return
			}
		}
	}()

	var jobs startedJobs
	err = ui.Run(ctx, ui.Options{
		Strategy:  strategy,
		Workspace: workspace,
		Theme:     o.Theme,
		Sandbox:   s.sandbox,
		Start: func(ctx context.Context) (ui.RunHandle, error) {
			job, err := s.start(ctx)
			if err != nil {
				return nil, err
			}
			jobs.add(job)
			return job, nil
		},
		Changes:    w.Changes(),
		Store:      s.store,
		Editor:     os.Getenv("EDITOR"),
		Opener:     opener(),
		Interrupts: interrupts,
	})
	// Every job's final report is on disk before stratbench exits.
	jobs.wait()
	if err != nil {
		return err
	}
	return signals.exit()
}

// startedJobs are the workbench's unfinished jobs, waited for before
// stratbench exits.
type startedJobs struct {
	mu   sync.Mutex
	jobs []*engine.Job
}

func (s *startedJobs) add(j *engine.Job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	live := s.jobs[:0]
	for _, old := range s.jobs {
		select {
		case <-old.Done():
		default:
			live = append(live, old)
		}
	}
	s.jobs = append(live, j)
}

func (s *startedJobs) wait() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.jobs {
		<-j.Done()
	}
}

// send delivers i unless the workbench no longer reads: it has quit.
func send(ch chan<- ui.Interrupt, i ui.Interrupt) {
	select {
	case ch <- i:
	default:
	}
}

// opener is the command that opens an artifact: $STRATBENCH_OPEN, else
// xdg-open when it is installed, else none.
func opener() string {
	if o := os.Getenv("STRATBENCH_OPEN"); o != "" {
		return o
	}
	if path, err := exec.LookPath("xdg-open"); err == nil {
		return path
	}
	return ""
}

package app

import (
	"context"
	"errors"
	"fmt"
	"os"

	"stratbench/engine"
	"stratbench/job"
	"stratbench/session"
	"stratbench/ui/components"
	"stratbench/ui/workbench"
)

// Workbench runs the workbench on the terminal: a run of the strategy at
// start and on every save, until the user quits (nil) or a signal stops it
// (128 + n, once the run in flight stopped and its job is saved).
func Workbench(ctx context.Context, o RunOptions) error {
	if err := checkOutput(o.Output, "text", "json"); err != nil {
		return err
	}
	if o.OutputSet || o.Watch || o.Report != "" {
		return usage(errors.New("--output, --watch and --report go with --ci"))
	}
	if err := checkTheme(o.Theme); err != nil {
		return err
	}
	example := false
	if o.Strategy == "" && components.HasTerminal() && components.IsTerminal(os.Stdin) {
		// First launch in an empty folder: offer the example here, where
		// the user will look for it, rather than in the state folder.
		if path, err := session.OfferExample(".", os.Stdin, o.Stderr); err != nil {
			return err
		} else if path != "" {
			o.Strategy, example = path, true
		}
	}
	strategy, workspace, err := resolveStrategy(o.Strategy, o.Suggest)
	if err != nil {
		return usage(err)
	}
	if !components.HasTerminal() {
		return usage(fmt.Errorf("the workbench needs a terminal, and there is none here: run it headless with --ci (stratbench --ci %s)", strategy))
	}
	if _, err := os.Stat(strategy); err != nil {
		// A mistyped STRATEGY: say so, offer the nearest .py file, and
		// wait for the file only when asked to.
		interactive := components.IsTerminal(os.Stdin)
		if strategy, err = session.AskMissing(strategy, err, interactive, os.Stdin, o.Stderr); err != nil {
			return usage(err)
		}
	}
	// A signal before the workbench opens ends it there (128 + n, no job).
	s, signals, err := openSession(ctx, o, strategy, true)
	if err != nil {
		return err
	}
	defer signals.Close()
	defer s.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changes, err := s.WatchStrategy(ctx, o.watchOptions())
	if err != nil {
		return usage(err)
	}

	// The signal policy, as the workbench takes it: the first signal stops
	// the run in flight and quits once it has ended (as q does), a second
	// quits at once (as a second q does; the run is killed).
	interrupts, stop, kill := components.NewInterrupts()
	defer signals.Serve(stop, kill)()

	err = workbench.Run(ctx, workbench.Options{
		Strategy:  strategy,
		Workspace: workspace,
		Example:   example,
		Theme:     o.Theme,
		Sandbox:   s.Sandbox(),
		Start: func(ctx context.Context, breaks []job.Breakpoint) (workbench.RunHandle, error) {
			job, err := s.StartWith(ctx, &engine.Debug{Breakpoints: breaks})
			if err != nil {
				return nil, err
			}
			return job, nil
		},
		Changes: changes,
		Store:   s.Store(),
		Editor:  workbench.EditorSetting(os.Getenv),
		Opener:  components.Opener(),
		Report: func(ctx context.Context, id string) (string, error) {
			return writeJobReport(ctx, s.Store(), id, "")
		},
		Interrupts: interrupts,
	})
	// Every job's final report is on disk before stratbench exits.
	s.Wait()
	if err != nil {
		return err
	}
	return signals.Exit()
}

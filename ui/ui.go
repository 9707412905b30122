package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"stratbench/themes"
)

// fps caps rendering: plenty for a dashboard that changes a few times a
// second, and half the idle cost of the default 60.
const fps = 30

// InterruptedError is returned by Run when SIGINT, SIGTERM or SIGHUP ended the
// workbench, after the run in flight had stopped (on_finish ran) and its job
// was saved.
type InterruptedError struct {
	Signal os.Signal
}

func (e *InterruptedError) Error() string { return "interrupted by " + e.Signal.String() }

// Run runs the workbench on the terminal until the user quits, and returns
// nil then. It starts a run when the watcher first reports the strategy (at
// once when Options.Changes is nil) and a new one on every change.
//
// SIGINT, SIGTERM and SIGHUP (the terminal closed), and the end of ctx, stop the run in flight and quit
// once it has ended, so that on_finish runs and the job is saved; Run then
// returns an *InterruptedError, or ctx's error. A second signal, like a
// second q, quits at once.
func Run(ctx context.Context, opts Options) error {
	if opts.Start == nil {
		return errors.New("ui: Options.Start is required")
	}
	th, auto, err := pickTheme(opts.Theme, themes.NoColor())
	if err != nil {
		return fmt.Errorf("ui: %w", err)
	}
	progOpts := []tea.ProgramOption{tea.WithFPS(fps), tea.WithoutSignalHandler()}
	if themes.NoColor() {
		progOpts = append(progOpts, tea.WithColorProfile(colorprofile.Ascii))
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)
	// Runs get a context that outlives ctx: a signal stops the run in
	// flight through Stop, so that on_finish runs and the job is saved.
	// Cancelling runCtx, when Run returns, kills whatever is still running
	// (the user quit twice).
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	return runProgram(ctx, signals, newModel(runCtx, opts, th, auto), progOpts...)
}

// pickTheme resolves the theme option: NO_COLOR wins, "" and "auto" follow
// the terminal background (dark until it is known).
func pickTheme(name string, noColor bool) (th themes.Theme, auto bool, err error) {
	switch {
	case noColor:
		return themes.Plain(), false, nil
	case name == "" || name == "auto":
		th, err = themes.Named(themes.Names()[0])
		return th, true, err
	}
	th, err = themes.Named(name)
	return th, false, err
}

// runProgram runs m as a Bubble Tea program. Signals and the end of ctx are
// turned into shutdown messages rather than a kill, so that on_finish runs
// and the job is saved.
func runProgram(ctx context.Context, signals <-chan os.Signal, m *model, opts ...tea.ProgramOption) error {
	p := tea.NewProgram(m, opts...)
	stop := context.AfterFunc(ctx, func() { p.Send(shutdownMsg{}) })
	defer stop()

	var (
		mu       sync.Mutex
		received os.Signal
		wg       sync.WaitGroup
	)
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case s := <-signals:
				mu.Lock()
				if received == nil {
					received = s
				}
				mu.Unlock()
				p.Send(shutdownMsg{})
			case <-done:
				return
			}
		}
	}()
	final, err := p.Run()
	close(done)
	wg.Wait()
	// A forced quit leaves the run in flight; it is asked to stop all the same.
	if fm, ok := final.(*model); ok && fm.run != nil {
		fm.run.Stop()
	}
	switch {
	case err != nil:
		return fmt.Errorf("ui: %w", err)
	case received != nil:
		return &InterruptedError{Signal: received}
	}
	return ctx.Err()
}

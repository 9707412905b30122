package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"stratbench/themes"
)

// fps caps rendering: plenty for a dashboard that changes a few times a
// second, and half the idle cost of the default 60.
const fps = 30

// Run runs the workbench on the terminal until the user quits, or an
// interrupt (Options.Interrupts) makes it quit, and returns nil then. It
// starts a run when the watcher first reports the strategy (at once when
// Options.Changes is nil) and a new one on every change.
//
// The end of ctx stops the run in flight and quits once it has ended, so
// that on_finish runs and the job is saved; Run then returns ctx's error.
// The workbench handles no signal itself: the caller turns them into
// Interrupts.
func Run(ctx context.Context, opts Options) error {
	if opts.Start == nil {
		return errors.New("ui: Options.Start is required")
	}
	// The terminal's real colour profile: the themes pick their colours
	// for it, and Bubble Tea downsamples to it.
	profile := themes.Profile(os.Stdout, os.Environ())
	th, auto, err := pickTheme(opts.Theme, themes.NoColor(), profile)
	if err != nil {
		return fmt.Errorf("ui: %w", err)
	}
	progOpts := []tea.ProgramOption{tea.WithFPS(fps), tea.WithoutSignalHandler(), tea.WithColorProfile(profile)}
	// Runs get a context that outlives ctx: the end of ctx stops the run
	// in flight through Stop, so that on_finish runs and the job is saved.
	// Cancelling runCtx, when Run returns, kills whatever is still running
	// (the user quit twice).
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	m := newModel(runCtx, opts, th, auto)
	m.profile = profile
	return runProgram(ctx, opts.Interrupts, m, progOpts...)
}

// pickTheme resolves the theme option: NO_COLOR wins, "" and "auto" follow
// the terminal background (dark until it is known).
func pickTheme(name string, noColor bool, profile colorprofile.Profile) (th themes.Theme, auto bool, err error) {
	switch {
	case noColor:
		return themes.Plain(), false, nil
	case name == "" || name == "auto":
		th, err = themes.NamedFor(themes.Names()[0], profile)
		return th, true, err
	}
	th, err = themes.NamedFor(name, profile)
	return th, false, err
}

// runProgram runs m as a Bubble Tea program. Interrupts and the end of ctx
// are turned into shutdown messages rather than a kill, so that on_finish
// runs and the job is saved.
func runProgram(ctx context.Context, interrupts <-chan Interrupt, m *model, opts ...tea.ProgramOption) error {
	p := tea.NewProgram(m, opts...)
	stop := context.AfterFunc(ctx, func() { p.Send(shutdownMsg{}) })
	defer stop()

	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case i := <-interrupts:
				p.Send(shutdownMsg{now: i == InterruptKill})
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
	if err != nil {
		return fmt.Errorf("ui: %w", err)
	}
	return ctx.Err()
}

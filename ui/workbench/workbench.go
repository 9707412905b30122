package workbench

import (
	"context"
	"errors"
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"

	"stratbench/themes"
	"stratbench/ui/components"
)

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
	th, auto, err := components.PickTheme(opts.Theme, themes.NoColor(), profile)
	if err != nil {
		return fmt.Errorf("ui: %w", err)
	}
	// Runs get a context that outlives ctx: the end of ctx stops the run
	// in flight through Stop, so that on_finish runs and the job is saved.
	// Cancelling runCtx, when Run returns, kills whatever is still running
	// (the user quit twice).
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	m := newModel(runCtx, opts, th, auto)
	m.profile = profile
	return runProgram(ctx, opts.Interrupts, m, components.ProgramOptions(profile)...)
}

// runProgram runs m as a Bubble Tea program (components.RunProgram), and
// asks the run in flight to stop when the program quit without waiting for
// it.
func runProgram(ctx context.Context, interrupts <-chan components.Interrupt, m *model, opts ...tea.ProgramOption) error {
	final, err := components.RunProgram(ctx, interrupts, m.handover, m, opts...)
	// A forced quit leaves the run in flight; it is asked to stop all the same.
	if fm, ok := final.(*model); ok && fm.run != nil {
		fm.run.Stop()
	}
	if err != nil {
		return err
	}
	return ctx.Err()
}

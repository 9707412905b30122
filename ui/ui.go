package ui

import (
	"context"
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"stratbench/themes"
)

// fps caps rendering: plenty for a dashboard that changes a few times a
// second, and half the idle cost of the default 60.
const fps = 25

// Run runs the workbench on the terminal until the user quits. It starts a
// run at once when the strategy exists and a new one on every change the
// watcher reports. When ctx is done (SIGINT, SIGTERM) it stops the run in
// flight, lets on_finish run, and returns ctx's error; when the user quits
// it returns nil.
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
	// Runs get a context that outlives ctx: a signal stops the run in
	// flight through Stop, so that on_finish runs and the job is saved.
	// Cancelling runCtx, when Run returns, kills whatever is still running
	// (the user quit twice).
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	if err := runProgram(ctx, newModel(runCtx, opts, th, auto), progOpts...); err != nil {
		return err
	}
	return ctx.Err()
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

// runProgram runs m as a Bubble Tea program. The end of ctx is turned into
// a graceful shutdown message rather than a kill, so that on_finish runs and
// the job is saved.
func runProgram(ctx context.Context, m *model, opts ...tea.ProgramOption) error {
	p := tea.NewProgram(m, opts...)
	stop := context.AfterFunc(ctx, func() { p.Send(shutdownMsg{}) })
	defer stop()
	final, err := p.Run()
	// A forced quit leaves the run in flight; it is asked to stop all the same.
	if fm, ok := final.(*model); ok && fm.run != nil {
		fm.run.Stop()
	}
	if err != nil {
		return fmt.Errorf("ui: %w", err)
	}
	return nil
}

package components

import (
	"context"
	"fmt"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"stratbench/themes"
)

// FPS caps rendering: plenty for a dashboard that changes a few times a
// second, and half the idle cost of the default 60.
const FPS = 30

// TickInterval is how often a clock on screen (elapsed, ETA) is redrawn.
const TickInterval = 500 * time.Millisecond

// The smallest screen the programs lay out; below it they say the terminal
// is too small.
const (
	MinWidth  = 30
	MinHeight = 8
)

// Interrupt is a stop request from outside a program: the caller's signal
// policy (app's: the first signal stops, a second kills).
type Interrupt int

const (
	// InterruptStop stops what is in flight (a run, a sweep) and quits
	// once it has ended, as q does.
	InterruptStop Interrupt = iota + 1
	// InterruptKill quits at once, as a second q does; the caller kills
	// what is still in flight by cancelling its context.
	InterruptKill
)

// ShutdownMsg asks a program to stop what is in flight and quit, from
// outside (an Interrupt, or the end of the context it runs under); Now
// quits at once, without waiting.
type ShutdownMsg struct{ Now bool }

// PickTheme resolves a theme option: NO_COLOR wins, "" and "auto" follow
// the terminal background (dark until it is known).
func PickTheme(name string, noColor bool, profile colorprofile.Profile) (th themes.Theme, auto bool, err error) {
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

// ProgramOptions are the options every program runs with on the terminal
// of profile: the FPS cap, no signal handler of Bubble Tea's own (the
// caller's policy sends Interrupts), colours downsampled to profile.
func ProgramOptions(profile colorprofile.Profile) []tea.ProgramOption {
	return []tea.ProgramOption{tea.WithFPS(FPS), tea.WithoutSignalHandler(), tea.WithColorProfile(profile)}
}

// RunProgram runs m as a Bubble Tea program and returns its final model.
// Interrupts and the end of ctx reach m as a ShutdownMsg rather than a
// kill, so that what is in flight can stop cleanly (on_finish runs, the
// job is saved); each first stops handover (nil: m hands the terminal to
// no program), so that a program m handed the terminal to does not keep
// the ShutdownMsg waiting.
func RunProgram(ctx context.Context, interrupts <-chan Interrupt, handover *Handover, m tea.Model, opts ...tea.ProgramOption) (tea.Model, error) {
	p := tea.NewProgram(m, opts...)
	stopHandover := func() {
		if handover != nil {
			handover.Stop()
		}
	}
	stop := context.AfterFunc(ctx, func() {
		stopHandover()
		p.Send(ShutdownMsg{})
	})
	defer stop()

	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case i := <-interrupts:
				stopHandover()
				p.Send(ShutdownMsg{Now: i == InterruptKill})
			case <-done:
				return
			}
		}
	}()
	final, err := p.Run()
	close(done)
	wg.Wait()
	if err != nil {
		return final, fmt.Errorf("ui: %w", err)
	}
	return final, nil
}

// NewInterrupts returns the channel a program reads its Interrupts from
// and the two functions that send one (stop, kill) for the caller's signal
// policy: each sends unless the program no longer reads (it has quit).
func NewInterrupts() (ch chan Interrupt, stop, kill func()) {
	ch = make(chan Interrupt, 2)
	send := func(i Interrupt) {
		select {
		case ch <- i:
		default:
		}
	}
	return ch, func() { send(InterruptStop) }, func() { send(InterruptKill) }
}

package workbench

import (
	"context"
	"slices"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"stratbench/themes"
	"stratbench/ui/components"
)

// Inspector shows one stored job in the workbench's panes, read-only: how
// the sweep view opens a sweep's run. Nothing in it starts, stops or edits
// a run; esc leaves it.
type Inspector struct {
	m *model
}

// Leave is what the program that opened an inspector does after a message.
type Leave int

const (
	// Stay keeps the inspector on screen.
	Stay Leave = iota
	// Back closes the inspector (esc): the program shows itself again.
	Back
	// Quit closes the inspector and quits (q).
	Quit
	// Failed closes the inspector: the job could not be loaded
	// (Inspector.Failure says why).
	Failed
)

// InspectorOptions configure an Inspector.
type InspectorOptions struct {
	// Strategy is the path of the strategy the jobs ran.
	Strategy string
	// Store holds the jobs.
	Store JobStore
	// Theme is the theme the inspector draws in.
	Theme themes.Theme
	// Opener opens an artifact file, as Options.Opener.
	Opener string
	// Report writes a job's HTML report for o, as Options.Report.
	Report func(ctx context.Context, jobID string) (path string, err error)
	// Handover runs the openers: the program's that shows the inspector
	// (components.RunProgram stops it on a stop request).
	Handover *components.Handover
	// Empty is what the jobs pane says instead of "no jobs yet": the
	// program that opens the inspector lists the jobs.
	Empty string
}

// NewInspector returns an inspector on a w×h screen.
func NewInspector(ctx context.Context, o InspectorOptions, w, h int) *Inspector {
	m := newModel(ctx, Options{Strategy: o.Strategy, Store: o.Store, Theme: o.Theme.Name, Opener: o.Opener, Report: o.Report}, o.Theme, false)
	m.keys.Rerun.SetEnabled(false)
	m.keys.Stop.SetEnabled(false)
	m.keys.Edit.SetEnabled(false)
	m.keys.Breakpoint.SetEnabled(false)
	m.keys.ClearBreaks.SetEnabled(false)
	m.fromSweep = true
	m.jobs.empty = o.Empty
	if o.Handover != nil {
		m.handover = o.Handover
	}
	m.resize(w, h)
	m.setFocus(paneResults)
	return &Inspector{m: m}
}

// Open loads job id; the returned command reads it off the event loop.
func (i *Inspector) Open(id string) tea.Cmd { return i.m.openJob(id) }

// Update handles a message while the inspector is shown (a key, the job's
// load, the artifacts' listing, the mouse) and says whether it stays.
func (i *Inspector) Update(msg tea.Msg) (tea.Cmd, Leave) {
	m := i.m
	if msg, ok := msg.(tea.KeyPressMsg); ok {
		return i.key(msg)
	}
	_, cmd := m.Update(msg)
	if _, ok := msg.(jobLoadedMsg); ok && m.inspected == nil {
		return nil, Failed
	}
	return cmd, Stay
}

// Failure is why the job could not be loaded, once Update said Failed.
func (i *Inspector) Failure() string { return i.m.flash.text }

// key handles a key: q quits, esc closes an overlay (help, artifacts) or
// else goes back, the rest goes to the job's panes (a search in the logs
// takes esc and q as text).
func (i *Inspector) key(msg tea.KeyPressMsg) (tea.Cmd, Leave) {
	m := i.m
	km := m.keys
	searching := m.focus == paneLogs && m.view().logs.searchActive()
	overlay := m.showHelp || m.artifacts.state != artifactsClosed
	switch {
	case key.Matches(msg, km.Quit) && !searching:
		m.closeStored()
		return nil, Quit
	case key.Matches(msg, km.Back) && !searching && !overlay:
		m.closeStored()
		return nil, Back
	case slices.Contains([]string{"r", "s", "e", "b", "B"}, msg.String()):
		return nil, Stay // a stored job is not re-run, stopped, edited or given breakpoints from here (those keys are disabled)
	}
	return m.handleKey(msg), Stay
}

// View draws the job's panes.
func (i *Inspector) View() string { return i.m.render() }

package workbench

import (
	"context"
	"slices"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"stratbench/themes"
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

// NewInspector returns an inspector of the jobs in store, for runs of the
// strategy at path, in theme th, on a w×h screen. Its jobs pane says
// empty instead of "no jobs yet" (the opening program lists the jobs).
func NewInspector(ctx context.Context, strategy string, store JobStore, th themes.Theme, empty string, w, h int) *Inspector {
	m := newModel(ctx, Options{Strategy: strategy, Store: store, Theme: th.Name}, th, false)
	m.keys.Rerun.SetEnabled(false)
	m.keys.Stop.SetEnabled(false)
	m.keys.Edit.SetEnabled(false)
	m.fromSweep = true
	m.jobs.empty = empty
	m.resize(w, h)
	m.setFocus(paneResults)
	return &Inspector{m: m}
}

// Open loads job id; the returned command reads it off the event loop.
func (i *Inspector) Open(id string) tea.Cmd { return i.m.openJob(id) }

// Update handles a message while the inspector is shown and says whether
// it stays.
func (i *Inspector) Update(msg tea.Msg) (tea.Cmd, Leave) {
	m := i.m
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case tea.KeyPressMsg:
		return i.key(msg)
	case jobLoadedMsg:
		m.jobLoaded(msg)
		if m.inspected == nil {
			return nil, Failed
		}
	}
	return nil, Stay
}

// Failure is why the job could not be loaded, once Update said Failed.
func (i *Inspector) Failure() string { return i.m.flash.text }

// key handles a key: esc goes back, q quits, the rest goes to the job's
// panes (a search in the logs takes esc and q as text).
func (i *Inspector) key(msg tea.KeyPressMsg) (tea.Cmd, Leave) {
	m := i.m
	km := m.keys
	searching := m.focus == paneLogs && m.view().logs.searchActive()
	switch {
	case key.Matches(msg, km.Back) && !searching:
		m.closeStored()
		return nil, Back
	case key.Matches(msg, km.Quit) && !searching:
		m.closeStored()
		return nil, Quit
	case slices.Contains([]string{"r", "s", "e"}, msg.String()):
		return nil, Stay // a stored job is not re-run, stopped or edited from here (those keys are disabled)
	}
	return m.handleKey(msg), Stay
}

// View draws the job's panes.
func (i *Inspector) View() string { return i.m.render() }

package workbench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"stratbench/internal/words"
	"stratbench/themes"
	"stratbench/ui/components"
	"stratbench/watch"
)

// model is the root of the workbench. It owns the run lifecycle and routes
// messages: job events to the live job view, keys to the focused pane.
type model struct {
	ctx       context.Context
	opts      Options
	keys      keyMap
	help      help.Model
	now       func() time.Time
	ringLines int

	theme     themes.Theme
	profile   colorprofile.Profile // the terminal's colours, which the themes are picked for
	themeAuto bool                 // follow the terminal's background
	noColor   bool                 // NO_COLOR: the plain theme, always

	width, height int
	layout        layout

	live       *jobView // the current (or last) run
	inspected  *jobView // a stored job opened from the jobs list, or nil
	fromSweep  bool     // the model shows a sweep's run, opened from the sweep view: esc goes back there
	loading    string   // id of the stored job being loaded
	cancelLoad context.CancelFunc
	jobs       *jobsPane
	focus      paneID
	slot       paneID // paneFailure or paneResults: the one the shared slot shows
	showHelp   bool
	artifacts  artifactsOverlay     // the job's artifacts, over the panes when open
	reporting  string               // id of the job whose report o is writing, or ""
	handover   *components.Handover // runs the openers; a stop request ends them
	source     sourceView           // a file of the strategy, over the panes when open (v)
	breaks     *breakpoints         // where the next runs stop (b, B)
	prompt     breakPrompt          // the footer's prompt for a new breakpoint's condition

	// The run lifecycle: where it is, and what follows once no run is in
	// flight (soft-serve's session state, instead of booleans).
	state    runState
	then     afterRun
	run      RunHandle          // the run in flight (runRunning, runStopping), or nil
	killRun  context.CancelFunc // cancels the run in flight's context: kills it
	gen      int                // number of the latest start request; older events are dropped
	startErr error              // why the last start failed
	nextRead time.Time          // the next batch of events is read no sooner
	ticking  bool               // a clock tick is scheduled

	fileMissing bool         // the watcher reports the strategy file missing
	watchWarn   string       // the watcher's last warning
	watched     watch.Change // the watcher's last state: what it watches
	cause       string       // the file whose change started the last run, when not the strategy

	flash flash
}

// flash is a message in the footer, cleared by the next key, and by the
// start of the next run: a message about one moment (no editor set, an
// opener that failed) must not stay through the runs the saves start.
type flash struct {
	text  string
	level themes.Level
	// keepRuns is how many run starts it survives: the welcome stays
	// through the first run, which starts as the workbench opens.
	keepRuns int
}

// Tuning of the event flow: batches are read at most every batchInterval and
// hold at most maxBatchEvents events, so a log flood costs a bounded number
// of renders per second whatever its rate.
const (
	batchInterval  = 40 * time.Millisecond
	maxBatchEvents = 1024
)

// newModel builds the root model. th is the starting theme; auto makes it
// follow the terminal background.
func newModel(ctx context.Context, opts Options, th themes.Theme, auto bool) *model {
	m := &model{
		ctx:       ctx,
		opts:      opts,
		keys:      newKeyMap(),
		help:      help.New(),
		now:       time.Now,
		ringLines: defaultRingLines,
		theme:     th,
		profile:   colorprofile.TrueColor,
		themeAuto: auto,
		noColor:   th.Name == "plain",
		jobs:      newJobsPane(),
		focus:     paneLogs,
		slot:      paneResults,
		breaks:    &breakpoints{},
		handover:  components.NewHandover(),
	}
	m.live = newJobView(m.ringLines, m.breaks)
	if _, err := os.Stat(opts.Strategy); err != nil {
		m.fileMissing = true
	}
	m.welcome()
	return m
}

// welcome says plainly what to do when the workbench runs the bundled
// example (no strategy was given and none is here, or the example was
// just written here). The footer keeps it until the first key or the
// first save.
func (m *model) welcome() {
	if m.opts.Workspace == "" && !m.opts.Example {
		return
	}
	m.flash = flash{"this is the bundled example: edit " + homeShort(m.opts.Strategy) +
		" in your editor and save to re-run — or press e to open it", themes.LevelOK, 1}
	if m.width > 0 {
		m.resize(m.width, m.height)
	}
}

// Init implements tea.Model: it lists the jobs and listens to the watcher,
// whose first report starts the first run; without a watcher the first run
// starts at once when the strategy exists.
func (m *model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.listJobs(), m.waitChange()}
	if m.themeAuto {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	if m.opts.Changes == nil && !m.fileMissing {
		cmds = append(cmds, m.requestRun())
	}
	return tea.Batch(cmds...)
}

// view returns the job view the panes show: a stored job when one is open.
func (m *model) view() *jobView {
	if m.inspected != nil {
		return m.inspected
	}
	return m.live
}

// paneOf returns the component for id in the current view.
func (m *model) paneOf(id paneID) pane {
	if id == paneJobs {
		return m.jobs
	}
	return m.view().pane(id)
}

// Update implements tea.Model. It only dispatches.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case tea.BackgroundColorMsg:
		m.setBackground(msg.IsDark())
	case tea.KeyPressMsg:
		return m, m.handleKey(msg)
	case tea.PasteMsg:
		switch {
		case m.debugOpen():
			m.live.debug.input.update(msg)
		case m.prompt.open:
			m.prompt.input.update(msg)
		case m.view().logs.searchActive():
			m.view().logs.Update(msg, m.keys)
		}
	case tea.MouseWheelMsg:
		m.handleWheel(msg)
	case tea.MouseClickMsg:
		m.handleClick(msg)
	case runStartedMsg:
		return m, m.runStarted(msg)
	case eventsMsg:
		return m, m.handleEvents(msg)
	case changeMsg:
		return m, m.handleChange(msg)
	case tickMsg:
		return m, m.tick()
	case jobsListedMsg:
		m.jobs.setJobs(msg.reports, msg.err)
	case openJobMsg:
		return m, m.openJob(msg.id)
	case jobLoadedMsg:
		m.jobLoaded(msg)
	case artifactsListedMsg:
		m.artifactsListed(msg)
	case sourceLoadedMsg:
		m.sourceLoaded(msg)
	case openerDoneMsg:
		m.openerDone(msg)
	case reportWrittenMsg:
		return m, m.reportWritten(msg)
	case editorDoneMsg:
		switch {
		case msg.err != nil:
			m.setFlash("editor: "+msg.err.Error(), themes.LevelFail)
		case msg.notice != "":
			m.setFlash(msg.notice, themes.LevelWarn)
		}
	case components.ShutdownMsg:
		if msg.Now {
			m.then = thenQuit
			return m, tea.Quit
		}
		return m, m.requestQuit()
	}
	return m, nil
}

// homeShort writes a path under the home folder with ~.
func homeShort(path string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return path
	}
	if rel, err := filepath.Rel(home, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.Join("~", rel)
	}
	return path
}

// setFlash shows text in the footer until the next key; an empty text
// clears it. A long message takes a second footer line.
func (m *model) setFlash(text string, level themes.Level) {
	lines := m.footerLines()
	m.flash = flash{text: text, level: level}
	if m.footerLines() != lines {
		m.resize(m.width, m.height)
	}
}

// footerLines is the footer's height: up to three lines for a flash
// message that does not fit in one.
func (m *model) footerLines() int {
	if m.flash.text == "" || ansi.StringWidth(m.flash.text)+2 <= m.width || m.width <= 0 {
		return 1
	}
	text := m.flash.level.Glyph() + " " + components.Sanitize(m.flash.text)
	return min(strings.Count(ansi.Wrap(text, m.width, ""), "\n")+1, 3)
}

// handleKey routes a key: the search prompt and the help overlay take the
// keyboard first, then global keys, then the focused pane.
func (m *model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	km := m.keys
	m.setFlash("", themes.LevelOK)
	if msg.String() == "ctrl+c" {
		return m.requestQuit()
	}
	if m.debugOpen() {
		return m.debugKey(msg)
	}
	if m.prompt.open {
		m.promptKey(msg)
		return nil
	}
	if m.view().logs.searchActive() && m.focus == paneLogs {
		return m.view().logs.Update(msg, km)
	}
	if m.showHelp {
		switch {
		case key.Matches(msg, km.Help, km.Back):
			m.showHelp = false
		case key.Matches(msg, km.Quit):
			return m.requestQuit()
		}
		return nil
	}
	if m.artifacts.state != artifactsClosed {
		return m.artifactsKey(msg)
	}
	if m.source.open {
		return m.sourceKey(msg)
	}
	switch {
	case key.Matches(msg, km.Quit):
		return m.requestQuit()
	case key.Matches(msg, km.Help):
		m.showHelp = true
	case key.Matches(msg, km.Artifacts):
		return m.openArtifacts()
	case key.Matches(msg, km.Report):
		return m.openReport()
	case key.Matches(msg, km.Rerun):
		if m.fileMissing {
			m.setFlash("waiting for "+displayName(m.opts.Strategy)+": nothing to run", themes.LevelWarn)
			return nil
		}
		return m.requestRun()
	case key.Matches(msg, km.Stop):
		m.stopKey()
	case key.Matches(msg, km.NextPane):
		m.setFocus((m.focus + 1) % paneCount)
	case key.Matches(msg, km.PrevPane):
		m.setFocus((m.focus + paneCount - 1) % paneCount)
	case key.Matches(msg, km.Panes[:]...):
		m.setFocus(paneID(slices.IndexFunc(km.Panes[:], func(b key.Binding) bool { return key.Matches(msg, b) })))
	case key.Matches(msg, km.Back):
		m.back()
	case key.Matches(msg, km.Edit):
		return m.edit()
	case key.Matches(msg, km.Theme):
		m.cycleTheme()
	case key.Matches(msg, km.Source):
		return m.openSource()
	case key.Matches(msg, km.Breakpoint):
		m.breakKey()
	case key.Matches(msg, km.ClearBreaks):
		m.clearBreaks()
	default:
		return m.paneOf(m.focus).Update(msg, km)
	}
	return nil
}

// setFocus focuses a pane; focusing the failure or results pane also puts it
// in the slot they share.
func (m *model) setFocus(id paneID) {
	m.view().logs.searching = false
	m.focus = id
	if id == paneFailure || id == paneResults {
		m.slot = id
	}
}

// back leaves a stored job's view, or clears the search.
func (m *model) back() {
	switch {
	case m.inspected != nil || m.loading != "":
		m.closeStored()
		m.focus = paneJobs
	case m.view().logs.query != "":
		m.view().logs.query, m.view().logs.match = "", -1
	}
}

// closeStored returns to the live view, abandoning a load in progress.
func (m *model) closeStored() {
	m.inspected, m.loading = nil, ""
	if m.cancelLoad != nil {
		m.cancelLoad()
		m.cancelLoad = nil
	}
}

// cycleTheme switches to the next colour theme.
func (m *model) cycleTheme() {
	if m.noColor {
		m.setFlash("NO_COLOR is set: colours stay off", themes.LevelOK)
		return
	}
	names := themes.Names()
	next := names[(slices.Index(names, m.theme.Name)+1)%len(names)]
	th, err := themes.NamedFor(next, m.profile)
	if err != nil {
		m.setFlash(err.Error(), themes.LevelFail)
		return
	}
	m.theme, m.themeAuto = th, false
	m.setFlash("theme: "+th.Name, themes.LevelOK)
}

// setBackground picks the dark or light theme from the terminal's background
// when the user did not name one.
func (m *model) setBackground(dark bool) {
	if !m.themeAuto || m.noColor {
		return
	}
	name := "light"
	if dark {
		name = "dark"
	}
	if th, err := themes.NamedFor(name, m.profile); err == nil {
		m.theme = th
	}
}

// handleWheel scrolls the pane under the pointer and focuses it.
func (m *model) handleWheel(msg tea.MouseWheelMsg) {
	mouse := msg.Mouse()
	id, ok := m.paneAt(mouse.X, mouse.Y)
	if !ok {
		return
	}
	lines := 0
	switch mouse.Button {
	case tea.MouseWheelUp:
		lines = -3
	case tea.MouseWheelDown:
		lines = 3
	default:
		return
	}
	m.setFocus(id)
	m.paneOf(id).Update(scrollMsg{lines}, m.keys)
}

// handleClick focuses the pane clicked, or the tab clicked.
func (m *model) handleClick(msg tea.MouseClickMsg) {
	mouse := msg.Mouse()
	if id, ok := m.layout.tabAt(mouse.X, mouse.Y); ok {
		m.setFocus(id)
		return
	}
	if id, ok := m.paneAt(mouse.X, mouse.Y); ok {
		m.setFocus(id)
	}
}

// statusWord is the header's one-word state, for people and for scripts.
func (m *model) statusWord() string {
	v := m.view()
	if m.inspected != nil {
		return words.Status(v.status)
	}
	switch {
	case m.debugOpen():
		return "DEBUGGING"
	case m.state == runStopping && v.report == nil && m.startErr == nil:
		return "STOPPING"
	case m.state == runRunning && v.report == nil && m.startErr == nil:
		return "RUNNING"
	case m.state == runStarting:
		return "STARTING"
	case m.fileMissing:
		return "WAITING"
	case m.startErr != nil:
		return "ERROR"
	case v.status != "":
		return words.Status(v.status)
	}
	return "IDLE"
}

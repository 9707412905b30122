// The sweep view's state machine (a sweep running, stopping, ended; a run
// opened from it; the axes and the selection) and its keys; how it draws is
// in view.go, the heatmap's plane in heatmap.go.

package sweepview

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"stratbench/sweep"
	"stratbench/themes"
	"stratbench/ui/components"
	"stratbench/ui/workbench"
)

// Update is one change of a sweep, in the order it happened.
type Update struct {
	// Result is a run's result, just appended to results.jsonl; nil when
	// the update carries a document only.
	Result *sweep.Result
	// Doc is the sweep's document as saved (counts, best, walk-forward,
	// status), or nil. Its runs are not read.
	Doc *sweep.Document
	// Restart, when set, is a new sweep of the same spec that replaces the
	// shown one (the strategy was saved): the view starts over with it.
	Restart *Start
	// Ended says the sweep has ended: Doc is its last document.
	Ended bool
	// Notice is something to tell the user (in the footer), or "".
	Notice string
}

// Start is what the view knows of a sweep when it starts.
type Start struct {
	// Doc is the sweep's document: its id, strategy, spec (the grid's
	// axes, the objective) and, for a resumed sweep, its counts.
	Doc *sweep.Document
	// Total is the number of runs the sweep plans.
	Total int64
	// Folds are the walk-forward's folds, nil for a plain sweep.
	Folds []sweep.Fold
	// Prior are the results the sweep had when it started (a resume).
	Prior []sweep.Result
	// Planned reports whether the sweep runs the combination with these
	// swept params (per fold in a walk-forward), so that the heatmap tells
	// a cell the constraint or the sample left out from one that has no
	// result yet. nil when not known: the view then names an empty cell,
	// once the sweep has ended, by what could have left it empty.
	Planned func(sweep.Params) bool
}

// Options configure the sweep view.
type Options struct {
	// Start is the sweep as it starts.
	Start Start
	// Updates delivers the sweep's changes, in order. A sweep that ended
	// may be followed by a restart (the strategy was saved).
	Updates <-chan Update
	// Stop asks the sweep to stop: no run starts any more, the runs in
	// flight stop (on_finish runs). The view quits, when asked to, once
	// the sweep has ended. Nil when the view only watches a sweep it does
	// not run (`stratbench sweep view`): q then quits at once, and a sweep
	// running elsewhere goes on.
	Stop func()
	// Back makes esc leave the view (Run returns ErrBack): for a view
	// opened from a list of sweeps, which esc goes back to.
	Back bool
	// Store reads a run's job when enter opens it.
	Store workbench.JobStore
	// Opener opens an artifact of an opened run, as the workbench's
	// Options.Opener; empty shows its path instead.
	Opener string
	// Report writes the sweep's HTML report (docs/report.md) for o, which
	// then opens it with Opener; JobReport a run's, as the workbench's
	// Options.Report. Nil disables o. Called off the UI's goroutine.
	Report    func(ctx context.Context, sweepID string) (path string, err error)
	JobReport func(ctx context.Context, jobID string) (path string, err error)
	// Theme, as for the workbench; NO_COLOR overrides it.
	Theme string
	// Interrupts are stop requests from outside (the signal policy): the
	// first stops the sweep and quits once it has ended, a second quits at
	// once (the caller then kills the runs in flight).
	Interrupts <-chan components.Interrupt
}

// ErrBack is what Run returns when esc left the view (Options.Back).
var ErrBack = errors.New("back to the list of sweeps")

// Run runs the sweep view on the terminal until the user quits (nil)
// or an interrupt makes it quit; the end of ctx acts as an interrupt.
func Run(ctx context.Context, opts Options) error {
	if opts.Updates == nil || opts.Start.Doc == nil {
		return errors.New("ui: sweepview.Options.Start.Doc and Updates are required")
	}
	profile := themes.Profile(os.Stdout, os.Environ())
	th, auto, err := components.PickTheme(opts.Theme, themes.NoColor(), profile)
	if err != nil {
		return fmt.Errorf("ui: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	m := newSweepModel(runCtx, opts, th, auto)
	m.profile = profile
	final, err := components.RunProgram(ctx, opts.Interrupts, m.handover, m, components.ProgramOptions(profile)...)
	if err != nil {
		return err
	}
	if fm, ok := final.(*sweepModel); ok && fm.back && ctx.Err() == nil {
		return ErrBack
	}
	return ctx.Err()
}

// sweepState is where the sweep is, as the view knows it.
type sweepState int

const (
	sweepRunning  sweepState = iota // runs go on
	sweepStopping                   // Stop was called; runs in flight are stopping
	sweepEnded                      // its last document came
)

// sweepModel is the root of the sweep view.
type sweepModel struct {
	ctx       context.Context
	opts      Options
	keys      sweepKeys
	now       func() time.Time
	theme     themes.Theme
	profile   colorprofile.Profile // the terminal's colours, which the theme and the heatmap's scale are picked for
	themeAuto bool

	width, height int

	state     sweepState
	quitAfter bool // quit once the sweep has ended
	back      bool // esc left the view (Options.Back)

	start    Start
	doc      *sweep.Document // the latest document
	obj      sweep.Objective
	runs     []sweepRun // every result, in arrival order
	ranked   []int      // indices into runs, best first, failed last
	cells    map[cellKey]int
	began    time.Time // when the view started (for runs/s)
	ended    time.Time // when the sweep ended (zero while it runs): runs/s stops there
	newRuns  int64     // results since then
	selected int       // position in ranked
	idW      int       // the widest run number seen, in cells
	statusW  int       // the widest status seen, in cells

	xAxis, yAxis int       // the heatmap's axes: indices into the grid
	heat         heatState // the heatmap's window and zoom
	fold         int       // the heatmap's fold in a walk-forward
	foldChosen   bool      // the user chose the fold: results no longer move it

	reasons  map[string]string    // why a failed run failed, by job id; "" while asked or unknown
	job      *workbench.Inspector // a run's job open in the usual panes, or nil
	showHelp bool
	flash    string
	// reporting: o is writing the sweep's report (one at a time).
	reporting bool
	// handover runs the openers, its own and an opened run's job's; a
	// stop request ends them (components.RunProgram).
	handover *components.Handover
}

// sweepRun is a result with its objective value, read once.
type sweepRun struct {
	r     sweep.Result
	value float64
	ok    bool      // passed, with the metric
	key   cellKey   // keyOf(&r), made once
	stats *runStats // the row's other metrics, read when it is first drawn
}

// cellKey finds a run by fold, phase and params.
type cellKey struct {
	fold   int // -1 outside walk-forward
	phase  sweep.Phase
	params string
}

func keyOf(r *sweep.Result) cellKey {
	k := cellKey{fold: -1, phase: r.Phase, params: r.Params.String()}
	if r.Fold != nil {
		k.fold = *r.Fold
	}
	return k
}

func newSweepModel(ctx context.Context, opts Options, th themes.Theme, auto bool) *sweepModel {
	m := &sweepModel{ctx: ctx, opts: opts, keys: newSweepKeys(), now: time.Now, theme: th, profile: colorprofile.TrueColor,
		themeAuto: auto, reasons: map[string]string{}, handover: components.NewHandover()}
	if opts.Stop == nil {
		m.keys.Stop.SetEnabled(false)
		m.keys.Quit.SetHelp("q", "quit (the sweep is not stopped)")
	}
	if opts.Back {
		m.keys.short.Back = components.Key("esc", "sweeps", "esc")
	}
	m.reset(opts.Start)
	return m
}

// reset shows a sweep from its start.
func (m *sweepModel) reset(s Start) {
	m.start, m.doc = s, s.Doc
	m.obj = sweep.Objective{Metric: s.Doc.Spec.Metric, Minimize: s.Doc.Spec.Minimize}
	m.runs, m.ranked, m.cells, m.idW, m.statusW = nil, nil, map[cellKey]int{}, 0, 0
	m.began, m.ended, m.newRuns, m.selected = m.now(), time.Time{}, 0, 0
	m.xAxis, m.yAxis = 0, 1
	if len(s.Doc.Spec.Grid) < 2 {
		m.yAxis = -1
	}
	if len(s.Doc.Spec.Grid) == 0 {
		m.xAxis = -1
	}
	m.fold, m.foldChosen = 0, false
	m.heat = heatState{zoom: m.heat.zoom}
	for _, r := range s.Prior {
		m.add(r)
	}
	m.newRuns = 0
	m.rank()
}

// add takes a result in.
func (m *sweepModel) add(r sweep.Result) {
	v, ok := m.obj.Value(&r)
	k := keyOf(&r)
	m.runs = append(m.runs, sweepRun{r: r, value: v, ok: ok, key: k})
	m.idW = max(m.idW, len(strconv.FormatInt(r.Index, 10)))
	m.statusW = max(m.statusW, ansi.StringWidth(statusText(&r)))
	m.cells[k] = len(m.runs) - 1
	m.newRuns++
	if r.Fold != nil && r.Phase == sweep.PhaseTrain && !m.foldChosen {
		m.fold = max(m.fold, *r.Fold) // the heatmap follows the latest fold
	}
}

// rank orders the runs as the document does: passed runs with the metric
// by value (ties to the lower index), then the others by index, failed
// last. In a walk-forward only the heatmap's fold's train runs are ranked,
// and the fold's test run, once it has a result, follows them unranked:
// it is the run the fold is about, and the list is where enter opens a
// run, but its value is over another window and does not compete.
func (m *sweepModel) rank() {
	m.ranked = m.ranked[:0]
	for i := range m.runs {
		if m.inView(&m.runs[i].r) {
			m.ranked = append(m.ranked, i)
		}
	}
	slices.SortStableFunc(m.ranked, func(a, b int) int {
		ra, rb := &m.runs[a], &m.runs[b]
		if ra.ok != rb.ok {
			return boolOrder(ra.ok)
		}
		pa, pb := ra.r.Status == sweep.RunPassed, rb.r.Status == sweep.RunPassed
		if pa != pb {
			return boolOrder(pa)
		}
		if ra.ok && ra.value != rb.value {
			if (ra.value < rb.value) == m.obj.Minimize {
				return -1
			}
			return 1
		}
		return int(ra.r.Index - rb.r.Index)
	})
	if t := m.testRun(); t >= 0 {
		m.ranked = append(m.ranked, t)
	}
	m.selected = min(m.selected, max(len(m.ranked)-1, 0))
}

// testRun returns the index into runs of the heatmap fold's test run, or
// -1 (a plain sweep, or the fold has not been tested yet).
func (m *sweepModel) testRun() int {
	if m.start.Folds == nil {
		return -1
	}
	for i := range m.runs {
		if r := &m.runs[i].r; r.Fold != nil && *r.Fold == m.fold && r.Phase == sweep.PhaseTest {
			return i
		}
	}
	return -1
}

func boolOrder(first bool) int {
	if first {
		return -1
	}
	return 1
}

// inView reports whether r is among the runs the list ranks and the
// heatmap shows: all of a plain sweep's, the heatmap fold's train runs of
// a walk-forward (whose test run the list adds after them).
func (m *sweepModel) inView(r *sweep.Result) bool {
	if m.start.Folds == nil {
		return true
	}
	return r.Fold != nil && *r.Fold == m.fold && r.Phase == sweep.PhaseTrain
}

// best returns the best run in view, or nil. A fold's test run, listed
// after its train runs, is never the best: it ran on another window.
func (m *sweepModel) best() *sweepRun {
	if len(m.ranked) == 0 {
		return nil
	}
	if r := &m.runs[m.ranked[0]]; r.ok && r.r.Phase != sweep.PhaseTest {
		return r
	}
	return nil
}

// sweepUpdateMsg carries updates read from Updates; closed is set once it
// is closed.
type sweepUpdateMsg struct {
	updates []Update
	closed  bool
}

// maxUpdates bounds the updates read for one render: a burst of results
// costs one ranking and one frame.
const maxUpdates = 256

// waitUpdates reads the next updates off the event loop.
func (m *sweepModel) waitUpdates() tea.Cmd {
	ch := m.opts.Updates
	return func() tea.Msg {
		u, ok := <-ch
		if !ok {
			return sweepUpdateMsg{closed: true}
		}
		msg := sweepUpdateMsg{updates: []Update{u}}
		for len(msg.updates) < maxUpdates {
			select {
			case u, ok := <-ch:
				if !ok {
					msg.closed = true
					return msg
				}
				msg.updates = append(msg.updates, u)
			default:
				return msg
			}
		}
		return msg
	}
}

// Init implements tea.Model.
func (m *sweepModel) Init() tea.Cmd {
	cmds := []tea.Cmd{m.waitUpdates(), sweepTick()}
	if m.themeAuto {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	return tea.Batch(cmds...)
}

// sweepTickMsg redraws the clock (elapsed, ETA) while the sweep runs.
type sweepTickMsg struct{}

func sweepTick() tea.Cmd {
	return tea.Tick(components.TickInterval, func(time.Time) tea.Msg { return sweepTickMsg{} })
}

// Update implements tea.Model: it handles msg, then asks why the failed
// runs now on screen failed, when it does not know.
func (m *sweepModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	if reasons := m.wantReasons(); reasons != nil {
		cmd = tea.Batch(cmd, reasons)
	}
	return m, cmd
}

func (m *sweepModel) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		if m.job != nil {
			m.job.Update(msg)
		}
	case tea.BackgroundColorMsg:
		m.setBackground(msg.IsDark())
	case tea.KeyPressMsg:
		return m.handleKey(msg)
	case sweepUpdateMsg:
		return m.apply(msg)
	case sweepTickMsg:
		return sweepTick()
	case reportWrittenMsg:
		return m.reportWritten(msg)
	case openedMsg:
		if msg.err != nil {
			m.flash = "open the report: " + msg.err.Error()
		}
	case reasonsMsg:
		for id, why := range msg {
			m.reasons[id] = why
		}
	case components.ShutdownMsg:
		if msg.Now {
			return tea.Quit
		}
		return m.quit()
	default:
		if m.job != nil {
			cmd, leave := m.job.Update(msg)
			if leave == workbench.Failed {
				m.flash = m.job.Failure() // why it could not be opened
				m.job = nil
			}
			return cmd
		}
	}
	return nil
}

// apply takes updates in.
func (m *sweepModel) apply(msg sweepUpdateMsg) tea.Cmd {
	for _, u := range msg.updates {
		if u.Restart != nil {
			m.reset(*u.Restart)
			m.state = sweepRunning
			m.flash = "the strategy changed: the sweep starts again (" + u.Restart.Doc.SweepID + ")"
		}
		if u.Result != nil {
			m.add(*u.Result)
		}
		if u.Doc != nil {
			m.doc = u.Doc
		}
		if u.Ended {
			m.end()
		}
		if u.Notice != "" {
			m.flash = u.Notice
		}
	}
	m.rank()
	if msg.closed {
		m.end()
	}
	if m.state == sweepEnded && m.quitAfter {
		return tea.Quit
	}
	if msg.closed {
		return nil
	}
	return m.waitUpdates()
}

// end marks the sweep ended at its document's finish time, so that runs/s
// says how fast it ran instead of falling while the view stays open; the
// view's clock stands in when the document has no finish time (the
// updates closed before the last document) or one before the view began.
func (m *sweepModel) end() {
	if m.state == sweepEnded {
		return
	}
	m.state = sweepEnded
	m.ended = m.now()
	if at := m.doc.FinishedAt; at != nil && !at.Before(m.began) {
		m.ended = *at
	}
}

// quit stops the sweep and quits once it has ended; a second quit while
// it stops quits at once.
func (m *sweepModel) quit() tea.Cmd {
	if m.opts.Stop == nil {
		return tea.Quit // the view only watches the sweep
	}
	switch m.state {
	case sweepEnded:
		return tea.Quit
	case sweepStopping:
		if m.quitAfter {
			return tea.Quit
		}
	case sweepRunning:
		m.opts.Stop()
		m.state = sweepStopping
	}
	m.quitAfter = true
	return nil
}

// handleKey routes a key: to the open job's panes when one is open, else
// the sweep view's own keys.
func (m *sweepModel) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	km := m.keys
	m.flash = ""
	if msg.String() == "ctrl+c" {
		return m.quit()
	}
	if m.job != nil {
		return m.jobKey(msg)
	}
	if m.showHelp {
		switch {
		case key.Matches(msg, km.Help, km.Back):
			m.showHelp = false
		case key.Matches(msg, km.Quit):
			return m.quit()
		}
		return nil
	}
	switch {
	case key.Matches(msg, km.Quit):
		return m.quit()
	case key.Matches(msg, km.Help):
		m.showHelp = true
	case key.Matches(msg, km.Back) && m.opts.Back:
		m.back = true
		return tea.Quit
	case key.Matches(msg, km.Stop):
		if m.state == sweepRunning && m.opts.Stop != nil {
			m.opts.Stop()
			m.state = sweepStopping
		}
	case key.Matches(msg, km.Up):
		m.selectRun(m.selected - 1)
	case key.Matches(msg, km.Down):
		m.selectRun(m.selected + 1)
	case key.Matches(msg, km.PageUp):
		m.selectRun(m.selected - m.runRows())
	case key.Matches(msg, km.PageDown):
		m.selectRun(m.selected + m.runRows())
	case key.Matches(msg, km.Top):
		m.selectRun(0)
	case key.Matches(msg, km.Bottom):
		m.selectRun(len(m.ranked) - 1)
	case key.Matches(msg, km.Enter):
		return m.openSelected()
	case key.Matches(msg, km.Report):
		return m.openReport()
	case key.Matches(msg, km.NextX):
		m.xAxis = m.nextAxis(m.xAxis, m.yAxis, 1)
		m.heat.recentre()
	case key.Matches(msg, km.PrevX):
		m.xAxis = m.nextAxis(m.xAxis, m.yAxis, -1)
		m.heat.recentre()
	case key.Matches(msg, km.NextY):
		m.yAxis = m.nextAxis(m.yAxis, m.xAxis, 1)
		m.heat.recentre()
	case key.Matches(msg, km.PrevY):
		m.yAxis = m.nextAxis(m.yAxis, m.xAxis, -1)
		m.heat.recentre()
	case key.Matches(msg, km.Swap):
		if m.yAxis >= 0 {
			m.xAxis, m.yAxis = m.yAxis, m.xAxis
			m.heat.recentre()
		}
	case key.Matches(msg, km.PanLeft):
		m.pan(-1, 0)
	case key.Matches(msg, km.PanRight):
		m.pan(1, 0)
	case key.Matches(msg, km.PanUp):
		m.pan(0, -1)
	case key.Matches(msg, km.PanDown):
		m.pan(0, 1)
	case key.Matches(msg, km.ZoomIn):
		m.zoom(true)
	case key.Matches(msg, km.ZoomOut):
		m.zoom(false)
	case key.Matches(msg, km.Centre):
		m.heat.recentre()
	case key.Matches(msg, km.NextFold):
		m.moveFold(1)
	case key.Matches(msg, km.PrevFold):
		m.moveFold(-1)
	case key.Matches(msg, km.Theme):
		m.cycleTheme()
	}
	return nil
}

// selectRun selects the run at position i of the list (kept inside it);
// the heatmap follows the selection again.
func (m *sweepModel) selectRun(i int) {
	m.selected = min(max(i, 0), max(len(m.ranked)-1, 0))
	m.heat.panned = false
}

// nextAxis moves axis by step through the grid's params, skipping other
// (the other axis); when no other param is free it stays and says why.
func (m *sweepModel) nextAxis(axis, other, step int) int {
	n := len(m.start.Doc.Spec.Grid)
	free := n
	if other >= 0 {
		free--
	}
	if axis < 0 || free < 2 {
		if n >= 2 {
			m.flash = "no other swept param: w swaps the axes"
		} else {
			m.flash = "one param is swept: the heatmap is one row"
		}
		return axis
	}
	for next := (axis + step + n) % n; ; next = (next + step + n) % n {
		if next != other {
			return next
		}
	}
}

// moveFold moves the heatmap and the run list to another fold.
func (m *sweepModel) moveFold(step int) {
	n := len(m.start.Folds)
	if n == 0 {
		return
	}
	m.fold = (m.fold + step + n) % n
	m.foldChosen = true
	m.selected = 0
	m.heat.recentre()
	m.rank()
}

// openSelected opens the selected run's job in the usual panes.
func (m *sweepModel) openSelected() tea.Cmd {
	if len(m.ranked) == 0 || m.opts.Store == nil {
		return nil
	}
	id := m.runs[m.ranked[m.selected]].r.JobID
	m.job = workbench.NewInspector(m.ctx, workbench.InspectorOptions{Strategy: m.start.Doc.Strategy.Path, Store: m.opts.Store,
		Theme: m.theme, Opener: m.opts.Opener, Report: m.opts.JobReport, Handover: m.handover, Empty: "a sweep's runs are listed in the sweep view (esc)"}, m.width, m.height)
	return m.job.Open(id)
}

// jobKey handles a key while a run's job is open: esc returns to the
// sweep, q quits, the rest goes to the job's panes.
func (m *sweepModel) jobKey(msg tea.KeyPressMsg) tea.Cmd {
	cmd, leave := m.job.Update(msg)
	switch leave {
	case workbench.Back:
		m.job = nil
	case workbench.Quit:
		m.job = nil
		return m.quit()
	}
	return cmd
}

// cycleTheme switches to the next colour theme (not under NO_COLOR).
func (m *sweepModel) cycleTheme() {
	if themes.NoColor() {
		return
	}
	names := themes.Names()
	i := slices.Index(names, m.theme.Name)
	if th, err := themes.NamedFor(names[(i+1)%len(names)], m.profile); err == nil {
		m.theme, m.themeAuto = th, false
	}
}

// setBackground follows the terminal's background while the theme is auto.
func (m *sweepModel) setBackground(dark bool) {
	if !m.themeAuto {
		return
	}
	for _, name := range themes.Names() {
		if th, err := themes.NamedFor(name, m.profile); err == nil && th.Dark == dark {
			m.theme = th
			return
		}
	}
}

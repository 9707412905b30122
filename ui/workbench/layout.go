package workbench

import "stratbench/ui/components"

// Layout breakpoints: from this size on the panes sit side by side; below it
// they are tabs, one pane at a time. Below the minimum only the header shows.
const (
	gridMinWidth  = 100
	gridMinHeight = 30
	headerHeight  = 3
)

// rect is a screen area in cells.
type rect struct{ x, y, w, h int }

func (r rect) contains(x, y int) bool {
	return x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h
}

// layout is where each pane goes for the current terminal size.
type layout struct {
	tooSmall bool
	tabs     bool            // one pane at a time, with a tab bar
	tabBar   rect            // the tab bar, in the tabbed layout
	tabCells [paneCount]rect // each tab's label, for clicks
	body     rect            // everything between header and footer
	panes    [paneCount]rect // frame of each pane; failure and results share one
}

// computeLayout places the panes in a w×h terminal with a footer of
// footerHeight lines.
//
// Grid (wide terminals):
//
//	header
//	Hooks          | Process tree
//	Logs           | Failure or Results
//	Jobs
//	help bar
func computeLayout(w, h, footerHeight int) layout {
	var l layout
	if w < components.MinWidth || h < components.MinHeight {
		l.tooSmall = true
		return l
	}
	if h-headerHeight-footerHeight < components.MinHeight-headerHeight-1 {
		footerHeight = 1
	}
	l.body = rect{0, headerHeight, w, h - headerHeight - footerHeight}
	if w < gridMinWidth || h < gridMinHeight {
		l.tabs = true
		l.tabBar = rect{0, l.body.y, w, 1}
		full := rect{0, l.body.y + 1, w, l.body.h - 1}
		for i := range l.panes {
			l.panes[i] = full
		}
		return l
	}
	b := l.body
	topH := max(b.h*30/100, 8)
	jobsH := max(b.h*22/100, 6)
	midH := b.h - topH - jobsH
	half := w / 2
	logsW := w * 55 / 100
	l.panes[paneHooks] = rect{0, b.y, half, topH}
	l.panes[paneProcs] = rect{half, b.y, w - half, topH}
	l.panes[paneLogs] = rect{0, b.y + topH, logsW, midH}
	l.panes[paneFailure] = rect{logsW, b.y + topH, w - logsW, midH}
	l.panes[paneResults] = l.panes[paneFailure]
	l.panes[paneJobs] = rect{0, b.y + topH + midH, w, jobsH}
	return l
}

// tabAt returns the tab under a cell in the tabbed layout.
func (l layout) tabAt(x, y int) (paneID, bool) {
	if !l.tabs {
		return 0, false
	}
	for i, r := range l.tabCells {
		if r.contains(x, y) {
			return paneID(i), true
		}
	}
	return 0, false
}

// paneAt returns the pane shown under a cell: panes that share a place are
// told apart by what is on screen.
func (m *model) paneAt(x, y int) (paneID, bool) {
	if m.layout.tabs {
		return m.focus, m.layout.panes[m.focus].contains(x, y)
	}
	for i, r := range m.layout.panes {
		if !r.contains(x, y) {
			continue
		}
		if id := paneID(i); id != paneFailure && id != paneResults {
			return id, true
		}
		return m.slot, true
	}
	return 0, false
}

// tabLabel is the text of a tab, the same width whatever its state so that
// clicks land where the labels are drawn.
func tabLabel(id paneID, focused, failed bool) string {
	core := string(rune('1'+int(id))) + " " + id.shortName()
	switch {
	case focused:
		return "[" + core + "]"
	case failed:
		return "✗" + core + " "
	}
	return " " + core + " "
}

// tabCells returns where each tab label is drawn in the tab bar.
func tabCells(bar rect) [paneCount]rect {
	var cells [paneCount]rect
	x := bar.x
	for id := range paneCount {
		w := len([]rune(tabLabel(id, false, false)))
		cells[id] = rect{x, bar.y, w, 1}
		x += w + 1
	}
	return cells
}

// resize lays the panes out for a new terminal size.
func (m *model) resize(w, h int) {
	m.width, m.height = w, h
	m.layout = computeLayout(w, h, m.footerLines())
	m.layout.tabCells = tabCells(m.layout.tabBar)
	m.help.SetWidth(w)
	m.sizeView(m.live)
	if m.inspected != nil {
		m.sizeView(m.inspected)
	}
	r := m.layout.panes[paneJobs]
	m.jobs.SetSize(max(r.w-2, 0), max(r.h-2, 0))
}

// sizeView sets the content size of a job view's panes.
func (m *model) sizeView(v *jobView) {
	for id := paneHooks; id < paneJobs; id++ {
		r := m.layout.panes[id]
		v.pane(id).SetSize(max(r.w-2, 0), max(r.h-2, 0))
	}
}

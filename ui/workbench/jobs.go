package workbench

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"stratbench/contract"
	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/job"
	"stratbench/themes"
	"stratbench/ui/components"
)

// openJobMsg asks the root model to open a job's full view.
type openJobMsg struct{ id string }

// jobsPane lists this session's and earlier jobs, newest first; enter opens
// the selected job.
type jobsPane struct {
	reports []*job.Report
	// names and params are each listed job's strategy and params as the
	// list shows them (jobColumns), by row.
	names, params []string
	session       map[string]bool // jobs started by this session
	err           error           // the last listing error
	selected      string          // id of the selected job; kept across refreshes
	cursor        int
	loc           *time.Location // for start times
	scroll        scroller
	w, h          int
	// empty is what the pane says without jobs: "no jobs yet", or, for a
	// run opened from the sweep view, where the sweep's runs are listed.
	empty string
}

func newJobsPane() *jobsPane {
	return &jobsPane{session: map[string]bool{}, loc: time.Local, empty: "no jobs yet"}
}

// setJobs replaces the list. A selection on the first row stays on the
// first row, so that the newest jobs (the one running, the one that just
// failed) stay in view as they arrive; a selection further down stays on
// the same job, and the view keeps its offset from it.
//
// The runs of sweeps are left out, as `stratbench jobs` leaves them out
// without --all: a sweep of a thousand runs would bury the jobs of the
// edit-save loop. The sweep view and `stratbench jobs --sweep ID` list them.
func (p *jobsPane) setJobs(reports []*job.Report, err error) {
	p.err = err
	if err != nil {
		return
	}
	own := make([]*job.Report, 0, len(reports))
	for _, r := range reports {
		if r.Sweep == nil {
			own = append(own, r)
		}
	}
	reports = own
	atHead := p.cursor == 0
	old := p.cursor
	p.reports = reports
	p.names, p.params = jobColumns(reports)
	p.cursor = 0
	if !atHead {
		for i, r := range reports {
			if r.JobID == p.selected {
				p.cursor = i
			}
		}
		// The rows above the selection moved it down: the view moves
		// with it, so the same rows stay on screen.
		p.scroll.offset = max(p.scroll.offset+p.cursor-old, 0)
	} else {
		p.scroll.offset = 0
	}
	p.sync()
}

// jobColumns are the STRATEGY and PARAMS of each listed job, as `stratbench
// jobs` writes them: the file's name, with the folder when two folders'
// files of that name are listed (words.StrategyNames); the params, those
// that differ between the listed jobs first (words.ParamOrder).
func jobColumns(reports []*job.Report) (names, params []string) {
	paths, all := make([]string, len(reports)), make([]map[string]any, len(reports))
	for i, r := range reports {
		paths[i], all[i] = r.Strategy.Path, r.Strategy.Params
	}
	names, order := words.StrategyNames(paths), words.ParamOrder(all)
	params = make([]string, len(reports))
	for i, r := range reports {
		params[i] = components.Sanitize(words.Params(r.Strategy.Params, order))
	}
	return names, params
}

// started marks id as a job of this session.
func (p *jobsPane) started(id string) { p.session[id] = true }

func (p *jobsPane) sync() {
	p.cursor = min(max(p.cursor, 0), max(len(p.reports)-1, 0))
	if len(p.reports) > 0 {
		p.selected = p.reports[p.cursor].JobID
	}
}

// SetSize implements pane.
func (p *jobsPane) SetSize(w, h int) { p.w, p.h = w, h }

// ShortHelp implements pane.
func (p *jobsPane) ShortHelp(km keyMap) []key.Binding {
	return []key.Binding{km.Enter, km.Down, km.Up}
}

// Update implements pane.
func (p *jobsPane) Update(msg tea.Msg, km keyMap) tea.Cmd {
	rows := max(p.h-1, 1)
	switch msg := msg.(type) {
	case scrollMsg:
		p.cursor += msg.lines
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, km.Enter):
			if len(p.reports) == 0 {
				return nil
			}
			id := p.reports[p.cursor].JobID
			return func() tea.Msg { return openJobMsg{id} }
		case key.Matches(msg, km.Up):
			p.cursor--
		case key.Matches(msg, km.Down):
			p.cursor++
		case key.Matches(msg, km.PageUp):
			p.cursor -= rows
		case key.Matches(msg, km.PageDown):
			p.cursor += rows
		case key.Matches(msg, km.Top):
			p.cursor = 0
		case key.Matches(msg, km.Bottom):
			p.cursor = len(p.reports) - 1
		}
	}
	p.sync()
	return nil
}

// View implements pane.
func (p *jobsPane) View(th themes.Theme) string {
	if p.err != nil {
		return th.Fail.Render(themes.LevelFail.Glyph() + " cannot list jobs: " + components.Sanitize(p.err.Error()))
	}
	if len(p.reports) == 0 {
		return th.Muted.Render(p.empty)
	}
	idW := len("JOB")
	for _, r := range p.reports {
		idW = max(idW, len(r.JobID))
	}
	idW = min(idW, 32)
	// The strategy and failure columns are as wide as what they list, so
	// that the params get the rest of the width.
	strategyW, kindW := len("STRATEGY"), 0
	for i, r := range p.reports {
		strategyW = max(strategyW, min(ansi.StringWidth(components.Sanitize(p.names[i])), 22))
		if r.Failure != nil {
			kindW = max(kindW, len("FAILURE"), ansi.StringWidth(components.Sanitize(string(r.Failure.Kind))))
		}
	}
	pre := func(mark, id string) string { return fmt.Sprintf("%1s %-*s  ", mark, idW, id) }
	post := func(strategy, started, dur, ret, kind, params string) string {
		line := fmt.Sprintf("  %-*s  %-16s  %8s  %9s  ", strategyW, strategy, started, dur, ret)
		if kindW > 0 {
			line += fmt.Sprintf("%-*s  ", kindW, kind)
		}
		return strings.TrimRight(line+params, " ")
	}
	lines := []string{th.Muted.Render(pre("", "JOB") + fmt.Sprintf("%-9s", "STATUS") + post("STRATEGY", "STARTED", "DURATION", "RETURN", "FAILURE", "PARAMS"))}
	rows := max(p.h-1, 1)
	// Keep the cursor in view.
	if p.cursor < p.scroll.offset {
		p.scroll.offset = p.cursor
	}
	if p.cursor >= p.scroll.offset+rows {
		p.scroll.offset = p.cursor - rows + 1
	}
	for i := p.scroll.offset; i < len(p.reports) && i < p.scroll.offset+rows; i++ {
		r := p.reports[i]
		mark := ""
		if p.session[r.JobID] {
			mark = "•"
		}
		kind := ""
		if r.Failure != nil {
			kind = components.Sanitize(string(r.Failure.Kind))
		}
		dur := ""
		if r.Status != job.StatusRunning {
			dur = units.Millis(float64(r.DurationMS))
		}
		started := "—"
		if !r.StartedAt.IsZero() {
			started = r.StartedAt.In(p.loc).Format("2006-01-02 15:04")
		}
		ret := totalReturn(r.Metrics)
		if r.Metrics != nil && r.Status != job.StatusPassed && r.Metrics.Events == 0 {
			ret = "—" // it ended before its first event: no return
		}
		strategy := truncLeft(p.names[i], 22)
		a, st, b := pre(mark, components.Sanitize(r.JobID)), fmt.Sprintf("%-9s", components.Sanitize(words.JobStatus(r.Status))), post(strategy, started, dur, ret, kind, p.params[i])
		if i == p.cursor {
			lines = append(lines, th.Selected.Render(components.Fit(a+st+b, p.w)))
			continue
		}
		lines = append(lines, th.Text.Render(a)+styleStatus(th, r.Status).Render(st)+th.Text.Render(b))
	}
	return strings.Join(lines, "\n")
}

// styleStatus returns the style of a job status: passed is ok, stopped is
// warn, failed is fail.
func styleStatus(th themes.Theme, status job.Status) lipgloss.Style {
	switch status {
	case job.StatusPassed:
		return th.OK
	case job.StatusFailed:
		return th.Fail
	case job.StatusStopped:
		return th.Warn
	}
	return th.Accent
}

// totalReturn formats a report's total_return, or "" when it has none (a
// report of a job still running).
func totalReturn(m *contract.Metrics) string {
	if m == nil {
		return ""
	}
	return units.Percent(m.TotalReturn)
}

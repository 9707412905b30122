package sweepview

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// o: the sweep's HTML report (docs/report.md), written by Options.Report
// and opened with Options.Opener; without an opener the footer gives its
// path.

// reportWrittenMsg is Options.Report's answer.
type reportWrittenMsg struct {
	path string
	err  error
}

// openedMsg is the opener's end.
type openedMsg struct{ err error }

// openReport asks for the sweep's report.
func (m *sweepModel) openReport() tea.Cmd {
	if m.opts.Report == nil {
		return nil
	}
	if m.reporting {
		// One at a time, as the workbench's o.
		m.flash = "the sweep's report is being written…"
		return nil
	}
	m.reporting = true
	write, ctx, id := m.opts.Report, m.ctx, m.doc.SweepID
	m.flash = "writing the sweep's report…"
	return func() tea.Msg {
		path, err := write(ctx, id)
		return reportWrittenMsg{path: path, err: err}
	}
}

// reportWritten opens a written report, or says why there is none.
func (m *sweepModel) reportWritten(msg reportWrittenMsg) tea.Cmd {
	m.reporting = false
	if msg.err != nil {
		m.flash = "the sweep's report: " + msg.err.Error()
		return nil
	}
	fields := strings.Fields(m.opts.Opener)
	if len(fields) == 0 {
		m.flash = "no opener: set $STRATBENCH_OPEN (or install xdg-open) · the report is " + msg.path
		return nil
	}
	m.flash = "report: " + msg.path
	return m.handover.ExecProcess(fields[0], append(fields[1:], msg.path), func(err error) tea.Msg { return openedMsg{err: err} })
}

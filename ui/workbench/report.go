package workbench

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"stratbench/job"
	"stratbench/themes"
)

// o: the HTML report of the job in view (docs/report.md), written by
// Options.Report into the job's folder and opened with Options.Opener, as
// an artifact is; without an opener the footer gives its path.

// reportWrittenMsg is Options.Report's answer for job jobID.
type reportWrittenMsg struct {
	jobID, path string
	err         error
}

// openReport asks for the report of the job in view, once it has ended.
func (m *model) openReport() tea.Cmd {
	v := m.view()
	switch {
	case m.opts.Report == nil:
		return nil
	case v.id == "":
		m.setFlash("no job yet: its report is written once it has run", themes.LevelWarn)
		return nil
	case v.status == "" || v.status == job.StatusRunning:
		m.setFlash("the report is written once the job has ended", themes.LevelWarn)
		return nil
	case m.reporting != "":
		// One at a time: a held o would load the records once per press,
		// all at once, and then open the report as many times.
		m.setFlash("the report of "+m.reporting+" is being written…", themes.LevelWarn)
		return nil
	}
	id, write, ctx := v.id, m.opts.Report, m.ctx
	m.reporting = id
	m.setFlash("writing the report of "+id+"…", themes.LevelOK)
	return func() tea.Msg {
		path, err := write(ctx, id)
		return reportWrittenMsg{jobID: id, path: path, err: err}
	}
}

// reportWritten opens a written report, or says why there is none.
func (m *model) reportWritten(msg reportWrittenMsg) tea.Cmd {
	m.reporting = ""
	if msg.err != nil {
		m.setFlash("the report of "+msg.jobID+": "+msg.err.Error(), themes.LevelFail)
		return nil
	}
	fields := strings.Fields(m.opts.Opener)
	if len(fields) == 0 {
		m.setFlash("no opener: set $STRATBENCH_OPEN (or install xdg-open) · the report is "+msg.path, themes.LevelWarn)
		return nil
	}
	m.setFlash("report: "+msg.path, themes.LevelOK)
	return m.handover.ExecProcess(fields[0], append(fields[1:], msg.path), func(err error) tea.Msg {
		return openerDoneMsg{name: "the report", err: err}
	})
}

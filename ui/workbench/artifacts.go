package workbench

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/job"
	"stratbench/themes"
	"stratbench/ui/components"
)

// The artifacts overlay lists the files of the job in view (the live run or
// a stored job): what the strategy saved through ctx.artifact_path (charts,
// tables) and the record files, with their sizes and the caps. enter opens
// the selected file with the system's opener (Options.Opener), y copies its
// path to the clipboard, and its full path is always shown for copying by
// hand. Images are not previewed in the terminal: the workbench's renderer
// owns every cell of the screen, and an image drawn with terminal graphics
// (kitty, iTerm2, sixel) outside it would be overwritten or left behind at
// the next frame.

// artifactsState is where the overlay is.
type artifactsState int

const (
	artifactsClosed artifactsState = iota
	artifactsLoading
	artifactsShown
)

// artifactsOverlay is the overlay's state.
type artifactsOverlay struct {
	state  artifactsState
	jobID  string // the job listed
	list   job.Artifacts
	err    error // why the folder could not be listed
	cursor int   // the selected file
	top    int   // the first file shown
	rows   int   // files that fit, as last drawn
}

// artifactsListedMsg carries a job's listing, read off the update loop.
type artifactsListedMsg struct {
	jobID string
	list  job.Artifacts
	err   error
}

// openerDoneMsg reports that the opener exited.
type openerDoneMsg struct {
	name string
	err  error
}

// artifactKeys are the overlay's own keys.
type artifactKeys struct {
	Open, Copy, Close key.Binding
}

func newArtifactKeys() artifactKeys {
	return artifactKeys{
		Open:  key.NewBinding(key.WithKeys("enter", "o"), key.WithHelp("enter/o", "open")),
		Copy:  key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy path")),
		Close: key.NewBinding(key.WithKeys("esc", "a"), key.WithHelp("esc/a", "close")),
	}
}

// openArtifacts lists the artifacts of the job in view.
func (m *model) openArtifacts() tea.Cmd {
	v := m.view()
	dir := v.dir
	if dir == "" && m.opts.Store != nil && v.id != "" {
		dir = m.opts.Store.JobDir(v.id)
	}
	if dir == "" {
		m.setFlash("no job yet: its artifacts show once it runs", themes.LevelWarn)
		return nil
	}
	m.artifacts = artifactsOverlay{state: artifactsLoading, jobID: v.id}
	id := v.id
	return func() tea.Msg {
		list, err := job.ListArtifacts(dir)
		return artifactsListedMsg{jobID: id, list: list, err: err}
	}
}

// artifactsListed shows a listing, unless the overlay was closed meanwhile.
func (m *model) artifactsListed(msg artifactsListedMsg) {
	if m.artifacts.state != artifactsLoading || msg.jobID != m.artifacts.jobID {
		return
	}
	m.artifacts.state, m.artifacts.list, m.artifacts.err = artifactsShown, msg.list, msg.err
}

// artifactsKey handles a key while the overlay is open.
func (m *model) artifactsKey(msg tea.KeyPressMsg) tea.Cmd {
	a, km, ak := &m.artifacts, m.keys, newArtifactKeys()
	n := len(a.list.Files)
	switch {
	case key.Matches(msg, ak.Close):
		*a = artifactsOverlay{}
	case key.Matches(msg, km.Quit):
		return m.requestQuit()
	case key.Matches(msg, km.Help):
		m.showHelp = true
	case n == 0:
	case key.Matches(msg, km.Up):
		a.cursor = max(a.cursor-1, 0)
	case key.Matches(msg, km.Down):
		a.cursor = min(a.cursor+1, n-1)
	case key.Matches(msg, km.PageUp):
		a.cursor = max(a.cursor-max(a.rows, 1), 0)
	case key.Matches(msg, km.PageDown):
		a.cursor = min(a.cursor+max(a.rows, 1), n-1)
	case key.Matches(msg, km.Top):
		a.cursor = 0
	case key.Matches(msg, km.Bottom):
		a.cursor = n - 1
	case key.Matches(msg, ak.Open):
		return m.openArtifact(a.list.Files[a.cursor])
	case key.Matches(msg, ak.Copy):
		path := a.list.Path(a.list.Files[a.cursor])
		m.setFlash("copied "+path, themes.LevelOK)
		return tea.SetClipboard(path)
	}
	return nil
}

// openArtifact opens a file with the opener (its value may carry
// arguments; the file's path comes last). The opener gets the terminal
// while it runs, as the editor does: it may be a terminal program, and a
// desktop opener's messages must not land on the screen.
func (m *model) openArtifact(f job.Artifact) tea.Cmd {
	path := m.artifacts.list.Path(f)
	fields := strings.Fields(m.opts.Opener)
	if len(fields) == 0 {
		m.setFlash("no opener: set $STRATBENCH_OPEN (or install xdg-open) · the file is "+path, themes.LevelWarn)
		return nil
	}
	return m.handover.ExecProcess(fields[0], append(fields[1:], path), func(err error) tea.Msg {
		if err != nil {
			err = fmt.Errorf("%s: %w", fields[0], err)
		}
		return openerDoneMsg{name: f.Name, err: err}
	})
}

// openerDone reports an opener that failed.
func (m *model) openerDone(msg openerDoneMsg) {
	if msg.err != nil {
		m.setFlash("open "+msg.name+": "+msg.err.Error(), themes.LevelFail)
	}
}

// artifactsHelp is the help bar's content while the overlay is open.
func (m *model) artifactsHelp() []key.Binding {
	ak := newArtifactKeys()
	return []key.Binding{ak.Close, m.keys.Up, m.keys.Down, ak.Open, ak.Copy}
}

// artifactsView draws the overlay in a frame centred in the body (w×h).
func (m *model) artifactsView(th themes.Theme, w, h int) string {
	a := &m.artifacts
	bw := min(w, max(72, w*3/4))
	inner := bw - 4
	title := "Artifacts · " + a.jobID
	var lines []string
	switch {
	case a.state == artifactsLoading:
		lines = append(lines, th.Muted.Render("listing…"))
	case a.err != nil:
		lines = append(lines, th.Fail.Render(components.Sanitize(a.err.Error())))
	default:
		lines = append(lines, th.Muted.Render(truncLeft(a.list.Dir, inner)), th.Muted.Render(words.ArtifactsSummary(a.list)), "")
		// The selected file's full path, wrapped, for copying by hand.
		var path []string
		if len(a.list.Files) > 0 {
			wrapped := ansi.Hardwrap(components.Sanitize(a.list.Path(a.list.Files[a.cursor])), inner, false)
			path = append([]string{""}, strings.Split(wrapped, "\n")...)
		}
		rows := max(h-2-len(lines)-len(path)-1, 1)
		a.rows = rows
		a.top = min(max(a.top, a.cursor-rows+1), a.cursor)
		if len(a.list.Files) == 0 {
			lines = append(lines, th.Muted.Render("no files yet: save charts and tables with ctx.artifact_path(name)"))
		}
		sizeW := 10
		for i := a.top; i < len(a.list.Files) && i < a.top+rows; i++ {
			f := a.list.Files[i]
			size := units.Bytes(f.Bytes)
			name := ansi.Truncate(components.Sanitize(f.Name), inner-sizeW-3, "…")
			row := fmt.Sprintf("  %s%s%*s", name, strings.Repeat(" ", max(inner-sizeW-2-ansi.StringWidth(name), 1)), sizeW, size)
			if i == a.cursor {
				row = th.Selected.Render(components.Fit("› "+row[2:], inner))
			}
			lines = append(lines, row)
		}
		if a.list.Unlisted > 0 && a.top+rows >= len(a.list.Files) {
			lines = append(lines, th.Muted.Render("  "+words.Unlisted(a.list.Unlisted)))
		}
		lines = append(lines, path...)
	}
	body := make([]string, len(lines))
	for i, l := range lines {
		body[i] = " " + l
	}
	bh := min(len(body)+2, h)
	box := strings.Split(components.Frame(th, title, strings.Join(body, "\n"), bw, bh, true), "\n")
	top, left := max((h-bh)/3, 0), strings.Repeat(" ", max((w-bw)/2, 0))
	out := make([]string, h)
	for i := range out {
		if j := i - top; j >= 0 && j < len(box) {
			out[i] = components.Fit(left+box[j], w)
		} else {
			out[i] = strings.Repeat(" ", w)
		}
	}
	return strings.Join(out, "\n")
}

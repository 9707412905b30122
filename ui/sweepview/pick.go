package sweepview

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"stratbench/internal/units"
	"stratbench/sweep"
	"stratbench/themes"
	"stratbench/ui/components"
)

// The list of sweeps that `stratbench sweep view` without an id shows:
// the sweeps of the store, newest first, as `stratbench sweeps` lists
// them; enter opens the selected one in the sweep view.

// PickOptions configure the list of sweeps.
type PickOptions struct {
	// Sweeps are the sweeps to list, newest first, their statuses as
	// listings show them (a sweep that crashed is stopped).
	Sweeps []*sweep.Document
	// Selected is the id of the sweep selected first (the one just
	// left), or "" for the newest.
	Selected string
	// Theme, as for the sweep view; NO_COLOR overrides it.
	Theme string
	// Interrupts are stop requests from outside: any quits the list.
	Interrupts <-chan components.Interrupt
}

// Browse lists the sweeps of store, newest first, their statuses as
// listings show them (Pick), and opens the one chosen with view, the
// view's Back set: its ErrBack brings the list back, the sweep just left
// selected. It returns nil when the list quits or stopped reports a stop
// request, and otherwise what view returned that is not ErrBack, or the
// error of the list.
func Browse(ctx context.Context, store *sweep.Store, theme string, interrupts <-chan components.Interrupt,
	stopped func() bool, view func(id string) error) error {
	last := ""
	for {
		docs, _, err := store.List()
		if err != nil {
			return err
		}
		for _, d := range docs {
			d.Status = store.Listed(d)
		}
		id, err := Pick(ctx, PickOptions{Sweeps: docs, Selected: last, Theme: theme, Interrupts: interrupts})
		if err != nil || id == "" || stopped() {
			return err
		}
		last = id
		if err := view(id); !errors.Is(err, ErrBack) {
			return err
		}
	}
}

// Pick shows the list of sweeps until the user opens one (its id) or
// quits (""); the end of ctx quits it.
func Pick(ctx context.Context, o PickOptions) (string, error) {
	profile := themes.Profile(os.Stdout, os.Environ())
	th, auto, err := components.PickTheme(o.Theme, themes.NoColor(), profile)
	if err != nil {
		return "", fmt.Errorf("ui: %w", err)
	}
	m := newPickModel(o, th, auto, profile)
	final, err := components.RunProgram(ctx, o.Interrupts, nil, m, components.ProgramOptions(profile)...)
	if err != nil {
		return "", err
	}
	if fm, ok := final.(*pickModel); ok && ctx.Err() == nil {
		return fm.chosen, nil
	}
	return "", ctx.Err()
}

// pickModel is the list of sweeps.
type pickModel struct {
	sweeps        []*sweep.Document
	cursor        int
	chosen        string
	theme         themes.Theme
	themeAuto     bool
	profile       colorprofile.Profile
	loc           *time.Location
	width, height int
	keys          pickKeys
}

// pickKeys are the list's keys.
type pickKeys struct {
	Open, Quit, Up, Down, PageUp, PageDown, Top, Bottom key.Binding
}

func newPickModel(o PickOptions, th themes.Theme, auto bool, profile colorprofile.Profile) *pickModel {
	b := components.Key
	m := &pickModel{sweeps: o.Sweeps, theme: th, themeAuto: auto, profile: profile, loc: time.Local, keys: pickKeys{
		Open:     b("enter", "open in the sweep view", "enter"),
		Quit:     b("q", "quit", "q", "esc"),
		Up:       b("↑/k", "up", "up", "k"),
		Down:     b("↓/j", "down", "down", "j"),
		PageUp:   b("pgup/b", "page up", "pgup", "b", "ctrl+u"),
		PageDown: b("pgdn/space", "page down", "pgdown", "space", "ctrl+d"),
		Top:      b("g", "newest", "g", "home"),
		Bottom:   b("G", "oldest", "G", "end"),
	}}
	for i, d := range o.Sweeps {
		if d.SweepID == o.Selected {
			m.cursor = i
		}
	}
	return m
}

// Init implements tea.Model.
func (m *pickModel) Init() tea.Cmd {
	if m.themeAuto {
		return tea.RequestBackgroundColor
	}
	return nil
}

// Update implements tea.Model.
func (m *pickModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	km := m.keys
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.BackgroundColorMsg:
		if m.themeAuto {
			for _, name := range themes.Names() {
				if th, err := themes.NamedFor(name, m.profile); err == nil && th.Dark == msg.IsDark() {
					m.theme = th
					break
				}
			}
		}
	case components.ShutdownMsg:
		return m, tea.Quit
	case tea.KeyPressMsg:
		page := max(m.rows(), 1)
		switch {
		case msg.String() == "ctrl+c", key.Matches(msg, km.Quit):
			return m, tea.Quit
		case key.Matches(msg, km.Open):
			if len(m.sweeps) > 0 {
				m.chosen = m.sweeps[m.cursor].SweepID
				return m, tea.Quit
			}
		case key.Matches(msg, km.Up):
			m.cursor--
		case key.Matches(msg, km.Down):
			m.cursor++
		case key.Matches(msg, km.PageUp):
			m.cursor -= page
		case key.Matches(msg, km.PageDown):
			m.cursor += page
		case key.Matches(msg, km.Top):
			m.cursor = 0
		case key.Matches(msg, km.Bottom):
			m.cursor = len(m.sweeps) - 1
		}
		m.cursor = min(max(m.cursor, 0), max(len(m.sweeps)-1, 0))
	}
	return m, nil
}

// rows is the number of sweeps the list shows.
func (m *pickModel) rows() int { return m.height - 2 - 3 } // the header, the footer, the frame and the column names

// View implements tea.Model.
func (m *pickModel) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "stratbench · sweeps"
	return v
}

func (m *pickModel) render() string {
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		return ""
	}
	th := m.theme
	if w < components.MinWidth || h < components.MinHeight {
		return components.FitLines(th.Title.Render("stratbench")+" sweeps · terminal too small", w, h)
	}
	header := components.Fit(th.Title.Render("stratbench")+"  "+th.Accent.Render(fmt.Sprintf("sweeps (%d)", len(m.sweeps)))+
		th.Muted.Render(" · newest first · enter opens one in the sweep view"), w)
	hm := help.New()
	hm.Styles = components.HelpStyles(th)
	km := m.keys
	footer := components.Fit(hm.ShortHelpView([]key.Binding{km.Open, km.Up, km.Down, km.Top, km.Bottom, km.Quit}), w)
	body := components.Frame(th, "sweeps", m.list(th, w-2, h-4), w, h-2, true)
	return strings.Join([]string{header, body, footer}, "\n")
}

// list is the table of sweeps in w×h, the selected one marked: the
// columns of `stratbench sweeps`.
func (m *pickModel) list(th themes.Theme, w, h int) string {
	if len(m.sweeps) == 0 {
		return th.Muted.Render("no sweeps yet: stratbench sweep STRATEGY --grid NAME=V1,V2 runs one")
	}
	runs := make([]string, len(m.sweeps))
	idW, runsW := len("SWEEP"), len("RUNS")
	for i, d := range m.sweeps {
		runs[i] = units.Count(d.Counts.Done) + "/" + units.Count(d.Counts.Total)
		idW, runsW = max(idW, ansi.StringWidth(d.SweepID)), max(runsW, ansi.StringWidth(runs[i]))
	}
	row := func(id, status, strategy, started, runs, failed, best string) string {
		return fmt.Sprintf("%-*s  %-8s  %-18s  %-16s  %*s  %6s  %s", idW, id, status, components.Clip(strategy, 18), started, runsW, runs,
			failed, best)
	}
	lines := []string{th.Muted.Render("  " + row("SWEEP", "STATUS", "STRATEGY", "STARTED", "RUNS", "FAILED", "BEST"))}
	rows := max(h-1, 1)
	first := 0
	if m.cursor >= rows {
		first = m.cursor - rows + 1
	}
	for i := first; i < len(m.sweeps) && i < first+rows; i++ {
		d := m.sweeps[i]
		best := "—"
		if d.Best != nil {
			best = fmt.Sprintf("%s %s %s", d.Best.Params, d.Best.Metric, components.MetricText(d.Best.Value))
		}
		line := row(components.Sanitize(d.SweepID), string(d.Status), components.Sanitize(filepath.Base(d.Strategy.Path)),
			d.StartedAt.In(m.loc).Format("2006-01-02 15:04"), runs[i], units.Count(d.Counts.Failed), components.Sanitize(best))
		if i == m.cursor {
			lines = append(lines, th.Selected.Render(components.Fit("▸ "+line, w)))
			continue
		}
		lines = append(lines, "  "+th.Text.Render(line))
	}
	return strings.Join(lines, "\n")
}

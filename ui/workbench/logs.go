package workbench

import (
	"fmt"
	"path/filepath"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"stratbench/internal/units"
	"stratbench/job"
	"stratbench/themes"
	"stratbench/ui/components"
)

// logsPane is the log tail: follow, scroll, and search with n/N. Lines live in
// a bounded ring; the full log stays in the job's logs.jsonl.
type logsPane struct {
	ring      logRing
	dropped   int    // lines the engine did not deliver because the UI fell behind
	truncated string // the truncation notice, once output was cut
	dir       string // job folder, for pointing at logs.jsonl

	follow bool
	top    int  // sequence number of the first visible line when not following
	ended  bool // the job has ended: nothing more will come
	wrap   bool // long lines wrap instead of being cut
	left   int  // cells scrolled to the right, when not wrapping

	searching bool
	input     lineInput
	query     string
	match     int // sequence number of the current match, -1 for none
	matchNo   int // its position among the matches, from 1
	matches   int // matches held, counted at the last jump

	w, h int
}

func newLogsPane(ringLines int) *logsPane {
	return &logsPane{ring: newLogRing(ringLines), follow: true, match: -1}
}

// appendLines takes a batch of log lines.
func (p *logsPane) appendLines(ev job.LogLines) {
	p.ring.push(ev.Lines)
	p.dropped += ev.Dropped
	if p.truncated != "" {
		return
	}
	for _, l := range ev.Lines {
		if l.Stream == "system" && strings.Contains(asciiLower(l.Line), "truncat") {
			p.truncated = components.Sanitize(l.Line)
			break
		}
	}
}

// final takes the report's log summary, in case the notice itself was not
// among the lines delivered.
func (p *logsPane) final(info job.LogsInfo, limit int64) {
	p.ended = true
	if info.Truncated && p.truncated == "" {
		p.truncated = fmt.Sprintf("output truncated after %s; further output was discarded", units.Bytes(limit))
	}
}

// SetSize implements pane.
func (p *logsPane) SetSize(w, h int) { p.w, p.h = w, h }

// bodyHeight is the number of rows for log lines.
func (p *logsPane) bodyHeight() int {
	h := p.h - 1 // status line
	if p.truncated != "" {
		h--
	}
	return max(h, 1)
}

// visibleTop returns the sequence number of the first visible line.
func (p *logsPane) visibleTop() int {
	first, last := p.ring.first(), max(p.ring.total-p.bodyHeight(), p.ring.first())
	if p.follow {
		return last
	}
	return min(max(p.top, first), last)
}

// ShortHelp implements pane.
func (p *logsPane) ShortHelp(km keyMap) []key.Binding {
	if p.searching {
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "find")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		}
	}
	matches := key.NewBinding(key.WithKeys("n", "N"), key.WithHelp("n/N", "next/prev match"))
	side := key.NewBinding(key.WithKeys("left", "right"), key.WithHelp("←/→", "scroll sideways"))
	return []key.Binding{km.Search, matches, km.Follow, km.Wrap, side, km.Up}
}

// Update implements pane.
func (p *logsPane) Update(msg tea.Msg, km keyMap) tea.Cmd {
	if p.searching {
		p.updateSearch(msg)
		return nil
	}
	switch msg := msg.(type) {
	case scrollMsg:
		p.scrollBy(msg.lines)
	case tea.KeyPressMsg:
		page := max(p.bodyHeight()-1, 1)
		switch {
		case key.Matches(msg, km.Search):
			p.searching = true
			p.input = lineInput{}
		case key.Matches(msg, km.NextMatch):
			p.jump(+1)
		case key.Matches(msg, km.PrevMatch):
			p.jump(-1)
		case key.Matches(msg, km.Follow):
			p.setFollow(!p.follow)
		case key.Matches(msg, km.Wrap):
			p.wrap, p.left = !p.wrap, 0
		case key.Matches(msg, km.Left):
			p.left = max(p.left-max(p.w/2, 8), 0)
		case key.Matches(msg, km.Right):
			if !p.wrap {
				p.left += max(p.w/2, 8)
			}
		case key.Matches(msg, km.Bottom):
			p.setFollow(true)
		case key.Matches(msg, km.Top):
			p.follow, p.top = false, p.ring.first()
		case key.Matches(msg, km.Up):
			p.scrollBy(-1)
		case key.Matches(msg, km.Down):
			p.scrollBy(1)
		case key.Matches(msg, km.PageUp):
			p.scrollBy(-page)
		case key.Matches(msg, km.PageDown):
			p.scrollBy(page)
		}
	}
	return nil
}

// searchActive reports whether the search prompt takes the keyboard.
func (p *logsPane) searchActive() bool { return p.searching }

func (p *logsPane) updateSearch(msg tea.Msg) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "esc":
			p.searching = false
			return
		case "enter":
			p.searching = false
			p.query = p.input.String()
			p.match = p.visibleTop() - 1
			if p.query != "" {
				p.jump(+1)
			}
			return
		}
	}
	p.input.update(msg)
}

// setFollow turns following on, or off keeping the current view.
func (p *logsPane) setFollow(on bool) {
	if !on {
		p.top = p.visibleTop()
	}
	p.follow = on
}

// scrollBy scrolls by n lines; any scroll leaves follow mode, G returns to it.
func (p *logsPane) scrollBy(n int) {
	p.top = p.visibleTop() + n
	p.follow = false
	p.top = p.visibleTop()
}

// jump moves to the next (dir > 0) or previous match after the current one,
// wrapping around the lines held.
func (p *logsPane) jump(dir int) {
	if p.query == "" || p.ring.n == 0 {
		return
	}
	q := asciiLower(p.query)
	first, total := p.ring.first(), p.ring.total
	from := p.match
	if from < first-1 || from >= total {
		from = first - 1
	}
	found := -1
	for i := 1; i <= p.ring.n; i++ {
		seq := from + dir*i
		seq = first + ((seq-first)%p.ring.n+p.ring.n)%p.ring.n
		if l, _ := p.ring.at(seq); strings.Contains(asciiLower(components.Sanitize(l.Line)), q) {
			found = seq
			break
		}
	}
	p.match, p.matchNo, p.matches = found, 0, 0
	if found < 0 {
		return
	}
	for seq := first; seq < total; seq++ {
		if l, _ := p.ring.at(seq); strings.Contains(asciiLower(components.Sanitize(l.Line)), q) {
			p.matches++
			if seq <= found {
				p.matchNo++
			}
		}
	}
	p.follow = false
	p.top = found - p.bodyHeight()/2
	p.top = p.visibleTop()
}

// View implements pane.
func (p *logsPane) View(th themes.Theme) string {
	var out []string
	if p.truncated != "" {
		out = append(out, th.Warn.Render(themes.LevelWarn.Glyph()+" "+p.truncated))
	}
	body := p.bodyHeight()
	top := p.visibleTop()
	if p.ring.total == 0 {
		if p.ended {
			out = append(out, th.Muted.Render("no output: the strategy printed nothing"))
		} else {
			out = append(out, th.Muted.Render("no output yet"))
		}
		body--
	} else if top == p.ring.first() && top > 0 {
		out = append(out, th.Muted.Render(fmt.Sprintf("⋯ %s earlier lines: %s", units.Count(top), p.fullLogHint())))
		body--
	}
	q := asciiLower(p.query)
	end := min(top+body, p.ring.total)
	if p.wrap {
		rows, first := p.wrapped(th, top, body, q)
		out = append(out, rows...)
		top, end = first, first+len(rows)
		end = min(end, p.ring.total)
	} else {
		for seq := top; seq < end; seq++ {
			l, _ := p.ring.at(seq)
			out = append(out, p.line(th, l, q, seq == p.match))
		}
	}
	for len(out) < p.h-1 {
		out = append(out, "")
	}
	return strings.Join(append(out[:min(len(out), p.h-1)], p.status(th, top, end)), "\n")
}

// wrapped renders lines wrapped to the pane's width into at most body rows:
// the lines from top on, or when following the last lines that fit. It
// returns the rows and the sequence number of the first line shown.
func (p *logsPane) wrapped(th themes.Theme, top, body int, q string) ([]string, int) {
	render := func(seq int) []string {
		l, _ := p.ring.at(seq)
		return strings.Split(p.wrapLine(th, l, q, seq == p.match), "\n")
	}
	if !p.follow {
		var rows []string
		for seq := top; seq < p.ring.total && len(rows) < body; seq++ {
			rows = append(rows, render(seq)...)
		}
		return rows[:min(len(rows), body)], top
	}
	var rows []string
	first := p.ring.total
	for seq := p.ring.total - 1; seq >= p.ring.first() && len(rows) < body; seq-- {
		r := render(seq)
		if len(rows)+len(r) > body && len(rows) > 0 {
			break
		}
		rows = append(r, rows...)
		first = seq
	}
	if len(rows) > body {
		rows = rows[len(rows)-body:]
	}
	return rows, first
}

// wrapLine renders one log line wrapped at the pane's width; the rows after
// the first are indented under the text.
func (p *logsPane) wrapLine(th themes.Theme, l job.LogLine, q string, current bool) string {
	width := max(p.w-2, 1)
	text := components.Sanitize(l.Line)
	if ansi.StringWidth(text) <= width {
		return p.line(th, l, q, current)
	}
	parts := strings.Split(ansi.Hardwrap(text, width, true), "\n")
	rows := make([]string, len(parts))
	for i, part := range parts {
		ll := l
		ll.Line = part
		rows[i] = p.styled(th, ll, q, current && i == 0, i > 0)
	}
	return strings.Join(rows, "\n")
}

// fullLogHint says where the whole log is: the pane keeps the last lines
// only (defaultRingLines).
func (p *logsPane) fullLogHint() string {
	if p.dir == "" {
		return "the job's logs.jsonl has them"
	}
	return "stratbench logs " + filepath.Base(p.dir) + " prints them all"
}

// line renders one log line: a stream marker, then the text with search
// matches highlighted.
func (p *logsPane) line(th themes.Theme, l job.LogLine, q string, current bool) string {
	return p.styled(th, l, q, current, false)
}

// styled renders a line, or with cont a wrapped line's continuation, whose
// gutter is blank.
func (p *logsPane) styled(th themes.Theme, l job.LogLine, q string, current, cont bool) string {
	gutter, text := "  ", th.Text
	switch l.Stream {
	case "stderr":
		gutter = th.Warn.Render("!") + " "
	case "system":
		gutter, text = th.Accent.Render("»")+" ", th.Accent.UnsetBold()
	}
	if current {
		gutter = th.Match.Render("▶") + " "
	}
	if cont {
		gutter = "  "
	}
	s := components.Sanitize(l.Line)
	if p.left > 0 && !p.wrap {
		if ansi.StringWidth(s) > p.left {
			s = "…" + ansi.Cut(s, p.left+1, ansi.StringWidth(s))
		} else {
			s = ""
		}
	}
	s = ansi.Truncate(s, max(p.w-2, 0), "…")
	if q == "" {
		return gutter + text.Render(s)
	}
	var b strings.Builder
	lower := asciiLower(s)
	for {
		i := strings.Index(lower, q)
		if i < 0 {
			b.WriteString(text.Render(s))
			break
		}
		b.WriteString(text.Render(s[:i]))
		b.WriteString(th.Match.Render(s[i : i+len(q)]))
		s, lower = s[i+len(q):], lower[i+len(q):]
	}
	return gutter + b.String()
}

// status is the pane's last line: the search first (it is what the user is
// reading when there is one), then the follow state, the position and how
// many lines the pane holds, what the display dropped.
func (p *logsPane) status(th themes.Theme, top, end int) string {
	var parts []string
	held := ""
	if first := p.ring.first(); first > 0 {
		held = " in the last " + units.Count(p.ring.n) + " lines"
	}
	switch {
	case p.searching:
		parts = append(parts, th.Accent.Render("/")+p.input.String()+th.Selected.Render(" "))
	case p.query != "" && p.match >= 0:
		parts = append(parts, th.Accent.Render(fmt.Sprintf("/%s %d/%d%s", components.Sanitize(p.query), p.matchNo, p.matches, held)))
	case p.query != "":
		parts = append(parts, th.Fail.Render(fmt.Sprintf("/%s: no match%s", components.Sanitize(p.query), held)))
	}
	switch {
	case p.follow && p.ended:
		parts = append(parts, th.Muted.Render("■ the end of the log"))
	case p.follow:
		parts = append(parts, th.OK.Render("● following"))
	default:
		parts = append(parts, th.Warn.Render("‖ paused")+th.Muted.Render(" (F follows)"))
	}
	if n := p.ring.total; n > 0 {
		text := fmt.Sprintf("lines %s–%s of %s", units.Count(top+1), units.Count(end), units.Count(n))
		if held != "" {
			text += " (the last " + units.Count(p.ring.n) + " kept)"
		}
		parts = append(parts, th.Muted.Render(text))
	}
	switch {
	case p.wrap:
		parts = append(parts, th.Muted.Render("wrapped"))
	case p.left > 0:
		parts = append(parts, th.Muted.Render(fmt.Sprintf("→%d", p.left)))
	}
	if p.dropped > 0 {
		parts = append(parts, th.Warn.Render(fmt.Sprintf("⚠ %s lines not shown (display fell behind)", units.Count(p.dropped))))
	}
	return strings.Join(parts, th.Muted.Render(" · "))
}

// asciiLower lowercases ASCII letters only, so byte offsets into the result
// are offsets into s.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// lineInput is a one-line text prompt for the search.
type lineInput struct {
	value []rune
}

func (in *lineInput) String() string { return string(in.value) }

func (in *lineInput) update(msg tea.Msg) {
	switch msg := msg.(type) {
	case tea.PasteMsg:
		in.value = append(in.value, []rune(components.Sanitize(msg.Content))...)
	case tea.KeyPressMsg:
		switch msg.String() {
		case "backspace", "ctrl+h":
			if len(in.value) > 0 {
				in.value = in.value[:len(in.value)-1]
			}
		case "ctrl+u":
			in.value = nil
		case "space":
			in.value = append(in.value, ' ')
		default:
			if msg.Text != "" {
				in.value = append(in.value, []rune(components.Sanitize(msg.Text))...)
			}
		}
	}
}

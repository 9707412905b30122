package workbench

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"stratbench/contract"
	"stratbench/internal/units"
	"stratbench/job"
	"stratbench/themes"
	"stratbench/ui/components"
)

// slowestShown is how many of a hook's slowest calls the pane lists.
const slowestShown = 3

// hookRow is what the hooks pane knows about one hook.
type hookRow struct {
	stats   job.Stats
	limit   time.Duration
	recent  []time.Duration
	slowest []job.Call
}

// hooksPane shows per hook: call count, p50/p95/max against the hook's time
// limit, a sparkline of recent durations and the slowest calls.
type hooksPane struct {
	scrollPane
	rows   map[contract.Hook]*hookRow
	limits job.Limits
	// running is the call in flight that has run for a while, from the
	// latest progress; nil when none.
	running *job.RunningCall
}

func newHooksPane() *hooksPane {
	p := &hooksPane{rows: map[contract.Hook]*hookRow{}, limits: job.DefaultLimits()}
	p.scrollPane.lines = p.lines
	return p
}

// setLimits records the job's limits, for hooks that have no stats yet.
func (p *hooksPane) setLimits(l job.Limits) {
	p.limits = l
	for name, r := range p.rows {
		r.limit, _ = l.HookLimit(name)
	}
}

// declare adds rows for the hooks the strategy defines, before any call.
func (p *hooksPane) declare(hooks []contract.Hook) {
	for _, h := range hooks {
		p.row(h)
	}
}

// apply takes a live statistics snapshot.
func (p *hooksPane) apply(s job.HookStats) {
	r := p.row(s.Hook)
	r.stats = s.Stats
	if s.Limit > 0 {
		r.limit = s.Limit
	}
	r.recent = slices.Clone(s.Recent)
	r.slowest = slices.Clone(s.Slowest)
}

// final takes the report's statistics, which are complete; the live
// sparkline and slowest calls stay.
func (p *hooksPane) final(stats map[contract.Hook]job.Stats) {
	for name, s := range stats {
		if s.Count == 0 && p.rows[name] == nil {
			continue
		}
		p.row(name).stats = s
	}
}

func (p *hooksPane) row(name contract.Hook) *hookRow {
	r, ok := p.rows[name]
	if !ok {
		// A hook the limits do not know (a stored report written by
		// something else) has no limit: 0 shows as none.
		r = &hookRow{}
		r.limit, _ = p.limits.HookLimit(name)
		p.rows[name] = r
	}
	return r
}

// order returns the hook names in call order, unknown hooks last.
func (p *hooksPane) order() []contract.Hook {
	names := make([]contract.Hook, 0, len(p.rows))
	for n := range p.rows {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b contract.Hook) int {
		if d := a.Rank() - b.Rank(); d != 0 {
			return d
		}
		return strings.Compare(string(a), string(b))
	})
	return names
}

func (p *hooksPane) lines(th themes.Theme) []string {
	if len(p.rows) == 0 {
		return []string{th.Muted.Render("no hook calls yet")}
	}
	out := []string{th.Muted.Render(fmt.Sprintf("  %-12s %9s %8s %8s %8s %6s", "HOOK", "CALLS", "P50", "P95", "MAX", "LIMIT"))}
	if c := p.running; c != nil {
		out = append(out, runningCall(th, c))
	}
	for _, name := range p.order() {
		r := p.rows[name]
		out = append(out, p.summary(th, name, r))
		if n := r.stats.Failures; n > 0 {
			out = append(out, "  "+th.Fail.Render("failed calls: "+units.Count(n)))
		}
		if len(r.recent) > 0 {
			vals := make([]float64, len(r.recent))
			for i, d := range r.recent {
				vals[i] = float64(d)
			}
			out = append(out, "  "+th.Accent.UnsetBold().Render(components.Sparkline(vals, min(p.w-4, 64))))
		}
		for i, c := range r.slowest {
			if i == slowestShown {
				break
			}
			out = append(out, "  "+slowCall(th, c, i == 0))
		}
	}
	return out
}

// summary is a hook's row: count, percentiles, and max against the limit,
// with the level glyph of max against the limit (fail when a call failed).
func (p *hooksPane) summary(th themes.Theme, name contract.Hook, r *hookRow) string {
	s := r.stats
	level := components.LevelOf(s.MaxMS, float64(r.limit)/float64(time.Millisecond))
	if c := p.running; c != nil && c.Hook == name {
		level = max(level, runningLevel(c))
	}
	if s.Failures > 0 {
		level = themes.LevelFail
	}
	st := th.Style(level)
	p50, p95, maxMS := "—", "—", "—"
	if s.Count > 0 {
		p50, p95, maxMS = units.Millis(s.P50MS), units.Millis(s.P95MS), units.Millis(s.MaxMS)
	}
	line := st.Render(level.Glyph()) + " " + th.Text.Render(fmt.Sprintf("%-12s %9s %8s %8s ",
		name, units.Count(s.Count), p50, p95)) +
		st.Render(fmt.Sprintf("%8s", maxMS)) + th.Muted.Render(fmt.Sprintf(" %6s", fmtLimit(r.limit)))
	return line
}

// runningLevel is a running call's level: warn past half its limit, fail
// past four fifths.
func runningLevel(c *job.RunningCall) themes.Level {
	switch {
	case c.Limit > 0 && c.Elapsed*5 >= c.Limit*4:
		return themes.LevelFail
	case c.Limit > 0 && c.Elapsed*2 >= c.Limit:
		return themes.LevelWarn
	}
	return themes.LevelOK
}

// runningCall is the line of a call that has run for a while: "● on_data
// running 3.20s / 5s at event #81".
func runningCall(th themes.Theme, c *job.RunningCall) string {
	text := fmt.Sprintf("● %s running %s / %s", c.Hook, units.Duration(c.Elapsed.Round(100*time.Millisecond)), fmtLimit(c.Limit))
	if c.EventIndex >= 0 {
		text += " at event #" + units.Count(c.EventIndex)
	}
	return th.Style(runningLevel(c)).Render(text)
}

// slowCall is one line of the slowest-calls list.
func slowCall(th themes.Theme, c job.Call, first bool) string {
	label := "        "
	if first {
		label = "slowest "
	}
	where := "no event"
	if c.EventIndex >= 0 {
		where = fmt.Sprintf("event #%s at %s", units.Count(c.EventIndex), fmtTime(c.EventTime))
	}
	return th.Muted.Render(label) + fmt.Sprintf("%8s  ", units.Duration(c.Duration)) + th.Muted.Render(where)
}

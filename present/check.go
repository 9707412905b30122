package present

import (
	"fmt"
	"io"
	"stratbench/check"
	"stratbench/internal/termtext"
	"stratbench/internal/units"
	"strings"
	"time"
)

// dataSource names the data for the output.
func dataSource(paths []string) string {
	if len(paths) == 0 {
		return "bundled:synthetic"
	}
	return strings.Join(paths, ", ")
}

// CheckText is `stratbench check`'s text output: a line per check, and
// the event a check names under it. strategy and data are what it ran on
// (no data: the bundled sample).
func CheckText(strategy string, data []string, rep *check.Report, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "check %s on %s: %s events, %s (%s)\n\n", strategy, dataSource(data), units.Count(rep.Events),
		Counted(rep.Replays, "run", "runs"), units.Millis(float64(took.Milliseconds())))
	for _, r := range rep.Checks {
		mark := map[check.Status]string{check.Clean: "✓", check.Found: "✗", check.Skipped: "–"}[r.Status]
		fmt.Fprintf(&b, "%s %-12s %s\n", mark, r.Check, r.Summary)
		if f := r.Finding; f != nil {
			fmt.Fprintf(&b, "    event %s at %s (%s), hook %s\n", units.Count(f.Event), f.Time, f.Symbol, f.Hook)
			fmt.Fprintf(&b, "    the run:   %s\n", strings.Join(f.Run, "; "))
			if f.Failure != "" {
				fmt.Fprintf(&b, "    %s failed: %s\n", f.Against, f.Failure)
			} else {
				fmt.Fprintf(&b, "    %s: %s\n", f.Against, strings.Join(f.Replay, "; "))
			}
		}
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "    note: %s\n", n)
		}
	}
	return b.String()
}

// WriteCheck writes a check's report as text (CheckText) or as JSON (the
// report with the strategy, the data, the window and how long it took).
func WriteCheck(w io.Writer, format, strategy, window string, data []string, rep *check.Report, took time.Duration) error {
	if format == "json" {
		return WriteJSON(w, struct {
			Strategy   string `json:"strategy"`
			Data       string `json:"data"`
			Window     string `json:"window"`
			DurationMS int64  `json:"duration_ms"`
			*check.Report
		}{strategy, dataSource(data), window, took.Milliseconds(), rep})
	}
	_, err := io.WriteString(w, termtext.Text(CheckText(strategy, data, rep, took)))
	return err
}

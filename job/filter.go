package job

import (
	"path/filepath"
	"strings"
)

// Filter is which jobs a listing (`stratbench jobs`) shows: by default
// the jobs of their own, not the runs of sweeps.
type Filter struct {
	Status   Status // only jobs of this status; "" for all
	Strategy string // only jobs whose strategy file name contains this; "" for all
	SweepID  string // only this sweep's runs; "" for none of a sweep's (or all, with AllSweeps)
	// AllSweeps lists the runs of sweeps too (with SweepID: of that one).
	AllSweeps bool
}

// Apply returns the reports f lets through, in their order, and how many
// sweep runs it left out only for being sweeps' (the default listing's:
// 0 with SweepID or AllSweeps), which a listing says it hides.
func (f Filter) Apply(reports []*Report) (shown []*Report, hidden int) {
	if f.AllSweeps && f.SweepID == "" {
		return f.match(reports), 0
	}
	mine := reports[:0:0] // never nil: an empty listing is []
	for _, r := range reports {
		if f.SweepID == "" && r.Sweep == nil || f.SweepID != "" && r.Sweep != nil && r.Sweep.ID == f.SweepID {
			mine = append(mine, r)
		}
	}
	shown = f.match(mine)
	if f.SweepID == "" && !f.AllSweeps {
		hidden = len(f.match(reports)) - len(shown)
	}
	return shown, hidden
}

// match keeps the reports of f's status and strategy.
func (f Filter) match(reports []*Report) []*Report {
	if f.Status == "" && f.Strategy == "" {
		return reports
	}
	var out []*Report
	for _, r := range reports {
		if f.Status != "" && r.Status != f.Status {
			continue
		}
		if f.Strategy != "" && !strings.Contains(filepath.Base(r.Strategy.Path), f.Strategy) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// SweepIDs are the sweeps that reports are runs of, each once, in the
// order of their first run.
func SweepIDs(reports []*Report) []string {
	var ids []string
	seen := map[string]bool{}
	for _, r := range reports {
		if r.Sweep != nil && !seen[r.Sweep.ID] {
			seen[r.Sweep.ID] = true
			ids = append(ids, r.Sweep.ID)
		}
	}
	return ids
}

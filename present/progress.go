package present

import (
	"fmt"
	"io"
	"time"

	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/job"
)

// progressEvery bounds how often the progress line is redrawn.
const progressEvery = 200 * time.Millisecond

// FollowProgress consumes a job's events until the stream ends. When w is
// not nil (stderr is a terminal) it keeps one line there up to date with
// the bars done, bars/s and ETA, and clears it at the end.
func FollowProgress(events <-chan job.Event, w io.Writer) {
	var last time.Time
	shown := false
	for e := range events {
		p, ok := e.(job.Progress)
		if !ok || w == nil {
			continue
		}
		if now := time.Now(); now.Sub(last) >= progressEvery {
			last = now
			fmt.Fprintf(w, "\r\033[K%s", progressLine(p))
			shown = true
		}
	}
	if shown {
		fmt.Fprint(w, "\r\033[K")
	}
}

// progressLine is the progress as the workbench's header shows it.
func progressLine(p job.Progress) string {
	s := "running: "
	if p.Total > 0 {
		s += fmt.Sprintf("%.0f%%  ", 100*float64(p.Done)/float64(p.Total))
	}
	s += fmt.Sprintf("%s/%s bars", units.Count(p.Done), units.Count(p.Total))
	if p.BarsPerSec > 0 {
		s += " · " + units.Count(int(p.BarsPerSec+0.5)) + " bars/s"
	}
	if eta := words.ETA(p); eta != "" {
		s += " · ETA " + eta
	}
	return s
}

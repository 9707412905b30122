package present

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"stratbench/job"
)

func TestFollowShowsProgressAndClearsIt(t *testing.T) {
	events := make(chan job.Event, 3)
	events <- job.Progress{JobID: "j", Done: 500_000, Total: 1_000_000, BarsPerSec: 250_000, ETA: 2 * time.Second}
	events <- job.LogLines{JobID: "j"}
	events <- job.Finished{JobID: "j"}
	close(events)
	var out bytes.Buffer
	FollowProgress(events, &out)
	got := out.String()
	// The workbench's words: percent, bars done, bars/s, the ETA as a clock.
	if !strings.Contains(got, "running: 50%  500,000/1,000,000 bars · 250,000 bars/s · ETA 0:02") || !strings.HasSuffix(got, "\r\033[K") {
		t.Fatalf("progress output %q", got)
	}
}

func TestFollowWithoutTerminalPrintsNothing(t *testing.T) {
	events := make(chan job.Event, 1)
	events <- job.Progress{JobID: "j", Done: 1, Total: 2}
	close(events)
	FollowProgress(events, nil)
	if len(events) != 0 {
		t.Fatalf("%d events left undelivered: the job's publisher would block", len(events))
	}
}

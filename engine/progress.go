package engine

import (
	"time"

	"stratbench/contract"
	"stratbench/job"
)

// progressInterval bounds how often progress and hook statistics are
// published: a run that yields at every order must not spend its time
// computing snapshots.
const progressInterval = 50 * time.Millisecond

// progressMeter publishes a job's progress and its hooks' statistics on the
// job's event stream. Its fields are set once and the publisher is safe for
// concurrent use, so the worker's goroutine (after each answer) and the
// watchdog's (while a batch runs) publish through it without sharing
// anything else: the worker publishes snapshots of its own statistics, the
// watchdog only a count of bars.
type progressMeter struct {
	pub   *publisher
	job   string
	total int // events the job replays
	start time.Time
}

// progress publishes that done bars have been served.
func (m progressMeter) progress(done int, now time.Time) { m.progressRunning(done, now, nil) }

// progressRunning publishes that done bars have been served while the call
// running has run for a while.
func (m progressMeter) progressRunning(done int, now time.Time, running *job.RunningCall) {
	if m.pub == nil {
		return
	}
	pr := job.Progress{JobID: m.job, Done: done, Total: m.total, Running: running}
	if secs := now.Sub(m.start).Seconds(); secs > 0 && done > 0 {
		pr.BarsPerSec = float64(done) / secs
		if m.total > done {
			pr.ETA = time.Duration(float64(m.total-done) / pr.BarsPerSec * float64(time.Second))
		}
	}
	m.pub.setProgress(pr)
}

// hookTable is the statistics of one worker's hooks. It belongs to the
// worker's goroutine; what others see of it are the snapshots it publishes.
type hookTable struct {
	stats  map[contract.Hook]*hookStats
	limits job.Limits
	meter  progressMeter
	bars   int       // bars whose on_data returned
	last   time.Time // the last publication
}

func newHookTable(limits job.Limits, meter progressMeter) hookTable {
	t := hookTable{stats: map[contract.Hook]*hookStats{}, limits: limits, meter: meter}
	for _, h := range contract.Hooks() {
		t.stats[h] = &hookStats{}
	}
	return t
}

// add records one completed call of hook.
func (t *hookTable) add(hook contract.Hook, ns uint64, event int, at int64) {
	if s := t.stats[hook]; s != nil {
		s.add(ns, event, at)
	}
}

// untimed counts a call of hook that ran but whose duration was lost with
// a killed worker.
func (t *hookTable) untimed(hook contract.Hook) {
	if s := t.stats[hook]; s != nil {
		s.untimed++
	}
}

// failed counts a failed call of hook (startup has no statistics).
func (t *hookTable) failed(hook contract.Hook) {
	if s := t.stats[hook]; s != nil {
		s.failures++
	}
}

// yielded takes in that a request served bars more bars, and publishes at
// most every progressInterval.
func (t *hookTable) yielded(bars int, now time.Time) {
	t.bars += bars
	if now.Sub(t.last) >= progressInterval {
		t.publish(now)
	}
}

// publish publishes the progress and a snapshot of every hook that ran.
func (t *hookTable) publish(now time.Time) {
	t.last = now
	t.meter.progress(t.bars, now)
	if t.meter.pub == nil {
		return
	}
	for _, hook := range contract.Hooks() {
		if s := t.stats[hook]; s.count > 0 || s.untimed > 0 || s.failures > 0 {
			limit, _ := t.limits.HookLimit(hook) // a hook of contract.Hooks: known
			t.meter.pub.setStats(s.snapshot(t.meter.job, hook, limit))
		}
	}
}

// report returns the report's statistics of every hook.
func (t *hookTable) report() map[contract.Hook]job.Stats {
	out := make(map[contract.Hook]job.Stats, len(t.stats))
	for h, s := range t.stats {
		out[h] = s.report()
	}
	return out
}

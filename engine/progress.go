package engine

import (
	"time"

	"stratbench/contract"
)

// progressTracker turns yields into Progress and HookStats events, at most
// every progressInterval: a run that yields at every order must not spend its
// time computing snapshots.
type progressTracker struct {
	j       *Job
	w       *worker
	total   int
	done    int // bars of completed batches
	partial int // bars done of the batch in flight
	start   time.Time
	last    time.Time
}

const progressInterval = 50 * time.Millisecond

func newProgressTracker(j *Job, total int) *progressTracker {
	return &progressTracker{j: j, total: total, start: time.Now()}
}

func (p *progressTracker) yielded(y contract.Yield) {
	p.done += y.Bars
	p.partial = 0
	if now := time.Now(); now.Sub(p.last) >= progressInterval {
		p.publish(now)
	}
}

// running reports the bars done so far of the batch in flight.
func (p *progressTracker) running(bars int) {
	p.partial = bars
	p.publish(time.Now())
}

func (p *progressTracker) flush() { p.publish(time.Now()) }

func (p *progressTracker) publish(now time.Time) {
	p.last = now
	done := p.done + p.partial
	pr := Progress{JobID: p.j.id, Done: done, Total: p.total}
	if secs := now.Sub(p.start).Seconds(); secs > 0 && done > 0 {
		pr.BarsPerSec = float64(done) / secs
		if p.total > done {
			pr.ETA = time.Duration(float64(p.total-done) / pr.BarsPerSec * float64(time.Second))
		}
	}
	p.j.pub.setProgress(pr)
	if p.w == nil {
		return
	}
	for _, hook := range contract.Hooks() {
		if s := p.w.stats[hook]; s.count > 0 || s.untimed > 0 || s.failures > 0 {
			limit, _ := p.j.cfg.Limits.HookLimit(hook)
			p.j.pub.setStats(s.snapshot(p.j.id, hook, limit))
		}
	}
}

package engine

import (
	"context"
	"sync"

	"stratbench/contract"
	"stratbench/job"
)

// publisher decouples the job from its consumer: producers never block, and
// a consumer that falls behind gets coalesced state (the newest sample,
// progress and hook statistics) and a bounded tail of log lines instead of an
// unbounded queue. Milestones (JobStarted, WorkerReady, Finished) are never
// dropped and keep their order relative to everything else.
type publisher struct {
	job string
	out chan job.Event

	mu         sync.Mutex
	queue      []job.Event // milestones and flushed batches, in order
	logs       []job.LogLine
	dropped    int
	sample     *job.ResourceSample
	progress   *job.Progress
	stats      map[contract.Hook]job.HookStats
	statsOrder []contract.Hook
	closed     bool
	wake       chan struct{}
	deliver    sync.Once // starts run, at the first subscription
}

// maxPendingLogs bounds the log lines held for a slow consumer.
const maxPendingLogs = 4096

func newPublisher(jobID string) *publisher {
	return &publisher{job: jobID, out: make(chan job.Event, 16), wake: make(chan struct{}, 1), stats: map[contract.Hook]job.HookStats{}}
}

func (p *publisher) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// milestone queues an event that must be delivered.
func (p *publisher) milestone(e job.Event) {
	p.mu.Lock()
	p.flushLocked()
	p.queue = append(p.queue, e)
	p.mu.Unlock()
	p.signal()
}

// flushLocked moves the coalesced state into the queue so that it is
// delivered before whatever is queued next.
func (p *publisher) flushLocked() {
	if len(p.logs) > 0 || p.dropped > 0 {
		p.queue = append(p.queue, job.LogLines{JobID: p.job, Lines: p.logs, Dropped: p.dropped})
		p.logs, p.dropped = nil, 0
	}
	for _, h := range p.statsOrder {
		p.queue = append(p.queue, p.stats[h])
	}
	p.statsOrder = p.statsOrder[:0]
	clear(p.stats)
	if p.sample != nil {
		p.queue = append(p.queue, *p.sample)
		p.sample = nil
	}
	if p.progress != nil {
		p.queue = append(p.queue, *p.progress)
		p.progress = nil
	}
}

func (p *publisher) log(l job.LogLine) {
	p.mu.Lock()
	if len(p.logs) >= maxPendingLogs {
		// Keep the newest lines: a consumer that fell behind shows the tail.
		n := copy(p.logs, p.logs[len(p.logs)/2:])
		p.dropped += len(p.logs) - n
		p.logs = p.logs[:n]
	}
	p.logs = append(p.logs, l)
	p.mu.Unlock()
	p.signal()
}

func (p *publisher) setSample(s job.ResourceSample) {
	p.mu.Lock()
	p.sample = &s
	p.mu.Unlock()
	p.signal()
}

func (p *publisher) setProgress(pr job.Progress) {
	p.mu.Lock()
	p.progress = &pr
	p.mu.Unlock()
	p.signal()
}

func (p *publisher) setStats(s job.HookStats) {
	p.mu.Lock()
	if _, ok := p.stats[s.Hook]; !ok {
		p.statsOrder = append(p.statsOrder, s.Hook)
	}
	p.stats[s.Hook] = s
	p.mu.Unlock()
	p.signal()
}

// close queues the final event; run returns after delivering it.
func (p *publisher) close(final job.Event) {
	p.mu.Lock()
	p.flushLocked()
	p.queue = append(p.queue, final)
	p.closed = true
	p.mu.Unlock()
	p.signal()
}

// subscribe returns the stream, starting its delivery at the first call:
// until then the events wait, coalesced.
func (p *publisher) subscribe(ctx context.Context) <-chan job.Event {
	p.deliver.Do(func() { go p.run(ctx) })
	return p.out
}

// run delivers events until the final one was delivered, or until ctx is
// done (the consumer is gone), then closes out.
func (p *publisher) run(ctx context.Context) {
	defer close(p.out)
	for {
		p.mu.Lock()
		p.flushLocked()
		batch, closed := p.queue, p.closed
		p.queue = nil
		p.mu.Unlock()
		for _, e := range batch {
			select {
			case p.out <- e:
			case <-ctx.Done():
				return
			}
		}
		if closed {
			p.mu.Lock()
			empty := len(p.queue) == 0
			p.mu.Unlock()
			if empty {
				return
			}
			continue
		}
		select {
		case <-p.wake:
		case <-ctx.Done():
			return
		}
	}
}

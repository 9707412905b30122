package engine

import (
	"math/bits"
	"sort"
	"time"

	"stratbench/contract"
	"stratbench/job"
)

// hookStats accumulates one hook's call durations in bounded memory: a
// log-linear histogram (relative error under 1.6 %) for the percentiles, the
// exact total and maximum, the most recent durations and the slowest calls.
type hookStats struct {
	count    int // timed calls
	untimed  int // calls that ran but whose duration was lost with a killed worker
	failures int
	total    uint64
	max      uint64
	// buckets is the histogram (histBuckets counts, 15 kB), made at the
	// first call: a strategy that places no order never calls
	// on_execution, and its histogram was 15 kB of garbage a run.
	buckets []uint32
	recent  [recentCalls]uint64
	slowest []job.Call
}

const (
	histSub     = 64 // sub-buckets per power of two
	histLinear  = 2 * histSub
	histBuckets = histLinear + (64-7)*histSub
	recentCalls = 64
	slowCalls   = 5
)

func bucketOf(ns uint64) int {
	if ns < histLinear {
		return int(ns)
	}
	e := bits.Len64(ns) // ≥ 8
	sub := int(ns>>(e-7)) & (histSub - 1)
	return histLinear + (e-8)*histSub + sub
}

// bucketMid returns a representative value of bucket b.
func bucketMid(b int) uint64 {
	if b < histLinear {
		return uint64(b)
	}
	e := (b-histLinear)/histSub + 8
	sub := uint64((b - histLinear) % histSub)
	lo := (histSub + sub) << (e - 7)
	return lo + (uint64(1)<<(e-7))/2
}

// add records one completed call. event is -1 for calls that belong to no
// event; at is the event's time in unix nanoseconds.
func (s *hookStats) add(ns uint64, event int, at int64) {
	s.recent[s.count%recentCalls] = ns
	s.count++
	s.total += ns
	if ns > s.max {
		s.max = ns
	}
	if s.buckets == nil {
		s.buckets = make([]uint32, histBuckets)
	}
	if b := &s.buckets[bucketOf(ns)]; *b < ^uint32(0) {
		*b++
	}
	d := time.Duration(ns)
	if len(s.slowest) < slowCalls || d > s.slowest[len(s.slowest)-1].Duration {
		c := job.Call{Duration: d, EventIndex: event}
		if event >= 0 {
			c.EventTime = time.Unix(0, at).UTC()
		}
		i := sort.Search(len(s.slowest), func(i int) bool { return s.slowest[i].Duration < d })
		if len(s.slowest) < slowCalls {
			s.slowest = append(s.slowest, job.Call{})
		}
		copy(s.slowest[i+1:], s.slowest[i:])
		s.slowest[i] = c
	}
}

// quantile returns the nearest-rank q-quantile in nanoseconds.
func (s *hookStats) quantile(q float64) uint64 {
	if s.count == 0 {
		return 0
	}
	rank := uint64(q*float64(s.count) + 0.999999)
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for b, n := range s.buckets {
		seen += uint64(n)
		if seen >= rank {
			return min(bucketMid(b), s.max)
		}
	}
	return s.max
}

func ms(ns uint64) float64 { return float64(ns) / 1e6 }

func (s *hookStats) report() job.Stats {
	return job.Stats{
		Count:    s.count + s.untimed,
		Failures: s.failures,
		TotalMS:  ms(s.total),
		P50MS:    ms(s.quantile(0.50)),
		P95MS:    ms(s.quantile(0.95)),
		MaxMS:    ms(s.max),
	}
}

// snapshot returns the event form of the statistics.
func (s *hookStats) snapshot(jobID string, hook contract.Hook, limit time.Duration) job.HookStats {
	n := min(s.count, recentCalls)
	recent := make([]time.Duration, n)
	for i := range recent {
		recent[i] = time.Duration(s.recent[(s.count-n+i)%recentCalls])
	}
	return job.HookStats{
		JobID:   jobID,
		Hook:    hook,
		Stats:   s.report(),
		Limit:   limit,
		Recent:  recent,
		Slowest: append([]job.Call(nil), s.slowest...),
	}
}

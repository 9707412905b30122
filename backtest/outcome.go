package backtest

import (
	"bytes"
	"context"
	"math"
	"strconv"
	"time"

	"stratbench/contract"
)

// displayPoints is the size of the downsampled equity curve for the TUI.
const displayPoints = contract.DisplayPoints

// Outcome summarises the replay: metrics, the order-list hash and a
// downsampled equity curve (the record files were streamed during Drive).
// It may be called after a failed or stopped Drive, and covers the events
// replayed until then.
func (d *Driver) Outcome() contract.Outcome {
	if d.outcomeDone != nil {
		return *d.outcomeDone
	}
	out := contract.Outcome{
		Metrics:    d.metrics(),
		OrdersHash: d.ordersHash(),
		DataHash:   d.dataHash(),
	}
	out.Symbols = d.symbolFigures()
	if d.marked > 0 {
		out.Equity = lttb(d.display.values(), displayPoints)
	}
	d.outcomeDone = &out
	return out
}

// dataHash is the data's digest (data.Set.Digest): what a replay read
// was hashed as it streamed, and the rest is read now, so that it covers
// the whole replay's data also when the replay ended early. Data that
// cannot be read any more gets a hash no readable data has.
func (d *Driver) dataHash() string {
	h, err := d.set.Digest(context.Background())
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return h
}

// displayBuckets bounds the equity kept for the display curve.
const displayBuckets = 4096

// displayCurve is a bounded sketch of the per-event equity, kept as the
// replay goes: up to displayBuckets buckets of consecutive events, each with
// its lowest and highest value. When the buckets are full, neighbours merge
// and each bucket covers twice as many events. With at most displayBuckets
// events it holds every value; lttb then makes the display curve from it,
// and peaks and troughs survive both steps.
type displayCurve struct {
	buckets []extremes
	cur     extremes // the bucket being filled
	width   int      // events per bucket
	events  int
}

// extremes are the lowest and highest values of a bucket and where they are.
type extremes struct {
	lo, hi     float64
	loAt, hiAt int
	n          int
}

func (e *extremes) merge(o extremes) {
	if o.n == 0 {
		return
	}
	if e.n == 0 {
		*e = o
		return
	}
	if o.lo < e.lo {
		e.lo, e.loAt = o.lo, o.loAt
	}
	if o.hi > e.hi {
		e.hi, e.hiAt = o.hi, o.hiAt
	}
	e.n += o.n
}

// newDisplayCurve returns the sketch of a replay of events events, its
// buckets allocated once: one per event up to displayBuckets (growing
// them by appending allocated about three times as much, a sweep's runs
// one after another).
func newDisplayCurve(events int) displayCurve {
	return displayCurve{buckets: make([]extremes, 0, min(max(events, 0), displayBuckets))}
}

func (c *displayCurve) add(v float64) {
	if c.width == 0 {
		c.width = 1
	}
	c.cur.merge(extremes{lo: v, hi: v, loAt: c.events, hiAt: c.events, n: 1})
	c.events++
	if c.cur.n < c.width {
		return
	}
	if len(c.buckets) == displayBuckets {
		for i := 0; i < len(c.buckets)/2; i++ {
			b := c.buckets[2*i]
			b.merge(c.buckets[2*i+1])
			c.buckets[i] = b
		}
		c.buckets = c.buckets[:len(c.buckets)/2]
		c.width *= 2
		if c.cur.n < c.width {
			return
		}
	}
	c.buckets = append(c.buckets, c.cur)
	c.cur = extremes{}
}

// values returns the sketch in event order: each bucket's extremes, in the
// order they happened.
func (c *displayCurve) values() []float64 {
	out := make([]float64, 0, 2*len(c.buckets)+2)
	for i := 0; i <= len(c.buckets); i++ {
		b := c.cur
		if i < len(c.buckets) {
			b = c.buckets[i]
		}
		switch {
		case b.n == 0:
		case b.loAt == b.hiAt:
			out = append(out, b.lo)
		case b.loAt < b.hiAt:
			out = append(out, b.lo, b.hi)
		default:
			out = append(out, b.hi, b.lo)
		}
	}
	return out
}

// lttb downsamples ys (at evenly spaced x) to at most n points with the
// largest-triangle-three-buckets algorithm, which keeps peaks and troughs.
func lttb(ys []float64, n int) []float64 {
	if len(ys) <= n || n < 3 {
		return append([]float64(nil), ys...)
	}
	out := make([]float64, 0, n)
	out = append(out, ys[0])
	bucket := float64(len(ys)-2) / float64(n-2)
	a := 0
	for i := 0; i < n-2; i++ {
		lo := int(float64(i)*bucket) + 1
		hi := int(float64(i+1)*bucket) + 1
		// Average of the next bucket (or the last point).
		nlo, nhi := hi, min(int(float64(i+2)*bucket)+1, len(ys))
		if i == n-3 {
			nlo, nhi = len(ys)-1, len(ys)
		}
		var ax, ay float64
		for j := nlo; j < nhi; j++ {
			ax += float64(j)
			ay += ys[j]
		}
		ax /= float64(nhi - nlo)
		ay /= float64(nhi - nlo)
		best, bestArea := lo, -1.0
		for j := lo; j < hi; j++ {
			area := math.Abs((float64(a)-ax)*(ys[j]-ys[a]) - (float64(a)-float64(j))*(ay-ys[a]))
			if area > bestArea {
				best, bestArea = j, area
			}
		}
		out = append(out, ys[best])
		a = best
	}
	return append(out, ys[len(ys)-1])
}

// timeText formats unix nanoseconds as time.RFC3339Nano in UTC, the way
// time.Time.AppendFormat does, but keeps the text of the current day so that
// consecutive bars of one day cost a few digit appends.
type timeText struct {
	day    int64  // unix day of prefix
	prefix []byte // "2006-01-02T"
	hasDay bool
}

func (t *timeText) append(buf []byte, ns int64) []byte {
	const nsPerDay = 24 * 60 * 60 * 1e9
	day := ns / nsPerDay
	if ns%nsPerDay < 0 {
		day--
	}
	if !t.hasDay || day != t.day {
		t.day, t.hasDay = day, true
		t.prefix = time.Unix(0, day*nsPerDay).UTC().AppendFormat(t.prefix[:0], "2006-01-02T")
	}
	rest := ns - day*nsPerDay
	secs, frac := rest/1e9, rest%1e9
	buf = append(buf, t.prefix...)
	buf = append2(buf, secs/3600)
	buf = append(buf, ':')
	buf = append2(buf, secs/60%60)
	buf = append(buf, ':')
	buf = append2(buf, secs%60)
	if frac != 0 {
		digits := strconv.AppendInt(nil, 1e9+frac, 10)[1:] // nine digits, zero padded
		buf = append(buf, '.')
		buf = append(buf, bytes.TrimRight(digits, "0")...)
	}
	return append(buf, 'Z')
}

func append2(buf []byte, v int64) []byte { return append(buf, byte('0'+v/10), byte('0'+v%10)) }

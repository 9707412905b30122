package workbench

import "stratbench/job"

// defaultRingLines is how many log lines the UI keeps for display; the full
// log is in the job's logs.jsonl.
const defaultRingLines = 10_000

// logRing keeps the most recent log lines. Every line pushed gets a sequence
// number (0 for the first line of the job), so positions stay meaningful
// while old lines fall out.
type logRing struct {
	buf   []job.LogLine
	start int // index in buf of the oldest line
	n     int // lines held
	total int // lines ever pushed: the sequence number of the next line
}

func newLogRing(capacity int) logRing {
	return logRing{buf: make([]job.LogLine, max(capacity, 1))}
}

// push appends lines, dropping the oldest beyond the capacity. Only the
// lines that can survive are copied, so a huge batch costs no more than a
// full ring.
func (r *logRing) push(lines []job.LogLine) {
	if c := len(r.buf); len(lines) >= c {
		copy(r.buf, lines[len(lines)-c:])
		r.start, r.n = 0, c
		r.total += len(lines)
		return
	}
	for _, l := range lines {
		r.add(l)
	}
}

// add appends one line.
func (r *logRing) add(l job.LogLine) {
	c := len(r.buf)
	r.buf[(r.start+r.n)%c] = l
	r.total++
	if r.n < c {
		r.n++
	} else {
		r.start = (r.start + 1) % c
	}
}

// first returns the sequence number of the oldest line held.
func (r *logRing) first() int { return r.total - r.n }

// at returns the line with sequence number seq, if it is still held.
func (r *logRing) at(seq int) (job.LogLine, bool) {
	if seq < r.first() || seq >= r.total {
		return job.LogLine{}, false
	}
	return r.buf[(r.start+seq-r.first())%len(r.buf)], true
}

package data

import (
	"context"
)

// Read-ahead of a streamed set: a goroutine merges the files' bars into
// chunks while the replay runs (the strategy's process works on one core,
// the reading on the other), at most aheadChunks chunks ahead.
const (
	chunkBars   = 8192 // about 420 KiB of columns
	aheadChunks = 4
)

// Stream replays a set's bars, in order, through a sliding window: a
// driver asks for the bars up to an event with Fill, reads them by event
// index (event i is row i-first of what Fill returns), and says with
// Release which events it no longer needs. Only the events from the
// oldest not released to the furthest filled are held, so a stream's
// memory is bounded by how far ahead the driver looks, whatever the size
// of the data. A stream of a resident set holds nothing of its own; a
// stream of a streamed set reads ahead in a goroutine of its own, which
// Close stops.
//
// A Stream is not safe for concurrent use.
type Stream struct {
	set     *Set
	ctx     context.Context
	buf     Bars // events [base, base+buf.Len())
	base    int
	release int   // events before it are no longer needed
	err     error // the error that ended the stream early, returned again
	ahead   *readAhead
}

// readAhead is the goroutine that merges a streamed set's bars ahead of
// the replay, and the channels it hands them over on.
type readAhead struct {
	chunks chan *chunk // merged bars, in order; closed after the last
	free   chan *chunk // chunks the stream is done with, for reuse
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine has returned
}

// chunk is bars merged ahead, and what ended the merge after them.
type chunk struct {
	bars Bars
	err  error
	last bool // the merge is over after these bars
}

// Stream starts a replay of the set's bars. ctx bounds the reading: once
// it is done, Fill returns its error. The stream must be closed. The first
// stream of a set whose streams need more memory than its stream budget
// spills them first (see spill.go): its error is then a problem with the
// data (an *Error, met while spilling), or ctx's.
func (s *Set) Stream(ctx context.Context) (*Stream, error) {
	st := &Stream{set: s, ctx: ctx}
	if s.resident {
		st.buf = s.bars
		return st, nil
	}
	runs := s.memRuns()
	if s.need() > s.streamBudget {
		spilled, err := s.spillRuns(ctx)
		if err != nil {
			return nil, err
		}
		runs = append(runs, spilled...)
	} else {
		for _, sp := range s.streamSpecs() {
			runs = append(runs, sp.open())
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	ra := &readAhead{
		chunks: make(chan *chunk, aheadChunks),
		free:   make(chan *chunk, aheadChunks+2),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	st.ahead = ra
	go ra.run(ctx, s, newMerger(runs, len(s.symbols)))
	return st, nil
}

// run merges the bars into chunks until the runs are exhausted, an error
// ends the merge, or ctx is done.
func (ra *readAhead) run(ctx context.Context, s *Set, m *merger) {
	defer close(ra.done)
	defer close(ra.chunks)
	defer m.close()
	var read int64
	for {
		var c *chunk
		select {
		case c = <-ra.free:
			c.bars, c.err, c.last = c.bars.truncate(0), nil, false
		default:
			c = &chunk{bars: makeBars(chunkBars)}
		}
		if err := ctx.Err(); err != nil {
			c.err, c.last = err, true
		} else {
			c.bars, c.err = m.fill(c.bars, chunkBars)
			read += int64(c.bars.Len())
			switch {
			case c.err != nil:
				c.last = true
			case c.bars.Len() == 0:
				c.last = true
				c.err = s.finished(read)
			}
		}
		select {
		case ra.chunks <- c:
		case <-ctx.Done():
			return
		}
		if c.last {
			return
		}
	}
}

// finished checks a merge that produced read bars and ended: every bar the
// scan counted came out, and no streamed file changed.
func (s *Set) finished(read int64) error {
	if read != s.info.Events {
		return &Error{File: s.info.Source, Msg: "the data changed while it was being read: " +
			itoa64(read) + " bars in the window, " + itoa64(s.info.Events) + " when it was opened"}
	}
	for _, src := range s.srcs {
		if src.dec == nil {
			if err := src.unchanged(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Events returns the number of events the stream replays (Info.Events).
func (st *Stream) Events() int { return int(st.set.info.Events) }

// Fill makes events up to end (exclusive) available, or up to the last
// event when there are fewer, and returns the bars held: event first is
// row 0. They stay valid until the next call to Fill. It may return more
// than asked for.
//
// When the data cannot be read up to end (a bad bar, a file that changed
// or cannot be read, ctx done), Fill returns the bars it could order
// before the problem together with the error: *Error for a problem with
// the data. A driver may replay those bars before it fails, or fail at
// once. Later calls return the same error once they reach it.
func (st *Stream) Fill(end int) (bars Bars, first int, err error) {
	if st.ahead != nil && st.err == nil && end > st.base+st.buf.Len() {
		st.compact()
		for st.base+st.buf.Len() < end && st.ahead != nil {
			c, ok := <-st.ahead.chunks
			if !ok { // ctx is done, and the goroutine returned
				st.err = st.ctx.Err()
				st.stop()
				break
			}
			if st.buf.Time == nil {
				st.buf = makeBars(max(2*chunkBars, end-st.base))
			}
			st.buf = appendBars(st.buf, c.bars, 0, c.bars.Len())
			last, err := c.last, c.err
			select {
			case st.ahead.free <- c:
			default:
			}
			if last {
				st.err = err
				st.stop()
			}
		}
	}
	if st.err != nil && end > st.base+st.buf.Len() {
		return st.buf, st.base, st.err
	}
	return st.buf, st.base, nil
}

// compact drops the released events, moving the rest to the front, once
// they are at least half of what is held: each bar moves at most once on
// average, and the buffer holds at most about twice the lookahead.
func (st *Stream) compact() {
	drop := st.release - st.base
	if drop <= 0 || drop < st.buf.Len()/2 {
		return
	}
	n := copy(st.buf.Time, st.buf.Time[drop:])
	copy(st.buf.Symbol, st.buf.Symbol[drop:])
	copy(st.buf.Open, st.buf.Open[drop:])
	copy(st.buf.High, st.buf.High[drop:])
	copy(st.buf.Low, st.buf.Low[drop:])
	copy(st.buf.Close, st.buf.Close[drop:])
	copy(st.buf.Volume, st.buf.Volume[drop:])
	st.buf = st.buf.truncate(n)
	st.base = st.release
}

// Release tells the stream that the events before e will not be read
// again: Fill may reuse their memory.
func (st *Stream) Release(e int) {
	st.release = max(st.release, min(e, st.base+st.buf.Len()))
}

// stop ends the read-ahead goroutine and waits for it: no reading goes on
// after it returns.
func (st *Stream) stop() {
	if st.ahead == nil {
		return
	}
	st.ahead.cancel()
	for range st.ahead.chunks { // unblock a send, until it closes
	}
	<-st.ahead.done
	st.ahead = nil
}

// Close ends the stream: its reading stops, and its files are released to
// the set.
func (st *Stream) Close() error {
	st.stop()
	st.buf = Bars{}
	return nil
}

// streamSpec is a run of a streamed file, not opened yet, and the memory
// its reader holds at most.
type streamSpec struct {
	src  *source
	i    int // the run, in the file's runs
	need int64
}

// lineRunNeed is what a CSV or JSON Lines run's reader holds at most: the
// stretch between two marks, its read buffer (a line at most), a block of
// bars and the bars of its last timestamp carried over, and the fields of
// a line.
const lineRunNeed = markBytes + 2*maxLineBytes + 3*blockBars*(barBytes+8) + 64<<10

// streamSpecs returns the runs of the set's streamed files that reach into
// the window, in the order of the files.
func (s *Set) streamSpecs() []streamSpec {
	var specs []streamSpec
	win := s.win
	for _, src := range s.srcs {
		if src.dec != nil {
			continue
		}
		if src.tbl != nil {
			need := src.tbl.streamNeed() + 3*blockBars*(barBytes+8)
			for i, r := range src.runs {
				if win.overlaps(r.minT, r.maxT) {
					specs = append(specs, streamSpec{src: src, i: i, need: need})
				}
			}
			continue
		}
		for i := range src.lines.runs {
			if r := &src.lines.runs[i]; win.overlaps(r.minT, r.maxT) {
				specs = append(specs, streamSpec{src: src, i: i, need: lineRunNeed})
			}
		}
	}
	return specs
}

// open makes the run's reader; its buffers are made as it reads.
func (sp streamSpec) open() run {
	if sp.src.tbl != nil {
		return sp.src.tableStreamRun(sp.i)
	}
	return newLineRunReader(sp.src, &sp.src.lines.runs[sp.i])
}

// need is what the set's streams would hold at once, unspilled.
func (s *Set) need() int64 {
	var n int64
	for _, sp := range s.streamSpecs() {
		n += sp.need
	}
	return n
}

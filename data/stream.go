package data

import (
	"context"
)

// fillChunk is the least a stream reads ahead when it must read at all.
const fillChunk = 4096

// Stream replays a set's bars, in order, through a sliding window: a
// driver asks for the bars up to an event with Fill, reads them by event
// index (event i is row i-first of what Fill returns), and says with
// Release which events it no longer needs. Only the events from the
// oldest not released to the furthest filled are held, so a stream's
// memory is bounded by how far ahead the driver looks, whatever the size
// of the data. A stream of a resident set holds nothing of its own.
//
// A Stream is not safe for concurrent use.
type Stream struct {
	set     *Set
	ctx     context.Context
	m       *merger // nil for a resident set, or when the runs are exhausted
	buf     Bars    // events [base, base+buf.Len())
	base    int
	release int   // events before it are no longer needed
	err     error // the error that ended the stream early, returned again
	read    int64 // events produced
}

// Stream starts a replay of the set's bars. ctx bounds the reading: Fill
// returns its error once it is done. The stream must be closed.
func (s *Set) Stream(ctx context.Context) (*Stream, error) {
	st := &Stream{set: s, ctx: ctx}
	if s.resident {
		st.buf = s.bars
		st.read = int64(s.bars.Len())
		return st, nil
	}
	runs := s.memRuns()
	for _, src := range s.srcs {
		if src.dec != nil {
			continue
		}
		var rs []run
		var err error
		if src.format == formatParquet {
			rs, err = src.pqStreamRuns()
		} else {
			rs, err = src.lineStreamRuns()
		}
		if err != nil {
			for _, r := range runs {
				r.close()
			}
			return nil, err
		}
		runs = append(runs, rs...)
	}
	st.m = newMerger(runs, len(s.symbols))
	return st, nil
}

// Events returns the number of events the stream replays (Info.Events).
func (st *Stream) Events() int { return int(st.set.info.Events) }

// Fill makes events up to end (exclusive) available, or up to the last
// event when there are fewer, and returns the bars held: event first is
// row 0. They stay valid until the next call to Fill. It may return more
// than asked for.
//
// When the data cannot be read up to end (a bad bar, a file that changed
// or cannot be read, ctx done), Fill returns the bars before the problem
// together with the error: *Error for a problem with the data. A driver
// may replay those bars before it fails, or fail at once. Later calls
// return the same error once they reach it.
func (st *Stream) Fill(end int) (bars Bars, first int, err error) {
	if st.m == nil || st.err != nil || end <= st.base+st.buf.Len() {
		if st.err != nil && end > st.base+st.buf.Len() {
			return st.buf, st.base, st.err
		}
		return st.buf, st.base, nil
	}
	// Drop the released events, moving the rest to the front, once they
	// are at least half of what is held: each bar is moved at most once
	// on average, and the buffer holds at most about twice the lookahead.
	if drop := st.release - st.base; drop > 0 && drop >= st.buf.Len()/2 {
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
	want := max(end-(st.base+st.buf.Len()), fillChunk)
	if st.buf.Time == nil {
		st.buf = makeBars(want)
	}
	for want > 0 {
		if err := st.ctx.Err(); err != nil {
			st.fail(err)
			break
		}
		n := st.buf.Len()
		st.buf, err = st.m.fill(st.buf, min(want, fillChunk))
		got := st.buf.Len() - n
		st.read += int64(got)
		want -= got
		if err != nil {
			st.fail(err)
			break
		}
		if got == 0 {
			st.finish()
			break
		}
	}
	return st.Fill(end)
}

// Release tells the stream that the events before e will not be read
// again: Fill may reuse their memory.
func (st *Stream) Release(e int) {
	st.release = max(st.release, min(e, st.base+st.buf.Len()))
}

// finish ends a stream whose runs are exhausted: every event the scan
// counted came out, and no file changed.
func (st *Stream) finish() {
	st.m.close()
	st.m = nil
	if st.read != st.set.info.Events {
		st.err = &Error{File: st.set.info.Source, Msg: "the data changed while it was being read: " +
			itoa64(st.read) + " bars in the window, " + itoa64(st.set.info.Events) + " when it was opened"}
		return
	}
	for _, src := range st.set.srcs {
		if src.dec == nil {
			if err := src.unchanged(); err != nil {
				st.err = err
				return
			}
		}
	}
}

func (st *Stream) fail(err error) {
	st.err = err
	if st.m != nil {
		st.m.close()
		st.m = nil
	}
}

// Close ends the stream, releasing its readers.
func (st *Stream) Close() error {
	if st.m != nil {
		st.m.close()
		st.m = nil
	}
	st.buf = Bars{}
	return nil
}

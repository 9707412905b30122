package data

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
)

// Spilling bounds the memory of data that streams from many Parquet
// streams at once, a folder of one file per symbol say. A Parquet stream
// holds a decoded page and a dictionary per column, as large as the
// writer made them (about 8 MiB for files written with pyarrow's
// defaults), and a merge by time holds every stream open at once: 500
// such files would take 4 GiB. With more than maxParquetStreams of them,
// the first replay of a set merges them in groups of that many, each
// group into a temporary file of its bars in replay order, once; every
// replay then merges the groups' files, each read through a small buffer.
// Memory is then that of maxParquetStreams streams while spilling and of
// the groups' buffers (about 120 KiB each) while replaying, whatever the
// number of files; disk, 64 bytes a bar of the window, in the temporary
// folder ($TMPDIR), for as long as the set is open (the file is unlinked
// at once: nothing is left behind, also when stratbench is killed).
const maxParquetStreams = 8

// spillRecord is the size of a spilled bar: time, symbol, file, row, and
// the five values.
const spillRecord = 8 + 4 + 4 + 8 + 5*8

// spill is a set's spilled Parquet streams: groups of bars in replay
// order, one after another in an unlinked temporary file.
type spill struct {
	f      *os.File
	groups []spillGroup
}

// spillGroup is one group's bars: n records from byte off.
type spillGroup struct {
	off, n int64
}

// spillRuns returns the runs of the set's spilled Parquet streams,
// spilling them on the first call. runs are the streams, not started;
// they are closed.
func (s *Set) spillRuns(ctx context.Context, runs []run) ([]run, error) {
	for _, r := range runs {
		r.close()
	}
	s.spillMu.Lock()
	defer s.spillMu.Unlock()
	if s.spillErr != nil {
		return nil, s.spillErr
	}
	if s.spilled == nil {
		sp, err := s.spill(ctx)
		if err != nil {
			var de *Error
			if errors.As(err, &de) {
				s.spillErr = err // the data's fault: the same again next time
			}
			return nil, err
		}
		s.spilled = sp
	}
	out := make([]run, len(s.spilled.groups))
	for i, g := range s.spilled.groups {
		out[i] = &spillRun{set: s, r: bufio.NewReaderSize(io.NewSectionReader(s.spilled.f, g.off, g.n*spillRecord), 64<<10), left: g.n}
	}
	return out, nil
}

// spill merges the set's Parquet streams, in groups of
// maxParquetStreams, into a temporary file.
func (s *Set) spill(ctx context.Context) (*spill, error) {
	var runs []run
	for _, src := range s.srcs {
		if src.dec == nil && src.columnar() {
			runs = append(runs, src.tableStreamRuns()...)
		}
	}
	f, err := os.CreateTemp("", "stratbench-bars-*")
	if err != nil {
		closeRuns(runs)
		return nil, &Error{File: s.info.Source, Msg: "cannot spill the Parquet streams: " + err.Error(), Err: err}
	}
	os.Remove(f.Name()) // held open until the set is closed; gone with it
	sp := &spill{f: f}
	w := bufio.NewWriterSize(f, 64<<10)
	var off int64
	rec := make([]byte, spillRecord)
	for len(runs) > 0 {
		k := min(len(runs), maxParquetStreams)
		group := runs[:k]
		runs = runs[k:]
		m := newMerger(group, len(s.symbols))
		b := makeBlock(chunkBars)
		b.src = make([]int32, 0, chunkBars)
		var n int64
		for {
			if err := ctx.Err(); err != nil {
				m.close()
				closeRuns(runs)
				f.Close()
				return nil, err
			}
			b.reset()
			if err := m.fillBlock(&b, chunkBars); err != nil {
				m.close()
				closeRuns(runs)
				f.Close()
				return nil, err
			}
			if b.Len() == 0 {
				break
			}
			for i := range b.Len() {
				binary.LittleEndian.PutUint64(rec[0:], uint64(b.Time[i]))
				binary.LittleEndian.PutUint32(rec[8:], uint32(b.Symbol[i]))
				binary.LittleEndian.PutUint32(rec[12:], uint32(b.src[i]))
				binary.LittleEndian.PutUint64(rec[16:], uint64(b.pos[i]))
				for j, v := range [...]float64{b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i]} {
					binary.LittleEndian.PutUint64(rec[24+8*j:], math.Float64bits(v))
				}
				if _, err := w.Write(rec); err != nil {
					m.close()
					closeRuns(runs)
					f.Close()
					return nil, &Error{File: s.info.Source, Msg: "cannot spill the Parquet streams: " + err.Error(), Err: err}
				}
			}
			n += int64(b.Len())
		}
		m.close()
		if n > 0 {
			sp.groups = append(sp.groups, spillGroup{off: off, n: n})
			off += n * spillRecord
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return nil, &Error{File: s.info.Source, Msg: "cannot spill the Parquet streams: " + err.Error(), Err: err}
	}
	return sp, nil
}

func closeRuns(runs []run) {
	for _, r := range runs {
		r.close()
	}
}

// close removes the spill.
func (sp *spill) close() error { return sp.f.Close() }

// spillRun reads one spilled group back.
type spillRun struct {
	set  *Set
	r    *bufio.Reader
	left int64
	b    block
}

func (r *spillRun) file() *source { return r.set.srcs[0] }
func (r *spillRun) close()        {}

func (r *spillRun) next() (*block, error) {
	if r.left == 0 {
		return nil, io.EOF
	}
	if r.b.Time == nil {
		r.b = makeBlock(blockBars)
		r.b.src = make([]int32, 0, blockBars)
	}
	b := &r.b
	b.reset()
	var rec [spillRecord]byte
	for k := min(r.left, blockBars); k > 0; k-- {
		if _, err := io.ReadFull(r.r, rec[:]); err != nil {
			return nil, &Error{File: r.set.info.Source, Msg: "cannot read the spilled Parquet streams back: " + err.Error(), Err: err}
		}
		le := binary.LittleEndian
		b.Time = append(b.Time, int64(le.Uint64(rec[0:])))
		b.Symbol = append(b.Symbol, int32(le.Uint32(rec[8:])))
		b.src = append(b.src, int32(le.Uint32(rec[12:])))
		b.pos = append(b.pos, int64(le.Uint64(rec[16:])))
		b.Open = append(b.Open, math.Float64frombits(le.Uint64(rec[24:])))
		b.High = append(b.High, math.Float64frombits(le.Uint64(rec[32:])))
		b.Low = append(b.Low, math.Float64frombits(le.Uint64(rec[40:])))
		b.Close = append(b.Close, math.Float64frombits(le.Uint64(rec[48:])))
		b.Volume = append(b.Volume, math.Float64frombits(le.Uint64(rec[56:])))
		r.left--
	}
	return b, nil
}

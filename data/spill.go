package data

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// Spilling bounds the memory of data that streams from many streams at
// once: a folder of one file per symbol, a file laid out symbol after
// symbol. Each stream holds buffers of its own (see streamSpec.need: a
// Parquet stream a span, a page and a dictionary per column, as large as
// the writer made them; a CSV or JSON Lines stream about 200 KiB), and a
// merge by time holds every stream open at once: 500 Parquet files
// written with pyarrow's defaults would take 4 GiB. When the streams would
// need more than the set's stream budget, the first replay of the set
// merges them in groups that each fit it, each group into a temporary file
// of its bars in replay order, once; when there are more groups than fit
// the budget in turn (their readers hold about 130 KiB each), the groups
// are merged again, group after group, as often as it takes. Every replay
// then merges the last groups' files. Memory is then that of the budget
// while spilling and of the last groups' buffers while replaying, whatever
// the number of files; disk, 64 bytes a bar of the window per pass (two
// passes past about 250,000 streams), in the temporary folder ($TMPDIR),
// for as long as the set is open (the file is unlinked at once: nothing is
// left behind, also when stratbench is killed).

// DefaultSpillBudget is the disk a spill may take when Options leaves
// SpillBudget zero: 16 GiB hold a pass over 268 million bars. A spill
// takes 64 bytes a bar whatever the files take, and a Parquet file of
// delta-encoded times and one-value dictionaries holds a bar in a few
// bits: a folder of 12 MB spilled 38 GB before this bound.
const DefaultSpillBudget = 16 << 30

// DefaultStreamBudget is the memory a replay's streams may hold at once
// when Options leaves StreamBudget zero.
const DefaultStreamBudget = 64 << 20

// spillRecord is the size of a spilled bar: time, symbol, file, row, and
// the five values.
const spillRecord = 8 + 4 + 4 + 8 + 5*8

// spillRunNeed is what a reader of a spilled group holds: its read buffer
// and a block of bars.
const spillRunNeed = 64<<10 + blockBars*(spillRecord+16)

// spill is a set's spilled streams: groups of bars in replay order, one
// after another in an unlinked temporary file.
type spill struct {
	f      *os.File
	groups []spillGroup
	passes int
}

// spillGroup is one group's bars: n records from byte off.
type spillGroup struct {
	off, n int64
}

// spillRuns returns the runs of the set's spilled streams, spilling them
// on the first call.
func (s *Set) spillRuns(ctx context.Context) ([]run, error) {
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
	return s.spilled.runs(s), nil
}

// runs returns readers of the spill's groups.
func (sp *spill) runs(s *Set) []run {
	out := make([]run, len(sp.groups))
	for i, g := range sp.groups {
		out[i] = &spillRun{set: s, sec: io.NewSectionReader(sp.f, g.off, g.n*spillRecord), left: g.n}
	}
	return out
}

// spill merges the set's streams, in groups that fit the stream budget,
// into a temporary file, and the groups again until their readers fit it.
func (s *Set) spill(ctx context.Context) (*spill, error) {
	// The first pass alone takes 64 bytes a bar of the window (Open
	// counted them): refused at once when that is over the budget or
	// the temporary folder's free space; the writer holds every pass to
	// the budget.
	need := s.info.Events * spillRecord
	if need > s.spillBudget {
		return nil, s.spillTooLarge(need)
	}
	tmp := os.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(tmp, &st); err == nil {
		if free := int64(st.Bavail) * st.Bsize; need > free {
			return nil, &Error{File: s.info.Source, Msg: "its " + itoa64(s.info.Events) + " bars in the window would spill " +
				sizeText(need) + " to " + tmp + " ($TMPDIR), which has " + sizeText(free) + " free (docs/data.md, Memory)"}
		}
	}
	f, err := os.CreateTemp("", "stratbench-bars-*")
	if err != nil {
		return nil, &Error{File: s.info.Source, Msg: "cannot spill the data's streams: " + err.Error(), Err: err}
	}
	os.Remove(f.Name()) // held open until the set is closed; gone with it
	sp := &spill{f: f}
	w := &spillWriter{w: bufio.NewWriterSize(f, 64<<10), budget: s.spillBudget}
	// The first pass: the files' streams.
	specs := s.streamSpecs()
	for len(specs) > 0 {
		k, need := 0, int64(0)
		for k < len(specs) && (k == 0 || need+specs[k].need <= s.streamBudget) {
			need += specs[k].need
			k++
		}
		group := make([]run, k)
		for i, spec := range specs[:k] {
			group[i] = spec.open()
		}
		specs = specs[k:]
		if err := w.merge(ctx, s, sp, group); err != nil {
			f.Close()
			return nil, err
		}
	}
	sp.passes = 1
	// Further passes, while the groups' readers do not fit.
	per := max(int(s.streamBudget/spillRunNeed), 2)
	for len(sp.groups) > per {
		groups := sp.groups
		sp.groups = nil
		for len(groups) > 0 {
			k := min(len(groups), per)
			batch := &spill{f: f, groups: groups[:k]}
			groups = groups[k:]
			if err := w.merge(ctx, s, sp, batch.runs(s)); err != nil {
				f.Close()
				return nil, err
			}
		}
		sp.passes++
	}
	if err := w.w.Flush(); err != nil {
		f.Close()
		return nil, &Error{File: s.info.Source, Msg: "cannot spill the data's streams: " + err.Error(), Err: err}
	}
	return sp, nil
}

// spillTooLarge is the data failure of a spill over the budget: need
// bytes or more.
func (s *Set) spillTooLarge(need int64) error {
	return &Error{File: s.info.Source, Msg: "its streams do not fit the memory for streams at once, and spilling them " +
		"to $TMPDIR would take " + sizeText(need) + " or more (64 bytes a bar of the window, a pass), over the spill budget of " +
		sizeText(s.spillBudget) + " (docs/data.md, Memory: STRATBENCH_SPILL_BUDGET sets it; --from and --to narrow the window)"}
}

// spillWriter appends merged groups to the spill's file, at most budget
// bytes in all.
type spillWriter struct {
	w      *bufio.Writer
	off    int64
	budget int64
	rec    [spillRecord]byte
}

// merge merges runs into a new group of sp, closing them.
func (w *spillWriter) merge(ctx context.Context, s *Set, sp *spill, runs []run) error {
	// What was written must be readable by the next pass.
	if err := w.w.Flush(); err != nil {
		closeRuns(runs)
		return &Error{File: s.info.Source, Msg: "cannot spill the data's streams: " + err.Error(), Err: err}
	}
	m := newMerger(runs, len(s.symbols))
	defer m.close()
	b := makeBlock(chunkBars)
	b.src = make([]int32, 0, chunkBars)
	var n int64
	rec := w.rec[:]
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.reset()
		if err := m.fillBlock(&b, chunkBars); err != nil {
			return err
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
			if _, err := w.w.Write(rec); err != nil {
				return &Error{File: s.info.Source, Msg: "cannot spill the data's streams: " + err.Error(), Err: err}
			}
		}
		n += int64(b.Len())
		if w.off+n*spillRecord > w.budget {
			return s.spillTooLarge(w.off + n*spillRecord)
		}
	}
	if n > 0 {
		sp.groups = append(sp.groups, spillGroup{off: w.off, n: n})
		w.off += n * spillRecord
	}
	return nil
}

func closeRuns(runs []run) {
	for _, r := range runs {
		r.close()
	}
}

// close removes the spill.
func (sp *spill) close() error { return sp.f.Close() }

// spillRun reads one spilled group back; its buffers are made at its
// first read.
type spillRun struct {
	set  *Set
	sec  *io.SectionReader
	r    *bufio.Reader
	left int64
	b    block
}

func (r *spillRun) file() *source { return r.set.srcs[0] }
func (r *spillRun) close()        { r.r, r.b = nil, block{} }

func (r *spillRun) next() (*block, error) {
	if r.left == 0 {
		return nil, io.EOF
	}
	if r.b.Time == nil {
		r.b = makeBlock(blockBars)
		r.b.src = make([]int32, 0, blockBars)
		r.r = bufio.NewReaderSize(r.sec, 64<<10)
	}
	b := &r.b
	b.reset()
	var rec [spillRecord]byte
	for k := min(r.left, blockBars); k > 0; k-- {
		if _, err := io.ReadFull(r.r, rec[:]); err != nil {
			return nil, &Error{File: r.set.info.Source, Msg: "cannot read the spilled streams back: " + err.Error(), Err: err}
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

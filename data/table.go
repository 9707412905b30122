package data

import (
	"context"
	"math"
)

// A table is a data file read by rows, a batch of them at a time, each
// column converted on its own: Parquet (row groups of column chunks),
// Feather (record batches of column buffers), freqtrade's JSON (rows of
// one array). Its scan and its streams are the same whatever the format.
type table interface {
	// newReader reads the bar columns cols of rows [from, end) (0-based
	// rows of the file; end may lie past the last row), skipping what the
	// window does not need where the format tells.
	newReader(cols []int, syms symResolver, from, end int64) tableReader
	// symbolColumn reports whether the rows carry their symbol; when they
	// do not, every row's is oneSymbol.
	symbolColumn() bool
	oneSymbol() string
	// usedRows is the number of rows of the parts the window needs, -1
	// when it is not known before the rows are read.
	usedRows() int64
	// prepare does what the scan needs done first (a Parquet file reads
	// its page headers, hashing its bytes: see pqFile.survey), and refuses
	// a file one of whose streams would not fit the set's stream budget.
	prepare(ctx context.Context) error
	// streamNeed is the memory a stream of the table holds at most.
	streamNeed() int64
}

// tableReader reads rows of a table.
type tableReader interface {
	// read appends up to limit of the next rows to b, converted but not
	// checked, each with its 1-based row in b.pos; it returns false after
	// the last.
	read(b *block, limit int) (bool, error)
	close()
}

// tableRun is a run of a table: rows [start, end) in which time never
// goes back.
type tableRun struct {
	start, end int64
	minT, maxT int64
}

// tableRunCost is what a run costs to keep (see Set.charge).
const tableRunCost = 32

// scanTable reads the rows of a table that the window needs: the
// timestamps and symbols of every row in them, checking each symbol's time
// order and finding the runs, and, when decoding, the prices and volumes
// of the bars in the window, checking and keeping them (the file is
// resident). Parts the window does not need are not read at all where the
// format tells which (Parquet's row group statistics). With left nil, the
// table is decoded or not as decode says; otherwise, when the table does
// not know its rows before it is read, it is decoded while its bars fit in
// *left bytes, which it takes from there (past that it streams).
func (src *source) scanTable(ctx context.Context, decode bool, left *int64) error {
	tb := src.tbl
	if err := tb.prepare(ctx); err != nil {
		return err
	}
	cols := []int{colTimestamp}
	if tb.symbolColumn() {
		cols = append(cols, colSymbol)
	}
	if decode {
		cols = append(cols, colOpen, colHigh, colLow, colClose, colVolume)
	}
	syms := symbolTable{src: src}
	if fs := tb.oneSymbol(); fs != "" {
		syms.intern([]byte(fs))
	}
	sc := src.set.openScratch()
	r := tb.newReader(cols, &syms, 0, math.MaxInt64)
	if pr, ok := r.(*pqReader); ok {
		// A Parquet scan takes the buffers of the last one, and leaves
		// its own for the next.
		pr.adopt(sc.pq)
		defer func() {
			pr.closeGroup()
			sc.pq = pr
		}()
	} else {
		defer r.close()
	}
	var (
		b        = sc.block
		dec      block
		decRuns  []int
		lastTime []int64 // by symbol: time of its latest bar
		lastRow  []int64 // by symbol: that bar's row
		prevTime int64
		rows     int64
		runs     []tableRun
	)
	keepPos := len(src.set.srcs) > 1 || src.set.sort // see block.pos
	if decode {
		n := int(min(max(tb.usedRows(), 0), math.MaxInt32))
		dec = block{Bars: makeBars(n)}
		if keepPos {
			dec.pos = make([]int64, 0, n)
		}
	}
	win := src.set.win
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.reset()
		more, err := r.read(&b, blockBars)
		if err != nil {
			return err
		}
		if !more {
			break
		}
		// Bars of the window are kept a stretch at a time.
		keep := -1
		flush := func(end int) {
			if keep >= 0 {
				dec.Bars = appendBars(dec.Bars, b.Bars, keep, end)
				if keepPos {
					dec.pos = append(dec.pos, b.pos[keep:end]...)
				}
				keep = -1
			}
		}
		for i, t := range b.Time {
			sym, pos := b.Symbol[i], b.pos[i]
			if int(sym) < len(lastTime) {
				if prev := lastTime[sym]; t == prev || t < prev && !src.set.sort {
					msg := orderMsg(syms.names[sym], t, prev, "row "+itoa64(lastRow[sym]))
					if t < prev {
						msg += src.orderHint()
					}
					return src.errorAt(pos, "timestamp", msg)
				}
				lastTime[sym], lastRow[sym] = t, pos
			} else {
				lastTime = append(lastTime, t)
				lastRow = append(lastRow, pos)
			}
			if rows == 0 || t < prevTime {
				if n := len(runs); n > 0 {
					runs[n-1].end = pos - 1
				}
				if len(runs) > maxStreamRuns && !decode {
					return &Error{File: src.path, Msg: "time goes back more than " + itoa64(maxStreamRuns) +
						" times in the file: too many places to merge from; sort the rows by time, or give one file per symbol"}
				}
				if err := src.set.charge(src.path, tableRunCost); err != nil {
					return err
				}
				runs = append(runs, tableRun{start: pos - 1, minT: t})
				flush(i)
				decRuns = append(decRuns, dec.Len())
			}
			runs[len(runs)-1].maxT = t
			prevTime = t
			rows++
			src.seenMin, src.seenMax = min(src.seenMin, t), max(src.seenMax, t)
			if !win.contains(t) {
				flush(i)
				continue
			}
			src.events++
			src.first, src.last = min(src.first, t), max(src.last, t)
			if decode {
				if err := src.checkBar(&b, i); err != nil {
					return err
				}
				pending := 1
				if keep >= 0 {
					pending = i - keep + 1
				}
				if left != nil && int64(dec.Len()+pending)*(barBytes+8) > *left {
					// Over the budget: stream this file instead.
					decode, keep, dec, decRuns = false, -1, block{}, nil
					continue
				}
				if keep < 0 {
					keep = i
				}
			}
		}
		flush(b.Len())
	}
	if n := len(runs); n > 0 {
		runs[n-1].end = math.MaxInt64
	}
	src.local = syms.names
	if len(runs) <= maxStreamRuns {
		src.runs = runs // also when decoded: the file may stream after all (see Open)
	}
	if decode {
		src.dec, src.decRuns = &dec, decRuns
		if left != nil {
			*left -= int64(dec.Len()) * (barBytes + 8)
		}
		return nil
	}
	if src.runs == nil {
		return &Error{File: src.path, Msg: "time goes back more than " + itoa64(maxStreamRuns) +
			" times in the file: too many places to merge from; sort the rows by time, or give one file per symbol"}
	}
	return nil
}

// checkBar checks the prices and volume of bar i of b.
func (src *source) checkBar(b *block, i int) error {
	o, h, l, c, v := b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i]
	// Every comparison with NaN is false: a NaN anywhere fails this.
	if l > 0 && l <= o && l <= c && h >= o && h >= c && h <= math.MaxFloat64 && v >= 0 && v <= math.MaxFloat64 {
		return nil
	}
	vals := [numColumns]float64{colOpen: b.Open[i], colHigh: b.High[i], colLow: b.Low[i], colClose: b.Close[i], colVolume: b.Volume[i]}
	for c := colOpen; c <= colVolume; c++ {
		if msg := valueProblem(c, vals[c]); msg != "" {
			return src.errorAt(b.pos[i], columnNames[c], msg)
		}
	}
	if c, msg := barProblem(vals[colOpen], vals[colHigh], vals[colLow], vals[colClose]); c >= 0 {
		return src.errorAt(b.pos[i], columnNames[c], msg)
	}
	return nil
}

// streamCols are the bar columns a stream of a table reads.
func streamCols(tb table) []int {
	cols := []int{colTimestamp, colOpen, colHigh, colLow, colClose, colVolume}
	if tb.symbolColumn() {
		cols = append(cols, colSymbol)
	}
	return cols
}

// tableStreamRun returns a reader of run i of a streamed table.
func (src *source) tableStreamRun(i int) run {
	r := src.runs[i]
	syms := setSymbols{src: src}
	return &tableRunReader{src: src, r: src.tbl.newReader(streamCols(src.tbl), &syms, r.start, r.end), rb: runBlocks{size: blockBars}}
}

// tableRunReader streams the bars of one run of a table that lie in the
// window, checking each.
type tableRunReader struct {
	src *source
	r   tableReader
	rb  runBlocks
}

func (r *tableRunReader) file() *source         { return r.src }
func (r *tableRunReader) close()                { r.r.close() }
func (r *tableRunReader) next() (*block, error) { return r.rb.next(r.read) }

func (r *tableRunReader) read(b *block) (bool, error) {
	n := b.Len()
	more, err := r.r.read(b, r.rb.size-n)
	if err != nil || !more {
		return true, err
	}
	win := r.src.set.win
	w := n
	for i := n; i < b.Len(); i++ {
		t := b.Time[i]
		if t < win.from {
			continue
		}
		if t > win.to {
			b.Bars, b.pos = b.Bars.truncate(w), b.pos[:w]
			return true, nil // the run's time does not go back
		}
		if err := r.src.checkBar(b, i); err != nil {
			b.Bars, b.pos = b.Bars.truncate(w), b.pos[:w]
			return true, err
		}
		if w != i {
			b.swap(w, i)
		}
		w++
	}
	b.Bars, b.pos = b.Bars.truncate(w), b.pos[:w]
	return false, nil
}

// setSymbols resolves symbols of a streamed file to the set's table.
type setSymbols struct {
	src     *source
	lastRaw []byte
	last    int32
}

func (s *setSymbols) intern(raw []byte) (int32, string) {
	if s.lastRaw != nil && string(raw) == string(s.lastRaw) {
		return s.last, ""
	}
	idx, ok := s.src.set.symIndex[string(raw)]
	if !ok {
		return 0, "the file changed while it was being read: " + quoteField(raw) + " was not in it"
	}
	s.last, s.lastRaw = idx, append(s.lastRaw[:0], raw...)
	return idx, ""
}

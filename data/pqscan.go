package data

import (
	"context"
	"math"
)

// pqRunCost is what a run costs to keep (see Set.charge).
const pqRunCost = 32

// pqRun is a run of a Parquet file: rows [start, end) in which time never
// goes back.
type pqRun struct {
	start, end int64
	minT, maxT int64
}

// scanParquet reads the row groups of a Parquet file that the window
// needs: the timestamps and symbols of every row in them, checking each
// symbol's time order and finding the runs, and, when decode is set, the
// prices and volumes of the bars in the window, checking and keeping them
// (the file is resident). Row groups the window does not need are not
// read at all.
func (src *source) scanParquet(ctx context.Context, decode bool) error {
	pf := src.pq
	if err := pf.surveyAll(ctx, src.set.seed); err != nil {
		return err
	}
	// A stream of the file must fit the stream budget by itself.
	if need := pf.need(pf.streamCols()); need > src.set.streamBudget {
		var page int64
		for c := range pf.stats {
			page = max(page, pf.stats[c].page, pf.stats[c].dict, pf.stats[c].span)
		}
		return &Error{File: src.path, Msg: "reading it takes " + sizeText(need) + " at once (its pages and dictionaries are up to " +
			sizeText(page) + "): more than the " + sizeText(src.set.streamBudget) + " a replay's streams may hold; write it with smaller pages (pyarrow: data_page_size, dictionary_pagesize_limit)"}
	}
	cols := []int{colTimestamp}
	if pf.cols[colSymbol].leaf >= 0 {
		cols = append(cols, colSymbol)
	}
	if decode {
		cols = append(cols, colOpen, colHigh, colLow, colClose, colVolume)
	}
	syms := symbolTable{src: src}
	if pf.fileSymbol != "" {
		syms.intern([]byte(pf.fileSymbol))
	}
	sc := src.set.openScratch()
	r := pf.newReader(cols, &syms, 0, pf.rows)
	r.adopt(sc.pq)
	defer func() {
		r.closeGroup()
		sc.pq = r // its buffers, for the next file's scan
	}()
	var (
		b        = sc.block
		dec      block
		decRuns  []int
		lastTime []int64 // by symbol: time of its latest bar
		lastRow  []int64 // by symbol: that bar's row
		prevTime int64
		rows     int64
	)
	keepPos := len(src.set.srcs) > 1 // see block.pos
	if decode {
		n := int(min(pf.usedRows(), math.MaxInt32))
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
				if prev := lastTime[sym]; t <= prev {
					return src.errorAt(pos, "timestamp", orderMsg(syms.names[sym], t, prev, "row "+itoa64(lastRow[sym])))
				}
				lastTime[sym], lastRow[sym] = t, pos
			} else {
				lastTime = append(lastTime, t)
				lastRow = append(lastRow, pos)
			}
			if rows == 0 || t < prevTime {
				if n := len(pf.runs); n > 0 {
					pf.runs[n-1].end = pos - 1
				}
				if err := src.set.charge(src.path, pqRunCost); err != nil {
					return err
				}
				pf.runs = append(pf.runs, pqRun{start: pos - 1, minT: t})
				flush(i)
				decRuns = append(decRuns, dec.Len())
			}
			pf.runs[len(pf.runs)-1].maxT = t
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
				if keep < 0 {
					keep = i
				}
			}
		}
		flush(b.Len())
	}
	if n := len(pf.runs); n > 0 {
		pf.runs[n-1].end = pf.rows
	}
	src.local = syms.names
	tooMany := len(pf.runs) > maxStreamRuns
	if decode {
		// The runs stay: the file may stream after all (see Open).
		src.dec, src.decRuns = &dec, decRuns
		if tooMany {
			pf.runs = nil
		}
	} else if tooMany {
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

// streamCols are the bar columns a stream of the file reads.
func (pf *pqFile) streamCols() []int {
	cols := []int{colTimestamp, colOpen, colHigh, colLow, colClose, colVolume}
	if pf.cols[colSymbol].leaf >= 0 {
		cols = append(cols, colSymbol)
	}
	return cols
}

// pqStreamRun returns a reader of run i of a streamed Parquet file.
func (src *source) pqStreamRun(i int) run {
	r := src.pq.runs[i]
	syms := setSymbols{src: src}
	return &pqRunReader{src: src, r: src.pq.newReader(src.pq.streamCols(), &syms, r.start, r.end), rb: runBlocks{size: blockBars}}
}

// pqRunReader streams the bars of one run of a Parquet file that lie in
// the window, checking each.
type pqRunReader struct {
	src *source
	r   *pqReader
	rb  runBlocks
}

func (r *pqRunReader) file() *source         { return r.src }
func (r *pqRunReader) close()                { r.r.close() }
func (r *pqRunReader) next() (*block, error) { return r.rb.next(r.read) }

func (r *pqRunReader) read(b *block) (bool, error) {
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

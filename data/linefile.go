package data

import (
	"bytes"
	"context"
	"crypto/sha256"
	"hash/maphash"
	"io"
	"math"
	"sort"
	"unsafe"
)

// markEvery is how many bars of a run lie between two of its marks, at
// most, and markBytes how many bytes: a stream skips to the last mark
// before the window instead of reading the run from its start, and reads
// a run a stretch between two marks at a time, checking each against the
// hash the scan made of it (a line may take a stretch past markBytes by up
// to maxLineBytes).
const (
	markEvery = 4096
	markBytes = 256 << 10
)

// maxStreamRuns bounds the runs of the data a set streams: a file whose
// time goes back more often would be merged from that many places at once.
const maxStreamRuns = 1 << 16

// blockBars is how many bars a run's reader decodes at a time, about
// 60 KiB with where they are.
const blockBars = 1024

// lineFile is what the scan of a CSV or JSON Lines file learned for
// streaming it: the header, and the runs (the stretches in which time
// never goes back: one for a file in time order, one per symbol for a file
// laid out symbol after symbol).
type lineFile struct {
	format lineFormat
	runs   []lineRun
}

// lineRun is a run of a line file.
type lineRun struct {
	offset, line int64 // where its first line starts, and that line's number
	end          int64 // where it ends: the next run's offset, or the file's end
	minT, maxT   int64 // the times of its first and last bar
	marks        []lineMark
}

// lineMark is where one of a run's bars is, every markEvery bars or
// markBytes bytes, and the hash of the run's bytes from there to the next
// mark (or the run's end), keyed by the set's seed.
type lineMark struct {
	offset, line, time int64
	sum                uint64
}

// What a run and a mark cost to keep (see Set.charge).
var (
	lineRunCost  = int64(unsafe.Sizeof(lineRun{}))
	lineMarkCost = int64(unsafe.Sizeof(lineMark{}))
)

// scanLines reads a CSV or JSON Lines file whole. It checks the header,
// the fields of every line (values included), the timestamps, the symbols
// and each symbol's time order, and finds the runs; while the bars in the
// window fit in *left bytes it keeps them (the file is resident), and past
// that it drops them and reads them again as they stream. It hashes every
// byte.
func (src *source) scanLines(ctx context.Context, left *int64) error {
	h := sha256.New()
	sc := src.set.openScratch()
	lr := &sc.lines
	if lr.r == nil {
		*lr = *newLineReader(src.path, nil, 0, maxLineBytes)
	}
	lr.file = src.path
	lines, format, err := newLineSource(ctx, src, lr, h, src.set.scan, &sc.parallel)
	if err != nil {
		return err
	}
	defer lines.close()
	lf := &lineFile{format: format}
	// A file over 8 times the budget left would need lines of 400 bytes
	// on average to fit it: do not start decoding it.
	decode := *left > 0 && src.size <= 8**left
	dec := makeBlock(0)
	keepPos := len(src.set.srcs) > 1 || src.set.sort // see block.pos
	var decRuns []int
	var (
		syms     = symbolTable{src: src}
		lastTime []int64 // by symbol: time of its latest bar
		lastLine []int64 // by symbol: line of that bar
		l        scanLine
		prevTime int64
		runBars  int
		rows     int64
		blanks   int64
		markAt   = -1         // bars of the run at its last mark
		span     maphash.Hash // the bytes since the last mark
		spanOpen bool
	)
	span.SetSeed(src.set.seed)
	// endSpan closes the stretch since the last mark: its hash is the
	// mark's.
	endSpan := func() {
		if spanOpen {
			r := &lf.runs[len(lf.runs)-1]
			r.marks[len(r.marks)-1].sum = span.Sum64()
			span.Reset()
			spanOpen = false
		}
	}
	win := src.set.win
	for {
		err := lines.next(&l)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if l.blank {
			// A file of blank lines is read whole too: a signal ends it.
			if blanks++; blanks%markEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if spanOpen {
				// Blank lines count toward a stretch's bytes too: a mark
				// here has the time of the bar before it.
				r := &lf.runs[len(lf.runs)-1]
				if l.start-r.marks[len(r.marks)-1].offset >= markBytes {
					endSpan()
					if err := src.set.charge(src.path, lineMarkCost); err != nil {
						return err
					}
					r.marks = append(r.marks, lineMark{offset: l.start, line: l.line, time: r.maxT})
					markAt, spanOpen = runBars, true
				}
				span.Write(l.raw)
			}
			continue
		}
		if rows%markEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if l.err != nil {
			return l.err
		}
		t := l.t
		sym, msg := syms.intern(l.sym)
		if msg != "" {
			return &Error{File: src.path, Line: l.line, Column: "symbol", Msg: msg}
		}
		// Every line's values are checked here, also when the file will
		// stream and also outside the window: a CSV or JSON Lines file is
		// read whole anyway (for the timestamps and the digest), parsing
		// five numbers more per line is cheap, and a bad row then fails the
		// same way whatever the file's size or the window.
		if l.valErr != nil {
			return l.valErr
		}
		if int(sym) < len(lastTime) {
			if prev := lastTime[sym]; t == prev || t < prev && !src.set.sort {
				return &Error{File: src.path, Line: l.line, Column: "timestamp",
					Msg: orderMsg(syms.names[sym], t, prev, "line "+itoa64(lastLine[sym]))}
			}
			lastTime[sym], lastLine[sym] = t, l.line
		} else {
			lastTime = append(lastTime, t)
			lastLine = append(lastLine, l.line)
		}
		if rows == 0 || t < prevTime {
			// Time goes back: a new run starts here.
			if len(lf.runs) <= maxStreamRuns {
				endSpan()
			}
			if n := len(lf.runs); n > 0 {
				lf.runs[n-1].end = l.start
			}
			if len(lf.runs) <= maxStreamRuns {
				if err := src.set.charge(src.path, lineRunCost); err != nil {
					return err
				}
				lf.runs = append(lf.runs, lineRun{offset: l.start, line: l.line, minT: t})
			}
			decRuns = append(decRuns, dec.Len())
			runBars, markAt = 0, -1
		}
		if n := len(lf.runs); n <= maxStreamRuns {
			r := &lf.runs[n-1]
			if markAt < 0 || runBars-markAt >= markEvery || l.start-r.marks[len(r.marks)-1].offset >= markBytes {
				endSpan()
				if err := src.set.charge(src.path, lineMarkCost); err != nil {
					return err
				}
				r.marks = append(r.marks, lineMark{offset: l.start, line: l.line, time: t})
				markAt, spanOpen = runBars, true
			}
			span.Write(l.raw)
			r.maxT = t
		}
		runBars++
		prevTime = t
		rows++
		src.seenMin, src.seenMax = min(src.seenMin, t), max(src.seenMax, t)
		if !win.contains(t) {
			continue
		}
		src.events++
		src.first, src.last = min(src.first, t), max(src.last, t)
		if !decode {
			continue
		}
		if int64(dec.Len()+1)*(barBytes+8) > *left {
			// Over the budget: stream this file instead.
			decode, dec, decRuns = false, block{}, nil
			continue
		}
		dec.growFor(src.size, lines.consumed(), int(*left/(barBytes+8)))
		if keepPos {
			dec.appendRow(t, sym, &l.v, l.line)
		} else {
			dec.appendBar(t, sym, &l.v)
		}
	}
	if rows == 0 {
		if lf.format.jsonl {
			return &Error{File: src.path, Msg: "no bars"}
		}
		return &Error{File: src.path, Msg: "no bars after the header"}
	}
	if len(lf.runs) <= maxStreamRuns {
		endSpan()
	}
	lf.runs[len(lf.runs)-1].end = lines.consumed()
	h.Sum(src.digest[:0])
	src.digestDone = true
	src.local = syms.names
	if len(lf.runs) <= maxStreamRuns {
		src.lines = lf // also when decoded: the file may stream after all (see Open)
	}
	if decode {
		// Columns reserved for many more bars than the file held (its first
		// lines much shorter than the rest: growFor) are cut to its bars,
		// which are charged: the room would otherwise be kept, uncharged,
		// beside every later file's until the merge (the attacker's pass:
		// a folder of 8 such files held 429 MB for a 64 MiB budget).
		dec.fit()
		if f := src.set.scan.decoded; f != nil {
			f(dec.Len(), cap(dec.Time))
		}
		*left -= int64(dec.Len()) * (barBytes + 8)
		src.dec, src.decRuns = &dec, decRuns
		return nil
	}
	if src.lines == nil {
		return &Error{File: src.path, Msg: "time goes back more than " + itoa64(maxStreamRuns) +
			" times in the file: too many places to merge from; sort the rows by time, or give one file per symbol"}
	}
	return nil
}

// growFor reserves room for the rest of a file of size bytes, of which
// consumed are read, up to limit bars: a first estimate once 256 bars show
// how long a line is, and a new one whenever the columns are full, so that
// the columns do not end up holding twice the room they need.
//
// The first estimate has a margin of a tenth, the later ones of 3 %: the
// first lines of a file are often not its average (a price that grows a
// digit, a volume that shrinks one), and the new estimate when the
// columns are full copies every bar so far, near the end of the file by
// then (a million bars whose first 256 lines were 6 % longer than the
// file's average: 46 MB copied, a tenth of the scan's CPU).
func (b *block) growFor(size, consumed int64, limit int) {
	n := b.Len()
	if n != 256 && n != cap(b.Time) {
		return
	}
	want := max(2*n, 256)
	if size > 0 && consumed > 0 && n > 0 {
		margin := 1.03
		if n == 256 {
			margin = 1.10
		}
		est := float64(size)/(float64(consumed)/float64(n))*margin + 64
		want = max(int(min(est, float64(math.MaxInt32))), n+n/16+64)
	}
	b.reserve(max(min(want, limit), n+1))
}

// fit cuts b's columns to its bars when they keep much more room
// (roomy).
func (b *block) fit() {
	if n := b.Len(); roomy(cap(b.Time), n) {
		b.resize(n)
	}
}

// reserve grows b's capacity to n bars.
func (b *block) reserve(n int) {
	if n > cap(b.Time) {
		b.resize(n)
	}
}

// resize moves b's bars (and positions) into columns of room for n bars.
func (b *block) resize(n int) {
	nb := block{Bars: appendBars(makeBars(n), b.Bars, 0, b.Len())}
	if cap(b.pos) > 0 {
		nb.pos = append(make([]int64, 0, n), b.pos...)
	}
	*b = nb
}

// symbolTable interns a file's symbols in order of first appearance,
// checking each once.
type symbolTable struct {
	index   map[string]int32
	names   []string
	lastIdx int32 // the previous row's symbol, to skip the map
	// src is the file whose symbols these are, charged for each new one
	// (see Set.charge); nil charges nothing.
	src *source
}

// symbolCost is what a symbol costs to keep, besides its name: in the
// file's table and the set's, and its state in a replay.
const symbolCost = 160

// intern returns the index of a symbol, or what is wrong with it.
func (st *symbolTable) intern(raw []byte) (int32, string) {
	if len(st.names) > 0 && string(raw) == st.names[st.lastIdx] {
		return st.lastIdx, ""
	}
	idx, ok := st.index[string(raw)]
	if !ok {
		if msg := symbolProblem(raw); msg != "" {
			return 0, msg
		}
		if len(st.names) == math.MaxInt32 {
			return 0, "too many symbols"
		}
		if st.src != nil {
			if err := st.src.set.charge(st.src.path, symbolCost+int64(len(raw))); err != nil {
				return 0, "too many symbols (" + itoa64(int64(len(st.names))) + " in this file): " + err.(*Error).Msg
			}
		}
		if st.index == nil {
			st.index = make(map[string]int32)
		}
		idx = int32(len(st.names))
		name := string(raw)
		st.names = append(st.names, name)
		st.index[name] = idx
	}
	st.lastIdx = idx
	return idx, ""
}

// lineRunReader streams the bars of one run of a line file that lie in the
// window, checking each. It reads the run a stretch between two marks at
// a time, and checks each stretch against the hash the scan made of it
// before it parses a line of it: a replay reads exactly the bytes the
// data's digest covers, or fails.
type lineRunReader struct {
	src    *source
	run    *lineRun
	k      int // the mark whose stretch is read
	buf    []byte
	br     bytes.Reader
	lr     *lineReader // nil until the first read
	format lineFormat
	tp     timeParser
	rb     runBlocks
	raw    [numColumns][]byte
	v      [numColumns]float64
	// The previous bar's symbol, to skip the map.
	lastRaw []byte
	lastSym int32
}

func newLineRunReader(src *source, r *lineRun) *lineRunReader {
	// Start at the last mark before the window: every bar before it is
	// earlier still.
	from := src.set.win.from
	k := sort.Search(len(r.marks), func(i int) bool { return r.marks[i].time >= from }) - 1
	format := src.lines.format
	format.split = nil
	return &lineRunReader{src: src, run: r, k: max(k, 0), format: format, rb: runBlocks{size: blockBars}, lastSym: -1}
}

func (r *lineRunReader) file() *source { return r.src }
func (r *lineRunReader) close()        { r.lr, r.buf = nil, nil }

func (r *lineRunReader) next() (*block, error) { return r.rb.next(r.read) }

// load reads the stretch of mark k and checks it.
func (r *lineRunReader) load(k int) error {
	m := &r.run.marks[k]
	end := r.run.end
	if k+1 < len(r.run.marks) {
		end = r.run.marks[k+1].offset
	}
	r.buf = grow(r.buf, int(end-m.offset))
	if _, err := r.src.fh.ReadAt(r.buf, m.offset); err != nil {
		if err == io.EOF {
			return &Error{File: r.src.path, Msg: "the file changed since it was opened: it is shorter"}
		}
		return pathError(r.src.path, err)
	}
	if maphash.Bytes(r.src.set.seed, r.buf) != m.sum {
		return &Error{File: r.src.path, Line: m.line, Msg: "the file changed since it was opened: its bytes " + itoa64(m.offset) +
			" to " + itoa64(end) + " (lines from " + itoa64(m.line) + ") are not those in the data's digest"}
	}
	r.br.Reset(r.buf)
	if r.lr == nil {
		r.lr = newLineReader(r.src.path, &r.br, m.line-1, maxLineBytes)
	} else {
		r.lr.reset(&r.br, m.line-1)
	}
	r.k = k
	return nil
}

// read appends the run's next bars in the window to b, up to the block
// size, and reports whether the run is over.
func (r *lineRunReader) read(b *block) (bool, error) {
	win := r.src.set.win
	if r.lr == nil {
		if err := r.load(r.k); err != nil {
			return true, err
		}
	}
	for b.Len() < r.rb.size {
		line, err := r.lr.next()
		if err == io.EOF {
			if r.k+1 >= len(r.run.marks) {
				return true, nil
			}
			if err := r.load(r.k + 1); err != nil {
				return true, err
			}
			continue
		}
		if err != nil {
			return true, err
		}
		if blank(line) {
			continue
		}
		path, lineNo := r.src.path, r.lr.line
		if err := r.format.read(path, lineNo, line, &r.raw); err != nil {
			return true, err
		}
		t, err := r.tp.parse(path, lineNo, r.raw[colTimestamp])
		if err != nil {
			return true, err
		}
		if t < win.from {
			continue
		}
		if t > win.to {
			return true, nil // the run's time does not go back
		}
		sym := r.lastSym
		if sym < 0 || string(r.raw[colSymbol]) != string(r.lastRaw) {
			s, ok := r.src.set.symIndex[string(r.raw[colSymbol])]
			if !ok {
				return true, &Error{File: path, Line: lineNo, Column: "symbol",
					Msg: "the file changed while it was being read: " + quoteField(r.raw[colSymbol]) + " was not in it"}
			}
			sym, r.lastSym, r.lastRaw = s, s, append(r.lastRaw[:0], r.raw[colSymbol]...)
		}
		if err := parseValues(path, lineNo, &r.raw, &r.v); err != nil {
			return true, err
		}
		b.appendRow(t, sym, &r.v, lineNo)
	}
	return false, nil
}

// runBlocks cuts the bars of a run, read in file order, into blocks that
// end where the time changes (more bars of a block's last timestamp may
// follow, and they must be sorted with it), each sorted by symbol within
// its timestamps.
type runBlocks struct {
	b, carry block
	size     int
	done     bool
	err      error // met after the bars of the last block
}

// next returns the next block; read appends bars to the block it is given,
// at least one unless the run is over, and reports whether it is.
func (rb *runBlocks) next(read func(*block) (bool, error)) (*block, error) {
	if rb.err != nil {
		return nil, rb.err
	}
	b := &rb.b
	if b.Time == nil {
		*b = makeBlock(rb.size)
		rb.carry = makeBlock(0)
	}
	b.reset()
	b.Bars = appendBars(b.Bars, rb.carry.Bars, 0, rb.carry.Len())
	b.pos = append(b.pos, rb.carry.pos...)
	rb.carry.reset()
	// On an error, the bars read before it go first.
	fail := func(err error) (*block, error) {
		rb.done, rb.err = true, err
		if b.Len() == 0 {
			return nil, err
		}
		sortTies(b)
		return b, nil
	}
	for !rb.done && b.Len() < rb.size {
		done, err := read(b)
		if err != nil {
			return fail(err)
		}
		rb.done = done
	}
	for !rb.done {
		// The bars of the last timestamp wait for the next block, unless
		// they are the whole block: then read on until the time changes.
		last := b.Len() - 1
		g := last
		for g > 0 && b.Time[g-1] == b.Time[last] {
			g--
		}
		if g > 0 {
			rb.carry.Bars = appendBars(rb.carry.Bars, b.Bars, g, b.Len())
			rb.carry.pos = append(rb.carry.pos, b.pos[g:]...)
			b.Bars = b.Bars.truncate(g)
			b.pos = b.pos[:g]
			break
		}
		size := rb.size
		rb.size = b.Len() + 1
		done, err := read(b)
		rb.size = size
		if err != nil {
			return fail(err)
		}
		rb.done = done
	}
	if b.Len() == 0 {
		return nil, io.EOF
	}
	sortTies(b)
	return b, nil
}

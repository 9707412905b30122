package data

import (
	"bytes"
	"context"
	"hash"
	"io"
	"runtime"
	"sync"
)

// The lines of a CSV or JSON Lines file as the scan meets them (scanLines).
//
// A file of at least parallelFrom bytes is read in parallel: one goroutine
// reads it in chunks of whole lines, in order, and hashes each chunk
// before it hands it on; workers split and parse the chunks' lines (their
// fields, timestamps and values: what depends on the line alone); and the
// scan takes the chunks back in file order and does what depends on the
// lines before (symbols, time order, runs, marks, the decode budget). Each
// byte is read once and the scan sees the same lines, with the same
// errors in the same order, as it does reading the file line by line (the
// smaller files' way): FuzzCSV and FuzzJSONL check that the two agree on
// every input. On two cores the 63 MB CSV of a million bars opens in
// about three quarters of the time (docs/ARCHITECTURE.md, "The data's
// opening scan, on every core").

// parallelFrom is the size from which a line file is scanned in parallel.
const parallelFrom = 4 << 20

// scanChunkBytes is how much a chunk of a parallel scan reads at a time:
// a chunk holds the whole lines of it (a line longer than the rest of the
// chunk moves on to the next one).
const scanChunkBytes = 512 << 10

// scanTuning sets how a line file is scanned (tests force the parallel
// scan on small files and small chunks). The zero value is the default.
type scanTuning struct {
	parallelFrom int64 // 0: parallelFrom; < 0: never in parallel
	chunk        int   // 0: scanChunkBytes
	workers      int   // 0: GOMAXPROCS, at most 8
	// decoded, when set, is told the bars of each line file decoded
	// whole and the room its columns keep for them.
	decoded func(bars, room int)
}

// scanLine is one line of a line file as the scan meets it.
type scanLine struct {
	line, start int64  // its number, and the offset of its first byte
	raw         []byte // as read, line ending included
	blank       bool
	// What a line that is not blank holds: its time, its symbol's text
	// and its values; err is what is wrong with its fields or timestamp
	// (met before its symbol is looked at), valErr what is wrong with its
	// values (met after).
	t      int64
	sym    []byte
	v      [numColumns]float64
	err    error
	valErr error
}

// lineParser parses the lines of one file: the scan's, or a worker's own.
type lineParser struct {
	path   string
	format lineFormat
	tp     timeParser
	raw    [numColumns][]byte
}

// parse fills l from text, the line without its ending (the BOM of line 1
// trimmed), as scanLines reads it.
func (p *lineParser) parse(text []byte, l *scanLine) {
	l.err, l.valErr = nil, nil
	if l.blank = blank(text); l.blank {
		return
	}
	if err := p.format.read(p.path, l.line, text, &p.raw); err != nil {
		l.err = err
		return
	}
	t, err := p.tp.parse(p.path, l.line, p.raw[colTimestamp])
	if err != nil {
		l.err = err
		return
	}
	l.t, l.sym = t, p.raw[colSymbol]
	l.valErr = parseValues(p.path, l.line, &p.raw, &l.v)
}

// lineSource yields the lines of a file after its header.
type lineSource interface {
	// next fills l with the next line, valid until the following call; it
	// returns io.EOF after the last line, and the error that ends the
	// file's reading (a line too long, a read that failed) where it
	// stands.
	next(l *scanLine) error
	// consumed is how many bytes of the file the lines so far took, the
	// header's included.
	consumed() int64
	// close ends the source's reading; the scan calls it once it is done.
	close()
}

// serialLines reads the lines one after the other.
type serialLines struct {
	lr *lineReader
	p  lineParser
}

func (s *serialLines) next(l *scanLine) error {
	text, err := s.lr.next()
	if err != nil {
		return err
	}
	l.line, l.start, l.raw = s.lr.line, s.lr.start, s.lr.raw
	s.p.parse(text, l)
	return nil
}

func (s *serialLines) consumed() int64 { return s.lr.consumed }
func (s *serialLines) close()          {}

// lineChunk is a stretch of whole lines of a file and, once a worker
// parsed it, its lines.
type lineChunk struct {
	buf       []byte // its lines, as read
	offset    int64  // of buf[0] in the file
	firstLine int64  // the number of its first line
	// end is what ends the file's reading after these lines (a line
	// too long, a read that failed), nil when the file goes on (or ends:
	// the last chunk has eof set).
	end   error
	eof   bool
	count int // its lines, the last one without an ending included

	// What a worker parsed: the lines, up to the first that has
	// something wrong (its err and valErr are the chunk's), their
	// symbols' text, and the line too long to be one after them.
	lines   []chunkLine
	syms    []byte
	lineErr error
	valErr  error
	tooLong error
	done    chan struct{} // closed once lines are parsed
}

// chunkLine is a line of a chunk as a worker parsed it (a scanLine
// without pointers: the garbage collector does not look into a chunk's
// thousands of lines).
type chunkLine struct {
	off, n         int32 // raw is buf[off:off+n]
	symOff, symLen int32 // the symbol's text is syms[symOff:symOff+symLen]
	blank          bool
	t              int64
	v              [numColumns - colOpen]float64
}

// parallelLines reads a file's lines with workers (see the top of the
// file).
type parallelLines struct {
	order chan *lineChunk // the chunks in file order, for next
	free  chan *lineChunk // chunks next is done with
	quit  chan struct{}   // closed by close: the goroutines stop
	wg    sync.WaitGroup

	cur  *lineChunk
	k    int // the next line of cur
	used int64

	// spare takes the chunks and the reader's buffer back on close.
	spare *lineScratch
	carry []byte // the reader's buffer, once it returned
}

// lineScratch is what a parallel read leaves for the next file's (a
// folder's files reuse it): its chunks and its reader's buffer.
type lineScratch struct {
	chunks []*lineChunk
	carry  []byte
}

// startParallelLines starts reading the file src from offset at, where
// line firstLine+1 starts; pending are its first bytes, read and hashed
// already (copied before it returns). p is the format the workers parse
// with. Every byte after pending, up to the size src had when it was
// opened, is written to h, in order, before its lines are handed on. The
// chunks and the reader's buffer come from spare and go back to it on
// close.
func startParallelLines(src *source, p *lineParser, h hash.Hash, pending []byte, at, firstLine int64, tune scanTuning, spare *lineScratch) *parallelLines {
	chunk := tune.chunk
	if chunk <= 0 {
		chunk = scanChunkBytes
	}
	workers := tune.workers
	if workers <= 0 {
		workers = min(runtime.GOMAXPROCS(0), 8)
	}
	// Each chunk in flight holds its bytes and its parsed lines: a
	// bounded number of them (maxChunkLines lines each), whatever the
	// file.
	inFlight := workers + 3
	pl := &parallelLines{order: make(chan *lineChunk, inFlight), free: make(chan *lineChunk, inFlight),
		quit: make(chan struct{}), used: at, spare: spare}
	for range inFlight {
		c := &lineChunk{}
		if n := len(spare.chunks); n > 0 {
			c, spare.chunks = spare.chunks[n-1], spare.chunks[:n-1]
		}
		pl.free <- c
	}
	carry := spare.carry
	if room := chunk + maxLineBytes + 1; cap(carry) < room {
		carry = make([]byte, 0, room)
	}
	carry = append(carry[:0], pending...)
	spare.carry = nil
	work := make(chan *lineChunk, inFlight)
	pl.wg.Add(1 + workers)
	go func() {
		defer pl.wg.Done()
		defer close(work)
		pl.carry = pl.read(src, h, carry, at, firstLine, chunk, work)
	}()
	for range workers {
		wp := *p
		wp.format.split = nil // each worker splits into its own scratch
		wp.tp = timeParser{}
		go func() {
			defer pl.wg.Done()
			for c := range work {
				select {
				case <-pl.quit:
				default:
					wp.parseChunk(c)
				}
				close(c.done)
			}
		}()
	}
	return pl
}

// maxChunkLines bounds the lines of a chunk: what a worker keeps of a
// line is 72 bytes however short the line, and a chunk of blank lines
// would otherwise keep 72 times its bytes.
const maxChunkLines = 16 << 10

// read reads the file in chunks of whole lines and hands each on to the
// workers and to next, in order; carry holds the bytes from offset at,
// read and hashed already. It returns the buffer it holds at the end.
func (pl *parallelLines) read(src *source, h hash.Hash, carry []byte, at, line int64, chunk int, work chan<- *lineChunk) []byte {
	// carry holds the bytes after the last whole line handed on (the
	// start of the next line) and what is read after them. A chunk's
	// reads stop at chunk bytes, or past the first line that ends after
	// them, or at maxLineBytes+1 bytes of one line: it needs that much
	// room at most. Each chunk takes carry's buffer as it is, and carry
	// the one the chunk had.
	room := cap(carry)
	off := at                        // the file's offset of carry[0]
	readAt := at + int64(len(carry)) // where the next read starts
	hashed := readAt                 // the bytes before it are hashed
	eof := readAt >= src.size
	// target is how much a chunk reads: chunk bytes, less after a chunk
	// ended on maxChunkLines (short lines: a chunk of them would hold far
	// more lines than it may keep, and each chunk would copy the rest on),
	// and back up as lines get longer.
	target := chunk
	var readErr error
	for {
		var c *lineChunk
		select {
		case c = <-pl.free:
		case <-pl.quit:
			return carry
		}
	fill:
		for !eof && readErr == nil {
			var want int
			switch {
			case len(carry) < target:
				want = target - len(carry)
			case bytes.IndexByte(carry, '\n') >= 0:
				break fill
			case len(carry) > maxLineBytes:
				break fill // a line too long to be one
			default:
				want = min(chunk, maxLineBytes+1-len(carry))
			}
			select {
			case <-pl.quit:
				pl.free <- c
				return carry
			default:
			}
			want = int(min(int64(want), src.size-readAt))
			n, err := src.fh.ReadAt(carry[len(carry):len(carry)+want], readAt)
			carry = carry[:len(carry)+n]
			readAt += int64(n)
			switch {
			case err == io.EOF:
				eof = true // the file is shorter than it was: it ends here, as for a lineReader
			case err != nil:
				readErr = err
				break fill
			default:
				eof = readAt >= src.size
			}
		}
		cut := len(carry)
		if !eof || readErr != nil {
			cut = bytes.LastIndexByte(carry, '\n') + 1
		}
		lines := bytes.Count(carry[:cut], []byte{'\n'})
		whole := true // the chunk takes every whole line read
		if lines > maxChunkLines {
			cut, lines, whole = 0, maxChunkLines, false
			for range maxChunkLines {
				cut += bytes.IndexByte(carry[cut:], '\n') + 1
			}
			target = min(max(2*cut, 4<<10), chunk)
		} else {
			target = min(2*target, chunk)
		}
		if end := off + int64(cut); end > hashed {
			h.Write(carry[hashed-off : cut])
			hashed = end
		}
		next := c.buf
		if cap(next) < room {
			next = make([]byte, 0, room)
		}
		next = append(next[:0], carry[cut:]...)
		c.buf, c.offset, c.firstLine, c.eof, c.end = carry[:cut], off, line, whole && eof && readErr == nil, nil
		carry = next
		c.count = lines
		if cut > 0 && c.buf[cut-1] != '\n' {
			c.count++
		}
		c.done = make(chan struct{})
		line += int64(lines)
		off += int64(cut)
		switch {
		case !whole:
		case readErr != nil:
			c.end = &Error{File: src.path, Msg: readErr.Error(), Err: readErr}
		case cut == 0 && !eof:
			// No line ends in more than maxLineBytes: the line is too long.
			c.end = lineTooLong(src.path, line+1)
		}
		work <- c
		pl.order <- c
		if c.end != nil || c.eof {
			return carry
		}
	}
}

// parseChunk parses the lines of c as a lineReader returns them, up to
// the first that has something wrong: the scan stops there at the latest.
func (p *lineParser) parseChunk(c *lineChunk) {
	c.lines, c.syms, c.lineErr, c.valErr, c.tooLong = c.lines[:0], c.syms[:0], nil, nil, nil
	if cap(c.lines) < c.count {
		// Made once at its size: append's growth would allocate five
		// times the lines a chunk of blank lines keeps.
		c.lines = make([]chunkLine, 0, min(max(c.count, 2*cap(c.lines)), maxChunkLines+1))
	}
	b := c.buf
	var l scanLine
	var lastSym []byte // the symbol's text of the line before, in syms
	line := c.firstLine
	for pos := 0; pos < len(b); {
		end := len(b)
		if i := bytes.IndexByte(b[pos:], '\n'); i >= 0 {
			end = pos + i + 1
		}
		raw := b[pos:end]
		line++
		// A lineReader's bufio.Reader holds maxLineBytes: a line and its
		// ending must fit, and a last line without one must leave room
		// for the end of the file to show.
		if len(raw) > maxLineBytes || len(raw) == maxLineBytes && raw[len(raw)-1] != '\n' {
			c.tooLong = lineTooLong(p.path, line)
			return
		}
		l.line = line
		p.parse(lineText(raw, line), &l)
		cl := chunkLine{off: int32(pos), n: int32(len(raw)), blank: l.blank, t: l.t}
		copy(cl.v[:], l.v[colOpen:])
		if !l.blank && l.err == nil {
			if lastSym == nil || !bytes.Equal(l.sym, lastSym) {
				c.syms = append(c.syms, l.sym...)
				lastSym = c.syms[len(c.syms)-len(l.sym):]
			}
			cl.symOff, cl.symLen = int32(len(c.syms)-len(lastSym)), int32(len(lastSym))
		}
		c.lines = append(c.lines, cl)
		if l.err != nil || l.valErr != nil {
			c.lineErr, c.valErr = l.err, l.valErr
			return
		}
		pos = end
	}
}

func (pl *parallelLines) next(l *scanLine) error {
	c := pl.cur
	for c == nil || pl.k >= len(c.lines) {
		if c != nil {
			switch {
			case c.tooLong != nil:
				return c.tooLong
			case c.end != nil:
				return c.end
			case c.eof:
				return io.EOF
			}
			pl.free <- c
		}
		c = <-pl.order
		<-c.done
		pl.cur, pl.k = c, 0
	}
	cl := &c.lines[pl.k]
	pl.k++
	l.line, l.start, l.raw = c.firstLine+int64(pl.k), c.offset+int64(cl.off), c.buf[cl.off:cl.off+cl.n]
	l.blank, l.t, l.sym = cl.blank, cl.t, c.syms[cl.symOff:cl.symOff+cl.symLen]
	copy(l.v[colOpen:], cl.v[:])
	l.err, l.valErr = nil, nil
	if pl.k == len(c.lines) {
		l.err, l.valErr = c.lineErr, c.valErr
	}
	pl.used = l.start + int64(cl.n)
	return nil
}

func (pl *parallelLines) consumed() int64 { return pl.used }

func (pl *parallelLines) close() {
	close(pl.quit)
	pl.wg.Wait()
	// Every chunk is in free, in order or cur now.
	if pl.cur != nil {
		pl.spare.chunks = append(pl.spare.chunks, pl.cur)
	}
	for {
		select {
		case c := <-pl.free:
			pl.spare.chunks = append(pl.spare.chunks, c)
		case c := <-pl.order:
			pl.spare.chunks = append(pl.spare.chunks, c)
		default:
			pl.spare.carry = pl.carry
			return
		}
	}
}

// newLineSource returns the lines of src after its header, and the
// header's format; h hashes every byte read. A parallel read takes its
// chunks from spare and gives them back on close.
func newLineSource(ctx context.Context, src *source, lr *lineReader, h hash.Hash, tune scanTuning, spare *lineScratch) (lineSource, lineFormat, error) {
	format := lineFormat{jsonl: src.format == formatJSONL}
	lr.reset(io.TeeReader(io.NewSectionReader(src.fh, 0, src.size), h), 0)
	if !format.jsonl {
		if err := format.readHeader(ctx, lr); err != nil {
			return nil, format, err
		}
	}
	p := lineParser{path: src.path, format: format}
	from := tune.parallelFrom
	if from == 0 {
		from = parallelFrom
	}
	if from < 0 || src.size < from || runtime.GOMAXPROCS(0) < 2 && tune.workers == 0 {
		return &serialLines{lr: lr, p: p}, format, nil
	}
	// The bytes the header's reader read past it, hashed already, are the
	// workers' first.
	pending, _ := lr.r.Peek(lr.r.Buffered())
	return startParallelLines(src, &p, h, pending, lr.consumed, lr.line, tune, spare), format, nil
}

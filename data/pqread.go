package data

import (
	"encoding/binary"
	"hash/maphash"
	"sort"
	"strconv"
)

// symResolver gives a symbol's index, or says what is wrong with it.
type symResolver interface {
	intern(raw []byte) (int32, string)
}

// pqReader reads some bar columns of the rows [row, end) of a Parquet
// file, skipping the row groups the window does not need, and converts
// them block by block. It holds one decoded page per column.
type pqReader struct {
	pf      *pqFile
	cols    []int // the bar columns read
	cur     [numColumns]colCursor
	syms    symResolver
	fileSym int32 // the symbol of every row, when the file has no symbol column
	gi      int   // the next row group to look at
	open    bool  // the cursors are open on row group gi
	row     int64 // the next row to read (0-based)
	end     int64
	dec     decompressor // the cursors' codecs
}

func (pf *pqFile) newReader(cols []int, syms symResolver, from, end int64) tableReader {
	r := &pqReader{pf: pf, cols: cols, syms: syms, row: from, end: end}
	if pf.fileSymbol != "" {
		r.fileSym, _ = syms.intern([]byte(pf.fileSymbol))
	}
	for _, c := range cols {
		r.cur[c] = colCursor{pf: pf, dec: &r.dec, col: c, spec: &pf.cols[c], syms: syms}
	}
	r.gi = sort.Search(len(pf.groups), func(i int) bool { return pf.groups[i].start+pf.groups[i].rows > from })
	return r
}

// adopt takes the buffers and codecs of old, a reader done with, if any.
func (r *pqReader) adopt(old *pqReader) {
	if old == nil {
		return
	}
	for c := range r.cur {
		n, o := &r.cur[c], &old.cur[c]
		n.span, n.buf, n.sc = o.span, o.buf, o.sc
		n.dict = pageValues{idx: o.dict.idx, i32: o.dict.i32, i64: o.dict.i64, f32: o.dict.f32, f64: o.dict.f64,
			i96: o.dict.i96, bytes: o.dict.bytes, offs: o.dict.offs}
		o.release()
	}
	r.dec, old.dec = old.dec, decompressor{}
}

// close ends the reading: the cursors let go of their buffers.
func (r *pqReader) close() {
	r.closeGroup()
	for _, c := range r.cols {
		r.cur[c].release()
	}
	r.dec.close()
}

// closeGroup ends the reading of the current row group.
func (r *pqReader) closeGroup() {
	if r.open {
		for _, c := range r.cols {
			r.cur[c].close()
		}
		r.open = false
	}
}

// read appends up to limit of the next rows to b, converted but not
// checked; it returns false after the last.
func (r *pqReader) read(b *block, limit int) (bool, error) {
	for {
		if r.row >= r.end || r.gi >= len(r.pf.groups) {
			r.closeGroup()
			return false, nil
		}
		g := &r.pf.groups[r.gi]
		gEnd := min(g.start+g.rows, r.end)
		if !g.used || r.row >= gEnd {
			r.closeGroup()
			r.row = max(r.row, g.start+g.rows)
			r.gi++
			continue
		}
		if !r.open {
			for _, c := range r.cols {
				if err := r.cur[c].open(g, r.row); err != nil {
					r.closeGroup()
					return false, err
				}
			}
			r.open = true
		}
		k := int(min(int64(limit), gEnd-r.row))
		for _, c := range r.cols {
			a, err := r.cur[c].avail()
			if err != nil {
				return false, err
			}
			k = min(k, a)
		}
		n := b.Len()
		b.extend(k)
		for _, c := range r.cols {
			if err := r.cur[c].take(b, n, k); err != nil {
				b.Bars, b.pos = b.Bars.truncate(n), b.pos[:n]
				return false, err
			}
		}
		if r.pf.fileSymbol != "" {
			for i := n; i < n+k; i++ {
				b.Symbol[i] = r.fileSym
			}
		}
		for i := range k {
			b.pos[n+i] = r.row + int64(i) + 1
		}
		if g.stats {
			// The statistics decided which row groups to skip: they must
			// hold for the ones read.
			for i := n; i < n+k; i++ {
				if t := b.Time[i]; t < g.minT || t > g.maxT {
					err := r.pf.src.errorAt(b.pos[i], "timestamp", formatTime(t)+" is outside the row group's statistics ("+
						formatTime(g.minT)+" to "+formatTime(g.maxT)+"): the file is corrupt")
					b.Bars, b.pos = b.Bars.truncate(i), b.pos[:i]
					return false, err
				}
			}
		}
		r.row += int64(k)
		return true, nil
	}
}

// extend lengthens b's columns by k rows, their values unset.
func (b *block) extend(k int) {
	n := b.Len() + k
	if n > cap(b.Time) {
		b.reserve(max(n, 2*cap(b.Time)))
	}
	b.Time, b.Symbol = b.Time[:n], b.Symbol[:n]
	b.Open, b.High, b.Low, b.Close, b.Volume = b.Open[:n], b.High[:n], b.Low[:n], b.Close[:n], b.Volume[:n]
	b.pos = b.pos[:n]
}

// colCursor reads one column chunk page by page: the pages of a span at a
// time, checked against the hash the survey made of them when the set was
// opened, each page decompressed whole (it is at most maxPageBytes) and
// its values decoded a piece at a time.
type colCursor struct {
	pf   *pqFile
	dec  *decompressor
	col  int
	spec *pqColumn
	syms symResolver
	ch   *pqChunk

	si   int    // the span in span
	span []byte // its bytes
	sp   int    // where the next page starts in span
	buf  []byte // decompressed pages

	page     pageDecoder
	pageLeft int   // values of the page not decoded yet
	at, n    int   // the next value of the piece, and how many it has
	row      int64 // the row of value at (0-based)
	skip     int64 // rows to drop before the first one read
	v        pageValues
	sc       scratch
	// The chunk's dictionary, and the symbols of its entries (-1: not
	// looked up yet).
	dict    pageValues
	hasDict bool
	dictSym []int32
}

// pageValues are a piece of a page's values: the plain values, or the
// dictionary's values and the piece's indexes into them. One of the typed
// slices is set, by the column's physical type.
type pageValues struct {
	idx   []int32
	i32   []int32
	i64   []int64
	f32   []float32
	f64   []float64
	i96   []int96
	bytes []byte
	offs  []uint32 // BYTE_ARRAY: value i is bytes[offs[i]:offs[i+1]]
	size  int      // FIXED_LEN_BYTE_ARRAY: value i is bytes[i*size:(i+1)*size]
	count int      // number of values (of the dictionary, with idx)
}

// int96 is a legacy INT96 value: three little-endian 32-bit words.
type int96 [3]uint32

// scratch holds a piece's decoded values, reused from piece to piece.
type scratch struct {
	idx   []int32
	i32   []int32
	i64   []int64
	lens  []int64
	f32   []float32
	f64   []float64
	i96   []int96
	bytes []byte
	offs  []uint32
}

func (c *colCursor) fail(row int64, msg string, err error) *Error {
	return &Error{File: c.pf.src.path, Row: row + 1, Column: c.pf.src.columnName(c.col), Msg: msg, Err: err}
}

// open starts reading the cursor's column of row group g at row.
func (c *colCursor) open(g *pqGroup, row int64) error {
	c.close()
	c.ch = &g.chunks[c.col]
	if c.ch.dict {
		if err := c.loadSpan(0); err != nil {
			return err
		}
		h, body, err := c.nextRaw()
		if err != nil {
			return err
		}
		if h.typ != pageDict {
			return c.fail(row, "corrupt: the column chunk's dictionary page is not where it was", nil)
		}
		if err := c.loadDict(h, body); err != nil {
			return err
		}
	}
	// Start at the span that holds row: the spans before it are not read.
	si := c.ch.spanFor(row - g.start)
	if err := c.loadSpan(si); err != nil {
		return err
	}
	c.row = g.start + c.ch.spans[si].row
	c.skip = row - c.row
	c.at, c.n, c.pageLeft = 0, 0, 0
	return nil
}

// close ends the reading of the current chunk.
func (c *colCursor) close() {
	c.ch, c.hasDict, c.dictSym = nil, false, nil
	c.at, c.n, c.pageLeft = 0, 0, 0
}

// release lets go of the cursor's buffers.
func (c *colCursor) release() {
	c.close()
	c.span, c.buf, c.sc, c.dict = nil, nil, scratch{}, pageValues{}
}

// loadSpan reads span i of the chunk and checks it against the digest.
func (c *colCursor) loadSpan(i int) error {
	sp := &c.ch.spans[i]
	size := int(c.ch.spanEnd(i) - sp.off)
	if cap(c.span) < size {
		c.span = make([]byte, size)
	}
	c.span = c.span[:size]
	if _, err := c.pf.src.fh.ReadAt(c.span, sp.off); err != nil {
		return pathError(c.pf.src.path, err)
	}
	if maphash.Bytes(c.pf.src.set.seed, c.span) != sp.sum {
		return &Error{File: c.pf.src.path, Column: columnNames[c.col], columnar: true,
			Msg: "the file changed since it was opened: its bytes " + itoa64(sp.off) + " to " + itoa64(sp.off+int64(size)) +
				" are not those in the data's digest"}
	}
	c.si, c.sp = i, 0
	return nil
}

// nextRaw returns the next page of the chunk, reading the next span when
// the current one is done.
func (c *colCursor) nextRaw() (pageHeader, []byte, error) {
	for c.sp >= len(c.span) {
		if c.si+1 >= len(c.ch.spans) {
			return pageHeader{}, nil, c.fail(c.row, "corrupt: the column has fewer values than its row group has rows", nil)
		}
		if err := c.loadSpan(c.si + 1); err != nil {
			return pageHeader{}, nil, err
		}
	}
	h, err := parsePageHeader(c.span[c.sp:])
	if err != nil {
		return h, nil, c.fail(c.row, "corrupt page header", err)
	}
	end := c.sp + h.size + int(h.compressed)
	if end > len(c.span) {
		return h, nil, c.fail(c.row, "corrupt page header", nil)
	}
	body := c.span[c.sp+h.size : end]
	c.sp = end
	return h, body, nil
}

// nextPage moves to the next data page, skipping the pages of rows to
// drop without decoding them.
func (c *colCursor) nextPage() error {
	for {
		h, body, err := c.nextRaw()
		if err != nil {
			return err
		}
		switch h.typ {
		case pageIndex:
			continue
		case pageDict:
			return c.fail(c.row, "corrupt: a dictionary page after the column chunk's first page", nil)
		}
		if rows := h.rows(); c.skip >= rows {
			c.skip -= rows
			c.row += rows
			continue
		}
		return c.loadPage(h, body)
	}
}

// pageBuf returns the cursor's decompression buffer, n bytes long.
func (c *colCursor) pageBuf(n int) []byte {
	if cap(c.buf) < n {
		c.buf = make([]byte, n)
	}
	return c.buf[:n]
}

// decompress returns the uncompressed bytes of data, size bytes.
func (c *colCursor) decompress(data []byte, size int) ([]byte, error) {
	if c.ch.codec == codecNone {
		if len(data) != size {
			return nil, errSize
		}
		return data, nil
	}
	out := c.pageBuf(size)
	if err := c.dec.decode(c.ch.codec, out, data); err != nil {
		return nil, err
	}
	return out, nil
}

// loadDict decodes the chunk's dictionary page.
func (c *colCursor) loadDict(h pageHeader, body []byte) error {
	data, err := c.decompress(body, int(h.uncompressed))
	if err != nil {
		return c.fail(c.row, "corrupt dictionary page ("+codecName(c.ch.codec)+"): "+err.Error(), err)
	}
	if h.encoding != encPlain && h.encoding != encPlainDict {
		return c.fail(c.row, "corrupt dictionary page: "+encodingName(h.encoding)+" encoding", nil)
	}
	n := int(h.numValues)
	d := &c.dict
	*d = pageValues{idx: d.idx, i32: d.i32[:0], i64: d.i64[:0], f32: d.f32[:0], f64: d.f64[:0], i96: d.i96[:0], bytes: d.bytes[:0], offs: d.offs[:0]}
	var p plainDecoder
	p.init(data, c.spec.phys, c.spec.size)
	if w := p.width(); w > 0 && n > len(data)/w || w == 0 && n > len(data)/4 {
		return c.fail(c.row, "corrupt dictionary page: "+strconv.Itoa(n)+" values in "+strconv.Itoa(len(data))+" bytes", nil)
	}
	switch c.spec.phys {
	case pqInt32:
		d.i32 = grow(d.i32, n)
		err = p.int32s(d.i32)
	case pqInt64:
		d.i64 = grow(d.i64, n)
		err = p.int64s(d.i64)
	case pqInt96:
		d.i96 = grow(d.i96, n)
		err = p.int96s(d.i96)
	case pqFloat:
		d.f32 = grow(d.f32, n)
		err = p.float32s(d.f32)
	case pqDouble:
		d.f64 = grow(d.f64, n)
		err = p.float64s(d.f64)
	case pqByteArray:
		d.offs = grow(d.offs, n+1)
		d.bytes, err = p.byteArrays(d.bytes[:0], d.offs)
	case pqFixedLenByteArray:
		d.bytes = append(d.bytes[:0], data[:n*c.spec.size]...)
		d.size = c.spec.size
	}
	if err != nil {
		return c.fail(c.row, "corrupt dictionary page: "+err.Error(), err)
	}
	d.count = n
	c.hasDict, c.dictSym = true, nil
	return nil
}

// grow returns s with length n, reusing its room.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// loadPage starts decoding data page h, whose bytes are body.
func (c *colCursor) loadPage(h pageHeader, body []byte) error {
	n := int(h.numValues)
	var levels hybridDecoder
	var values []byte
	checkLevels := false
	switch h.typ {
	case pageData:
		data, err := c.decompress(body, int(h.uncompressed))
		if err != nil {
			return c.fail(c.row, "corrupt page ("+codecName(c.ch.codec)+"): "+err.Error(), err)
		}
		values = data
		if c.spec.optional {
			switch h.defEncoding {
			case encRLE:
				if len(data) < 4 {
					return c.fail(c.row, "corrupt page: "+errShort.Error(), nil)
				}
				l := binary.LittleEndian.Uint32(data)
				if uint64(l) > uint64(len(data)-4) {
					return c.fail(c.row, "corrupt page: "+errShort.Error(), nil)
				}
				levels.init(data[4:4+l], 1)
				values = data[4+l:]
				checkLevels = true
			case encBitPacked:
				nb := (n + 7) / 8
				if nb > len(data) {
					return c.fail(c.row, "corrupt page: "+errShort.Error(), nil)
				}
				for i := range n {
					if data[i/8]&(0x80>>(i%8)) == 0 {
						return c.fail(c.row+int64(i), "null", nil)
					}
				}
				values = data[nb:]
			default:
				return c.fail(c.row, "corrupt page: definition levels in "+encodingName(h.defEncoding), nil)
			}
		}
	case pageDataV2:
		lv := int(h.repLen + h.defLen)
		if c.spec.optional && h.defLen > 0 {
			levels.init(body[h.repLen:lv], 1)
			checkLevels = true
		} else if h.numNulls > 0 {
			return c.fail(c.row, "null", nil)
		}
		size := int(h.uncompressed) - lv
		if h.v2Compressed {
			data, err := c.decompress(body[lv:], size)
			if err != nil {
				return c.fail(c.row, "corrupt page ("+codecName(c.ch.codec)+"): "+err.Error(), err)
			}
			values = data
		} else {
			values = body[lv:]
			if len(values) != size {
				return c.fail(c.row, "corrupt page: "+errSize.Error(), nil)
			}
		}
	}
	if checkLevels {
		i, err := levels.firstNot(n, 1)
		if err != nil {
			return c.fail(c.row, "corrupt page: definition levels: "+err.Error(), err)
		}
		if i >= 0 {
			return c.fail(c.row+int64(i), "null", nil)
		}
	}
	if msg := c.page.init(h.encoding, values, n, c.spec, c.hasDict); msg != "" {
		return c.fail(c.row, "corrupt page: "+msg, nil)
	}
	c.pageLeft = n
	return nil
}

// avail returns the values left in the current piece, decoding the next
// piece (and reading the next page) when none are.
func (c *colCursor) avail() (int, error) {
	for c.at >= c.n || c.skip > 0 {
		if c.at < c.n {
			k := int(min(c.skip, int64(c.n-c.at)))
			c.at += k
			c.row += int64(k)
			c.skip -= int64(k)
			continue
		}
		if c.pageLeft > 0 {
			if err := c.piece(); err != nil {
				return 0, err
			}
			continue
		}
		if err := c.nextPage(); err != nil {
			return 0, err
		}
	}
	return c.n - c.at, nil
}

// piece decodes the page's next values, up to pieceValues.
func (c *colCursor) piece() error {
	k := min(c.pageLeft, pieceValues)
	c.v = pageValues{}
	if msg := c.page.next(k, &c.sc, &c.v, &c.dict); msg != "" {
		return c.fail(c.row, "corrupt page: "+msg, nil)
	}
	c.at, c.n = 0, k
	c.pageLeft -= k
	return nil
}

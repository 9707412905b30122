package data

import (
	"context"
	"crypto/sha256"
	"hash"
	"io"
	"math"
	"math/big"
	"os"
	"sort"
	"strconv"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"
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
}

func (pf *pqFile) newReader(cols []int, syms symResolver, from, end int64) *pqReader {
	r := &pqReader{pf: pf, cols: cols, syms: syms, row: from, end: end}
	if pf.fileSymbol != "" {
		r.fileSym, _ = syms.intern([]byte(pf.fileSymbol))
	}
	for _, c := range cols {
		r.cur[c] = colCursor{pf: pf, col: c, spec: &pf.cols[c], syms: syms}
	}
	r.gi = sort.Search(len(pf.groups), func(i int) bool { return pf.groups[i].start+pf.groups[i].rows > from })
	return r
}

func (r *pqReader) close() {
	if r.open {
		for _, c := range r.cols {
			r.cur[c].close()
		}
		r.open = false
	}
}

// read appends up to max of the next rows to b, converted but not
// checked; it returns false after the last.
func (r *pqReader) read(b *block, max int) (bool, error) {
	for {
		if r.row >= r.end || r.gi >= len(r.pf.groups) {
			r.close()
			return false, nil
		}
		g := &r.pf.groups[r.gi]
		gEnd := min(g.start+g.rows, r.end)
		if !g.used || r.row >= gEnd {
			r.close()
			r.row = max64(r.row, g.start+g.rows)
			r.gi++
			continue
		}
		if !r.open {
			for _, c := range r.cols {
				if err := r.cur[c].open(g, r.row); err != nil {
					r.close()
					return false, err
				}
			}
			r.open = true
		}
		k := int(min(int64(max), gEnd-r.row))
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

func max64(a, b int64) int64 { return max(a, b) }

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

// colCursor reads one column chunk page by page.
type colCursor struct {
	pf    *pqFile
	col   int
	spec  *pqColumn
	syms  symResolver
	pages parquet.Pages
	page  parquet.Page
	at, n int   // the next value of the page, and how many it has
	row   int64 // the row of value at (0-based)
	skip  int64 // rows to drop before the first one read
	v     pageValues
	// Symbols of the current dictionary's entries (-1: not looked up yet).
	dict    parquet.Dictionary
	dictSym []int32
}

// pageValues are a decoded page's values: the plain values, or the
// dictionary's values and the page's indexes into them. One of the typed
// slices is set, by the column's physical type.
type pageValues struct {
	idx   []int32
	i32   []int32
	i64   []int64
	f32   []float32
	f64   []float64
	i96   []deprecated.Int96
	bytes []byte
	offs  []uint32 // BYTE_ARRAY: value i is bytes[offs[i]:offs[i+1]]
	size  int      // FIXED_LEN_BYTE_ARRAY: value i is bytes[i*size:(i+1)*size]
	count int      // number of values (of the dictionary, with idx)
}

func (c *colCursor) fail(row int64, msg string, err error) *Error {
	return &Error{File: c.pf.src.path, Row: row + 1, Column: columnNames[c.col], Msg: msg, Err: err}
}

// open starts reading the cursor's column of row group g at row.
func (c *colCursor) open(g *pqGroup, row int64) error {
	c.close()
	chunk := c.pf.f.RowGroups()[g.index].ColumnChunks()[c.spec.leaf]
	err := c.pf.protect("column chunk", func() error {
		c.pages = chunk.Pages()
		return nil
	})
	if err != nil {
		return c.fail(row, "cannot read the column: "+err.Error(), err)
	}
	// Rows before row are read and dropped rather than sought with the
	// decoder's SeekToRow: without a page index it decodes them as well,
	// and counting them here keeps every reader of a file in step, also
	// when its pages are corrupt.
	c.row, c.at, c.n, c.skip = g.start, 0, 0, row-g.start
	return nil
}

func (c *colCursor) close() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	if c.pages != nil {
		c.pf.protect("column chunk", c.pages.Close)
		c.pages = nil
	}
	c.dict, c.dictSym = nil, nil
}

// avail returns the values left in the current page, reading the next
// page when none are.
func (c *colCursor) avail() (int, error) {
	for c.at >= c.n || c.skip > 0 {
		if c.at < c.n {
			k := int(min(c.skip, int64(c.n-c.at)))
			c.at += k
			c.row += int64(k)
			c.skip -= int64(k)
			continue
		}
		if c.page != nil {
			parquet.Release(c.page)
			c.page = nil
		}
		var p parquet.Page
		err := c.pf.protect("page", func() error {
			var err error
			p, err = c.pages.ReadPage()
			return err
		})
		if err == io.EOF {
			return 0, c.fail(c.row, "corrupt: the column has fewer values than its row group has rows", nil)
		}
		if err != nil {
			return 0, c.fail(c.row, "corrupt page: "+err.Error(), err)
		}
		c.page = p
		if err := c.load(p); err != nil {
			return 0, err
		}
	}
	return c.n - c.at, nil
}

// load takes the values of page p.
func (c *colCursor) load(p parquet.Page) error {
	var msg string
	err := c.pf.protect("page", func() error {
		msg = c.loadValues(p)
		return nil
	})
	if err != nil {
		return c.fail(c.row, err.Error(), err)
	}
	if msg == "null" {
		levels := p.DefinitionLevels()
		k := 0
		for k < len(levels) && levels[k] != 0 {
			k++
		}
		return c.fail(c.row+int64(k), "null", nil)
	}
	if msg != "" {
		return c.fail(c.row, "corrupt page: "+msg, nil)
	}
	return nil
}

// loadValues sets c.v to the values of page p, or says what is wrong.
func (c *colCursor) loadValues(p parquet.Page) string {
	if p.NumNulls() > 0 {
		return "null"
	}
	nv := p.NumValues()
	if nv <= 0 || nv > math.MaxInt32 || p.NumRows() != nv {
		return "it has " + itoa64(nv) + " values in " + itoa64(p.NumRows()) + " rows"
	}
	n := int(nv)
	c.v = pageValues{}
	data := p.Data()
	values := data
	if d := p.Dictionary(); d != nil {
		if data.Kind() != encoding.Int32 {
			return "dictionary indexes of type " + data.Kind().String()
		}
		c.v.idx = data.Int32()
		if len(c.v.idx) != n {
			return "it has " + strconv.Itoa(len(c.v.idx)) + " dictionary indexes for " + strconv.Itoa(n) + " values"
		}
		values = d.Page().Data()
		if d != c.dict {
			c.dict, c.dictSym = d, nil
		}
	}
	var count int
	switch c.spec.phys {
	case format.Int32:
		if values.Kind() != encoding.Int32 {
			return "values of type " + values.Kind().String()
		}
		c.v.i32 = values.Int32()
		count = len(c.v.i32)
	case format.Int64:
		if values.Kind() != encoding.Int64 {
			return "values of type " + values.Kind().String()
		}
		c.v.i64 = values.Int64()
		count = len(c.v.i64)
	case format.Int96:
		if values.Kind() != encoding.Int96 {
			return "values of type " + values.Kind().String()
		}
		c.v.i96 = values.Int96()
		count = len(c.v.i96)
	case format.Float:
		if values.Kind() != encoding.Float {
			return "values of type " + values.Kind().String()
		}
		c.v.f32 = values.Float()
		count = len(c.v.f32)
	case format.Double:
		if values.Kind() != encoding.Double {
			return "values of type " + values.Kind().String()
		}
		c.v.f64 = values.Double()
		count = len(c.v.f64)
	case format.ByteArray:
		if values.Kind() != encoding.ByteArray {
			return "values of type " + values.Kind().String()
		}
		c.v.bytes, c.v.offs = values.ByteArray()
		count = len(c.v.offs) - 1
		if count < 0 {
			return "no value offsets"
		}
		for i := range count {
			if c.v.offs[i] > c.v.offs[i+1] || int(c.v.offs[i+1]) > len(c.v.bytes) {
				return "bad value offsets"
			}
		}
	case format.FixedLenByteArray:
		if values.Kind() != encoding.FixedLenByteArray {
			return "values of type " + values.Kind().String()
		}
		c.v.bytes, c.v.size = values.FixedLenByteArray()
		if c.v.size <= 0 {
			return "values of size " + strconv.Itoa(c.v.size)
		}
		count = len(c.v.bytes) / c.v.size
	default:
		return "values of type " + c.spec.phys.String()
	}
	c.v.count = count
	if c.v.idx == nil {
		if count != n {
			return "it has " + strconv.Itoa(count) + " values, its header says " + strconv.Itoa(n)
		}
	} else {
		for _, j := range c.v.idx {
			if uint32(j) >= uint32(count) {
				return "dictionary index " + strconv.Itoa(int(j)) + " out of range (" + strconv.Itoa(count) + " entries)"
			}
		}
	}
	c.at, c.n = 0, n
	return ""
}

// take converts k values of the cursor into rows [n, n+k) of b.
func (c *colCursor) take(b *block, n, k int) error {
	at := c.at
	var err error
	switch c.col {
	case colTimestamp:
		err = c.takeTime(b.Time[n:n+k], at)
	case colSymbol:
		err = c.takeSymbol(b.Symbol[n:n+k], at)
	case colOpen:
		c.takeNumber(b.Open[n:n+k], at)
	case colHigh:
		c.takeNumber(b.High[n:n+k], at)
	case colLow:
		c.takeNumber(b.Low[n:n+k], at)
	case colClose:
		c.takeNumber(b.Close[n:n+k], at)
	case colVolume:
		c.takeNumber(b.Volume[n:n+k], at)
	}
	c.at += k
	c.row += int64(k)
	return err
}

type integer interface {
	~int32 | ~int64 | ~uint32 | ~uint64
}

type number interface {
	integer | ~float32 | ~float64
}

// gather sets dst[i] to value at+i of a page: vals[at+i], or
// vals[idx[at+i]] through a dictionary.
func gather[T, U number](dst []U, vals []T, idx []int32, at int) {
	if idx == nil {
		for i, x := range vals[at : at+len(dst)] {
			dst[i] = U(x)
		}
		return
	}
	for i, j := range idx[at : at+len(dst)] {
		dst[i] = U(vals[j])
	}
}

// valueIndex is the index into the page's (or dictionary's) values of
// value at+i.
func (v *pageValues) valueIndex(at, i int) int {
	if v.idx != nil {
		return int(v.idx[at+i])
	}
	return at + i
}

func (c *colCursor) takeTime(dst []int64, at int) error {
	v := &c.v
	switch {
	case v.i64 != nil:
		gather(dst, v.i64, v.idx, at)
	case v.i32 != nil:
		gather(dst, v.i32, v.idx, at)
	case v.i96 != nil:
		for i := range dst {
			t, ok := int96Time(v.i96[v.valueIndex(at, i)])
			if !ok {
				return c.fail(c.row+int64(i), errTimestampRange.Error(), nil)
			}
			dst[i] = t
		}
		return nil
	}
	conv := c.spec.conv
	if conv == convTimeNanos {
		return nil
	}
	for i, x := range dst {
		t, err := convertTime(conv, x)
		if err != nil {
			return c.fail(c.row+int64(i), err.Error()+": "+strconv.FormatInt(x, 10), nil)
		}
		dst[i] = t
	}
	return nil
}

// int96Time converts an INT96 timestamp: nanoseconds of the day, then the
// Julian day number.
func int96Time(x deprecated.Int96) (int64, bool) {
	nanos := int64(uint64(x[0]) | uint64(x[1])<<32)
	day := int64(int32(x[2])) - 2_440_588 // the Julian day of 1970-01-01
	const dayNanos = 86_400_000_000_000
	if nanos < 0 || nanos >= dayNanos || day > math.MaxInt64/dayNanos-1 || day < math.MinInt64/dayNanos+1 {
		return 0, false
	}
	return day*dayNanos + nanos, true
}

func (c *colCursor) takeSymbol(dst []int32, at int) error {
	v := &c.v
	value := func(j int) []byte { return v.bytes[v.offs[j]:v.offs[j+1]] }
	if v.idx == nil {
		for i := range dst {
			s, msg := c.syms.intern(value(at + i))
			if msg != "" {
				return c.fail(c.row+int64(i), msg, nil)
			}
			dst[i] = s
		}
		return nil
	}
	if c.dictSym == nil {
		c.dictSym = make([]int32, v.count)
		for i := range c.dictSym {
			c.dictSym[i] = -1
		}
	}
	for i := range dst {
		j := v.idx[at+i]
		s := c.dictSym[j]
		if s < 0 {
			var msg string
			if s, msg = c.syms.intern(value(int(j))); msg != "" {
				return c.fail(c.row+int64(i), msg, nil)
			}
			c.dictSym[j] = s
		}
		dst[i] = s
	}
	return nil
}

// takeNumber converts prices or volumes; they are checked later, with the
// rest of their bar.
func (c *colCursor) takeNumber(dst []float64, at int) {
	v := &c.v
	if c.spec.conv == convDecimal {
		scale := c.spec.scale
		for i := range dst {
			j := v.valueIndex(at, i)
			switch {
			case v.i32 != nil:
				dst[i] = decimalValue(int64(v.i32[j]), scale)
			case v.i64 != nil:
				dst[i] = decimalValue(v.i64[j], scale)
			case v.offs != nil:
				dst[i] = decimalBytes(v.bytes[v.offs[j]:v.offs[j+1]], scale)
			default:
				dst[i] = decimalBytes(v.bytes[j*v.size:(j+1)*v.size], scale)
			}
		}
		return
	}
	switch {
	case v.f64 != nil:
		if v.idx == nil {
			copy(dst, v.f64[at:])
		} else {
			gather(dst, v.f64, v.idx, at)
		}
	case v.f32 != nil:
		gather(dst, v.f32, v.idx, at)
	case v.i64 != nil && c.spec.unsigned:
		for i := range dst {
			dst[i] = float64(uint64(v.i64[v.valueIndex(at, i)]))
		}
	case v.i64 != nil:
		gather(dst, v.i64, v.idx, at)
	case v.i32 != nil && c.spec.unsigned:
		for i := range dst {
			dst[i] = float64(uint32(v.i32[v.valueIndex(at, i)]))
		}
	case v.i32 != nil:
		gather(dst, v.i32, v.idx, at)
	}
}

// exactPow10 holds the powers of ten that float64 represents exactly.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// decimalValue is unscaled × 10^-scale, correctly rounded: the float64 the
// same decimal written as text reads as.
func decimalValue(unscaled int64, scale int) float64 {
	if scale == 0 {
		return float64(unscaled) // a conversion rounds correctly
	}
	if unscaled > -1<<53 && unscaled < 1<<53 && scale < len(exactPow10) {
		// Both operands exact: one correctly rounded division.
		return float64(unscaled) / exactPow10[scale]
	}
	f, _ := strconv.ParseFloat(strconv.FormatInt(unscaled, 10)+"e-"+strconv.Itoa(scale), 64)
	return f
}

// decimalBytes converts a big-endian two's complement unscaled decimal.
func decimalBytes(b []byte, scale int) float64 {
	if len(b) == 0 {
		return 0
	}
	if len(b) <= 8 {
		var u uint64
		for _, x := range b {
			u = u<<8 | uint64(x)
		}
		if shift := 64 - 8*len(b); shift > 0 {
			u = uint64(int64(u<<shift) >> shift) // sign-extend
		}
		return decimalValue(int64(u), scale)
	}
	n := new(big.Int).SetBytes(b)
	if b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	f, _ := strconv.ParseFloat(n.String()+"e-"+strconv.Itoa(scale), 64)
	return f
}

// fileHashes hashes the column chunks of a Parquet file that a set uses,
// as they are read: it is the io.ReaderAt the decoder reads the file
// through. Each chunk is hashed in order, once, whichever reader reads
// it; bytes skipped ahead of a read are read for the hash on the spot.
type fileHashes struct {
	fh     *os.File
	footer [sha256.Size]byte

	mu     sync.Mutex
	chunks []*chunkHash // sorted by start, disjoint
	order  []*chunkHash // the same, in row group and column order
	sum    *[sha256.Size]byte
}

// chunkHash is the hash of bytes [start, end) of a file, done up to next.
type chunkHash struct {
	start, end, next int64
	h                hash.Hash
	sum              [sha256.Size]byte
}

// track sets the chunks to hash, in the order their digests combine.
func (fh *fileHashes) track(path string, chunks []*chunkHash) error {
	sorted := make([]*chunkHash, len(chunks))
	copy(sorted, chunks)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].start < sorted[j].start })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].start < sorted[i-1].end {
			return &Error{File: path, Msg: "corrupt footer: column chunks overlap"}
		}
	}
	fh.mu.Lock()
	defer fh.mu.Unlock()
	fh.chunks = sorted
	fh.order = chunks
	return nil
}

func (fh *fileHashes) ReadAt(p []byte, off int64) (int, error) {
	n, err := fh.fh.ReadAt(p, off)
	if n > 0 {
		fh.observe(p[:n], off)
	}
	return n, err
}

// observe hashes what of p, read at off, is next in a chunk.
func (fh *fileHashes) observe(p []byte, off int64) {
	fh.mu.Lock()
	defer fh.mu.Unlock()
	end := off + int64(len(p))
	i := sort.Search(len(fh.chunks), func(i int) bool { return fh.chunks[i].end > off })
	for ; i < len(fh.chunks) && fh.chunks[i].start < end; i++ {
		c := fh.chunks[i]
		if c.next >= c.end || c.next >= end {
			continue
		}
		if c.next < off && fh.fill(c, off) != nil {
			continue // hashed later, by digest
		}
		hi := min(c.end, end)
		c.h.Write(p[c.next-off : hi-off])
		c.next = hi
		if c.next == c.end {
			c.h.Sum(c.sum[:0])
		}
	}
}

// fill hashes c's bytes up to off, reading them.
func (fh *fileHashes) fill(c *chunkHash, off int64) error {
	buf := make([]byte, min(off-c.next, 1<<20))
	for c.next < off {
		m := int(min(off-c.next, int64(len(buf))))
		if _, err := fh.fh.ReadAt(buf[:m], c.next); err != nil {
			return err
		}
		c.h.Write(buf[:m])
		c.next += int64(m)
	}
	if c.next == c.end {
		c.h.Sum(c.sum[:0])
	}
	return nil
}

// digest finishes the hashes and combines them with the footer's.
func (fh *fileHashes) digest(ctx context.Context, path string) ([sha256.Size]byte, error) {
	fh.mu.Lock()
	defer fh.mu.Unlock()
	if fh.sum != nil {
		return *fh.sum, nil
	}
	for _, c := range fh.chunks {
		if err := ctx.Err(); err != nil {
			return [sha256.Size]byte{}, err
		}
		if c.next < c.end {
			if err := fh.fill(c, c.end); err != nil {
				return [sha256.Size]byte{}, pathError(path, err)
			}
		}
	}
	h := sha256.New()
	h.Write(fh.footer[:])
	for _, c := range fh.order {
		h.Write(c.sum[:])
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	fh.sum = &sum
	return sum, nil
}

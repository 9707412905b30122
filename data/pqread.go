package data

import (
	"io"
	"math"
	"sort"
	"strconv"

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

func (pf *pqFile) newReader(cols []int, syms symResolver, from, end int64) tableReader {
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

// read appends up to limit of the next rows to b, converted but not
// checked; it returns false after the last.
func (r *pqReader) read(b *block, limit int) (bool, error) {
	for {
		if r.row >= r.end || r.gi >= len(r.pf.groups) {
			r.close()
			return false, nil
		}
		g := &r.pf.groups[r.gi]
		gEnd := min(g.start+g.rows, r.end)
		if !g.used || r.row >= gEnd {
			r.close()
			r.row = max(r.row, g.start+g.rows)
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
	return &Error{File: c.pf.src.path, Row: row + 1, Column: c.pf.src.columnName(c.col), Msg: msg, Err: err}
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
	if want, ok := pageKinds[c.spec.phys]; ok && values.Kind() != want {
		return "values of type " + values.Kind().String()
	}
	var count int
	switch c.spec.phys {
	case format.Int32:
		c.v.i32 = values.Int32()
		count = len(c.v.i32)
	case format.Int64:
		c.v.i64 = values.Int64()
		count = len(c.v.i64)
	case format.Int96:
		c.v.i96 = values.Int96()
		count = len(c.v.i96)
	case format.Float:
		c.v.f32 = values.Float()
		count = len(c.v.f32)
	case format.Double:
		c.v.f64 = values.Double()
		count = len(c.v.f64)
	case format.ByteArray:
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

// pageKinds is the kind of values a page of each physical type must hold
// (encoding.Kind numbers the types one above format.Type).
var pageKinds = map[format.Type]encoding.Kind{
	format.Int32:             encoding.Int32,
	format.Int64:             encoding.Int64,
	format.Int96:             encoding.Int96,
	format.Float:             encoding.Float,
	format.Double:            encoding.Double,
	format.ByteArray:         encoding.ByteArray,
	format.FixedLenByteArray: encoding.FixedLenByteArray,
}

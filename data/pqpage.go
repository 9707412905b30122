package data

import (
	"bufio"
	"context"
	"errors"
	"hash"
	"hash/maphash"
	"io"
	"slices"
	"strconv"
	"unsafe"
)

// Limits on what a Parquet file's own headers may make stratbench hold.
const (
	// maxFooterBytes bounds a file's footer: it is refused before it is
	// read when it claims more. Writers make footers of a few KiB to a few
	// MiB (a file of thousands of row groups).
	maxFooterBytes = 16 << 20
	// maxPageBytes bounds one page, compressed and uncompressed: a page is
	// decompressed whole (its values are decoded a piece at a time).
	// Writers make pages of about 1 MiB (pyarrow, polars, Spark), 256 KiB
	// (parquet-go) or up to a column chunk (fastparquet's defaults).
	maxPageBytes = 16 << 20
	// maxPageHeader bounds a page's header (its statistics make it grow).
	maxPageHeader = 256 << 10
	// spanBytes is the size of the stretches of a column chunk that are
	// checked against the data's digest as a stream reads them: pages are
	// read a span at a time, a span being pages of at most spanBytes in
	// all, or one larger page.
	spanBytes = 1 << 20
	// pieceValues is how many values a page's decoder produces at a time.
	pieceValues = 1024
)

// Page types.
const (
	pageData   = 0
	pageIndex  = 1
	pageDict   = 2
	pageDataV2 = 3
)

// Value encodings.
const (
	encPlain          = 0
	encPlainDict      = 2
	encRLE            = 3
	encBitPacked      = 4
	encDeltaBinary    = 5
	encDeltaLength    = 6
	encDeltaByteArray = 7
	encRLEDict        = 8
	encByteStreamSp   = 9
)

var encodingNames = map[int32]string{encPlain: "PLAIN", encPlainDict: "PLAIN_DICTIONARY", encRLE: "RLE", encBitPacked: "BIT_PACKED",
	encDeltaBinary: "DELTA_BINARY_PACKED", encDeltaLength: "DELTA_LENGTH_BYTE_ARRAY", encDeltaByteArray: "DELTA_BYTE_ARRAY",
	encRLEDict: "RLE_DICTIONARY", encByteStreamSp: "BYTE_STREAM_SPLIT"}

func encodingName(e int32) string {
	if s, ok := encodingNames[e]; ok {
		return s
	}
	return "encoding " + itoa64(int64(e))
}

// pageHeader is a page's header.
type pageHeader struct {
	typ          int32
	uncompressed int32
	compressed   int32
	numValues    int32
	encoding     int32
	defEncoding  int32 // v1: of the definition levels
	numNulls     int32 // v2
	numRows      int32 // v2
	defLen       int32 // v2: bytes of definition levels
	repLen       int32 // v2: bytes of repetition levels
	v2Compressed bool  // v2: whether the values are compressed
	size         int   // bytes of the header itself
}

// rows is the number of rows the page holds (a column of bars is flat:
// one value, or null, a row).
func (h *pageHeader) rows() int64 {
	if h.typ == pageDataV2 {
		return int64(h.numRows)
	}
	return int64(h.numValues)
}

// parsePageHeader reads the header at the start of b.
func parsePageHeader(b []byte) (pageHeader, error) {
	r := &thriftReader{b: b}
	h := pageHeader{typ: -1, uncompressed: -1, compressed: -1, numValues: -1, encoding: -1, v2Compressed: true}
	var sub int16 // the field of the type's own header, once read
	err := r.structure(func(f field) error {
		var err error
		switch {
		case f.id == 1 && f.typ == tI32:
			h.typ, err = r.i32()
		case f.id == 2 && f.typ == tI32:
			h.uncompressed, err = r.i32()
		case f.id == 3 && f.typ == tI32:
			h.compressed, err = r.i32()
		case (f.id == 5 || f.id == 7 || f.id == 8) && f.typ == tStruct:
			sub = f.id
			err = r.structure(func(g field) error {
				if g.typ != tI32 && g.typ != tTrue && g.typ != tFalse {
					return r.skip(g.typ)
				}
				if g.typ != tI32 {
					if f.id == 8 && g.id == 7 {
						h.v2Compressed = g.typ == tTrue
					}
					return nil
				}
				v, err := r.i32()
				switch {
				case g.id == 1:
					h.numValues = v
				case f.id != 8 && g.id == 2, f.id == 8 && g.id == 4:
					h.encoding = v
				case f.id == 5 && g.id == 3:
					h.defEncoding = v
				case f.id == 8 && g.id == 2:
					h.numNulls = v
				case f.id == 8 && g.id == 3:
					h.numRows = v
				case f.id == 8 && g.id == 5:
					h.defLen = v
				case f.id == 8 && g.id == 6:
					h.repLen = v
				}
				return err
			})
		default:
			err = r.skip(f.typ)
		}
		return err
	})
	if err != nil {
		return h, err
	}
	h.size = r.pos
	want := map[int32]int16{pageData: 5, pageDict: 7, pageDataV2: 8}[h.typ]
	switch {
	case h.uncompressed < 0 || h.compressed < 0:
		return h, errThrift
	case h.typ == pageIndex:
		return h, nil
	case want == 0 || sub != want || h.numValues < 0 || h.encoding < 0:
		return h, errThrift
	case h.typ == pageDataV2 && (h.numNulls < 0 || h.numRows < 0 || h.defLen < 0 || h.repLen < 0 ||
		int64(h.defLen)+int64(h.repLen) > int64(min(h.compressed, h.uncompressed))):
		return h, errThrift
	}
	return h, nil
}

// pqSpan is a stretch of a column chunk's pages, and the hash of its bytes
// when the set was opened.
type pqSpan struct {
	off int64  // where its first page's header starts
	row int64  // rows of the chunk before it
	sum uint64 // maphash of its bytes, with the set's seed
}

// pqChunk is a column chunk of a row group the window needs.
type pqChunk struct {
	start, end int64 // its bytes
	codec      int32
	dict       bool     // spans[0] is its dictionary page
	spans      []pqSpan // from the survey
}

// spanEnd is where span i of the chunk ends.
func (ch *pqChunk) spanEnd(i int) int64 {
	if i+1 < len(ch.spans) {
		return ch.spans[i+1].off
	}
	return ch.end
}

// colStats are the largest sizes a column's pages have in a file, from
// the survey: they bound what a stream of the file holds per column.
type colStats struct {
	span  int64 // a span's bytes
	page  int64 // a data page, uncompressed
	dict  int64 // a dictionary page, uncompressed
	codec int32 // a codec the column uses, for its scratch memory
}

// survey reads every page header of the chunk, checking it, and hashes
// the chunk's bytes: into file, the file's digest, and span by span with
// seed, the spans a stream checks what it reads against. rows is the row
// group's row count; the pages must hold exactly that many rows.
func (pf *pqFile) survey(ctx context.Context, ch *pqChunk, c int, rows int64, br *bufio.Reader, file hash.Hash, seed maphash.Seed, buf []byte) error {
	fail := func(msg string) error {
		return &Error{File: pf.src.path, Column: columnNames[c], Msg: msg, columnar: true}
	}
	br.Reset(io.NewSectionReader(pf.src.fh, ch.start, ch.end-ch.start))
	st := &pf.stats[c]
	if msg := codecSupported(ch.codec); msg != "" {
		return fail(msg)
	}
	if codecScratch(ch.codec) > codecScratch(st.codec) {
		st.codec = ch.codec
	}
	var (
		span     maphash.Hash
		spanOpen bool
		spanLen  int64
		seen     int64 // rows of the pages read
		pos      = ch.start
		pages    int
	)
	span.SetSeed(seed)
	closeSpan := func() {
		if spanOpen {
			ch.spans[len(ch.spans)-1].sum = span.Sum64()
			st.span = max(st.span, spanLen)
			span.Reset()
			spanOpen, spanLen = false, 0
		}
	}
	out := io.MultiWriter(file, &span)
	for pos < ch.end {
		if pages%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		h, err := peekHeader(br, ch.end-pos)
		if err != nil {
			var de *Error
			if errors.As(err, &de) {
				return err
			}
			if err == errThrift {
				return fail("corrupt page header at byte " + itoa64(pos))
			}
			return pathError(pf.src.path, err)
		}
		total := int64(h.size) + int64(h.compressed)
		switch {
		case total > ch.end-pos:
			return fail("truncated or corrupt: a page at byte " + itoa64(pos) + " runs past its column chunk")
		case int64(h.compressed) > maxPageBytes || int64(h.uncompressed) > maxPageBytes:
			return fail("a page of " + sizeText(int64(max(h.compressed, h.uncompressed))) + " (at byte " + itoa64(pos) +
				"): pages over " + sizeText(maxPageBytes) + " are not read; write the file with smaller pages (pyarrow: data_page_size)")
		case h.typ == pageDict && pages > 0:
			return fail("corrupt: a dictionary page after the first page of a column chunk")
		}
		if h.typ == pageDict || spanOpen && spanLen+total > spanBytes || pages == 1 && ch.dict {
			closeSpan()
		}
		if !spanOpen {
			if err := pf.src.set.charge(pf.src.path, spanCost); err != nil {
				return err
			}
			ch.spans = append(ch.spans, pqSpan{off: pos, row: seen})
			spanOpen = true
		}
		if _, err := io.CopyBuffer(out, io.LimitReader(br, total), buf); err != nil {
			return pathError(pf.src.path, err)
		}
		spanLen += total
		switch h.typ {
		case pageDict:
			ch.dict = true
			st.dict = max(st.dict, int64(h.uncompressed))
		case pageData, pageDataV2:
			if h.typ == pageDataV2 && h.numRows != h.numValues {
				return fail("corrupt page: " + strconv.Itoa(int(h.numValues)) + " values in " + strconv.Itoa(int(h.numRows)) + " rows (a nested column?)")
			}
			seen += h.rows()
			st.page = max(st.page, int64(h.uncompressed))
		}
		pos += total
		pages++
	}
	closeSpan()
	if seen != rows {
		return fail("corrupt: the column chunk's pages hold " + itoa64(seen) + " rows, its row group " + itoa64(rows))
	}
	return nil
}

var spanCost = int64(unsafe.Sizeof(pqSpan{}))

// peekHeader parses the page header next in br, of the at most left bytes
// of the chunk, without consuming it: it peeks at a few hundred bytes,
// and more only while the header needs them.
func peekHeader(br *bufio.Reader, left int64) (pageHeader, error) {
	for n := int64(512); ; n *= 4 {
		n = min(n, left, maxPageHeader)
		peek, err := br.Peek(int(n))
		if err != nil && err != io.EOF && len(peek) < int(n) {
			return pageHeader{}, err
		}
		h, perr := parsePageHeader(peek)
		if perr == nil {
			return h, nil
		}
		if n == min(left, maxPageHeader) {
			return pageHeader{}, errThrift
		}
	}
}

// sizeText writes a byte count for a message: in MiB or KiB, to a tenth.
func sizeText(n int64) string {
	unit := func(u int64, name string) string {
		if n%u == 0 {
			return itoa64(n/u) + " " + name
		}
		return strconv.FormatFloat(float64(n)/float64(u), 'f', 1, 64) + " " + name
	}
	switch {
	case n >= 1<<20:
		return unit(1<<20, "MiB")
	case n >= 1<<10:
		return unit(1<<10, "KiB")
	}
	return itoa64(n) + " bytes"
}

// need is the memory a reader of the file's columns cols holds at most:
// per column a span of pages, a decompressed page, the dictionary decoded
// and a piece of values, and the codecs' own, from the survey's sizes.
func (pf *pqFile) need(cols []int) int64 {
	var n, codec int64
	for _, c := range cols {
		st := &pf.stats[c]
		if pf.cols[c].leaf < 0 {
			continue
		}
		dict := st.dict
		if pf.cols[c].phys == pqByteArray {
			dict *= 2 // the values and their offsets
		}
		piece := int64(pieceValues * 16)
		if pf.cols[c].phys == pqByteArray || pf.cols[c].phys == pqFixedLenByteArray {
			piece += st.page // a piece of byte arrays copies at most its page
		}
		n += st.span + max(st.page, st.dict) + dict + piece
		codec = max(codec, codecScratch(st.codec))
	}
	return n + codec + blockBars*(barBytes+8)*2
}

// spanFor returns the span of the chunk's data pages that holds row (of
// the chunk, 0-based).
func (ch *pqChunk) spanFor(row int64) int {
	first := 0
	if ch.dict {
		first = 1
	}
	data := ch.spans[first:]
	i, _ := slices.BinarySearchFunc(data, row, func(s pqSpan, r int64) int {
		switch {
		case s.row < r:
			return -1
		case s.row > r:
			return 1
		}
		return 0
	})
	if i == len(data) || data[i].row > row {
		i--
	}
	// Spans of pages of no rows share a row with the next: take the last.
	for i+1 < len(data) && data[i+1].row == data[i].row && data[i+1].row <= row {
		i++
	}
	return first + max(i, 0)
}

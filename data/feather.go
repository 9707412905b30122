// This file is long because it is one reader: Arrow IPC files (Feather
// V2, what pandas' to_feather and freqtrade write) mapped onto the bar
// columns, from the footer to the values of each record batch's buffers.

package data

import (
	"context"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
)

// An Arrow IPC file is "ARROW1", padding, a stream of messages (the
// schema, dictionary batches, record batches: each a FlatBuffers header
// and a body of buffers), and a footer (the schema again and where each
// batch lies), its length and "ARROW1". A record batch holds, for each
// column, a node (its length and null count) and buffers (validity,
// values; offsets and data for strings), each compressed with LZ4 frame
// or zstd or not at all. This reader reads the schema and the batch
// headers when the file is opened, and the buffers of the bar columns a
// batch at a time, each as a stream through a small buffer: its memory
// does not depend on the size of a batch (see colStream).

// arrowMagic starts and ends an Arrow IPC file.
const arrowMagic = "ARROW1"

// Limits on what an Arrow file may claim, against corrupt files.
const (
	maxArrowFooter  = 64 << 20 // bytes of the footer
	maxArrowMeta    = 16 << 20 // bytes of one message's header
	maxArrowFields  = 1 << 16  // fields of the schema, nested ones counted
	maxArrowDepth   = 64       // nesting of fields
	maxArrowBatches = maxRowGroups
)

// Arrow's type ids (Schema.fbs, union Type).
const (
	arrowNull            = 1
	arrowInt             = 2
	arrowFloatingPoint   = 3
	arrowBinary          = 4
	arrowUtf8            = 5
	arrowBool            = 6
	arrowDecimal         = 7
	arrowDate            = 8
	arrowTime            = 9
	arrowTimestamp       = 10
	arrowInterval        = 11
	arrowList            = 12
	arrowStruct          = 13
	arrowUnion           = 14
	arrowFixedSizeBinary = 15
	arrowFixedSizeList   = 16
	arrowMap             = 17
	arrowDuration        = 18
	arrowLargeBinary     = 19
	arrowLargeUtf8       = 20
	arrowLargeList       = 21
	arrowRunEndEncoded   = 22
	arrowBinaryView      = 23
	arrowUtf8View        = 24
	arrowListView        = 25
	arrowLargeListView   = 26
)

var arrowTypeNames = map[uint8]string{arrowNull: "null", arrowInt: "int", arrowFloatingPoint: "floating point",
	arrowBinary: "binary", arrowUtf8: "utf8", arrowBool: "bool", arrowDecimal: "decimal", arrowDate: "date",
	arrowTime: "time", arrowTimestamp: "timestamp", arrowInterval: "interval", arrowList: "list",
	arrowStruct: "struct", arrowUnion: "union", arrowFixedSizeBinary: "fixed size binary",
	arrowFixedSizeList: "fixed size list", arrowMap: "map", arrowDuration: "duration",
	arrowLargeBinary: "large binary", arrowLargeUtf8: "large utf8", arrowLargeList: "large list",
	arrowRunEndEncoded: "run-end encoded", arrowBinaryView: "binary view", arrowUtf8View: "utf8 view",
	arrowListView: "list view", arrowLargeListView: "large list view"}

// Body compression codecs.
const (
	arrowCodecNone = -1
	arrowCodecLZ4  = 0 // LZ4 frame
	arrowCodecZstd = 1
)

// arrowField is a top-level field of the schema, and where its node and
// buffers are in a record batch.
type arrowField struct {
	name     string
	typ      uint8
	desc     string // its type, for messages
	node     int    // index of its node among a batch's nodes
	buf      int    // index of its first buffer, before the view types' variadic buffers
	views    int    // view-typed fields before it, nested ones counted (each adds variadic buffers)
	dict     bool   // dictionary-encoded
	conv     convKind
	width    int  // bytes per value (values buffer); 4 or 8 for a string's offsets
	signed   bool // an integer type
	float    bool
	isString bool
}

// arrowBatch is a record batch.
type arrowBatch struct {
	body       int64 // where its body starts in the file
	bodyLen    int64
	start      int64 // its first row in the file (0-based)
	rows       int64
	codec      int
	nodes      [numColumns]arrowNode
	bufs       [numColumns][3]arrowBuf // the bar columns' buffers: validity, values (or offsets), string data
	minT, maxT int64                   // the times of its bars, once scanned
	stats      bool
	used       bool // it may hold bars in the window
}

type arrowNode struct{ length, nulls int64 }
type arrowBuf struct{ off, len int64 }

// featherFile is an open Arrow IPC file with its columns mapped to bar
// fields.
type featherFile struct {
	src        *source
	cols       [numColumns]*arrowField
	batches    []arrowBatch
	rows       int64
	fileSymbol string
	scanning   bool // the next reader is the scan's: it records each batch's times
}

func (ff *featherFile) symbolColumn() bool { return ff.cols[colSymbol] != nil }
func (ff *featherFile) oneSymbol() string  { return ff.fileSymbol }
func (ff *featherFile) usedRows() int64 {
	var n int64
	for _, b := range ff.batches {
		if b.used {
			n += b.rows
		}
	}
	return n
}

// openFeather reads the footer and the batch headers of an Arrow IPC file
// and maps its columns.
func openFeather(src *source) (*featherFile, error) {
	ff := &featherFile{src: src, scanning: true}
	fail := func(msg string) error { return &Error{File: src.path, Msg: msg} }
	var head [8]byte
	var tail [10]byte
	if src.size >= 8 {
		if _, err := src.fh.ReadAt(head[:], 0); err != nil {
			return nil, pathError(src.path, err)
		}
	}
	if strings.HasPrefix(string(head[:]), "FEA1") {
		return nil, fail("a Feather V1 file: stratbench reads Feather V2 (Arrow IPC), what pandas and pyarrow write since 2020; write it again with pyarrow.feather.write_feather")
	}
	if string(head[:6]) != arrowMagic {
		return nil, fail("not an Arrow IPC (Feather V2) file: it does not start with ARROW1")
	}
	const truncated = "truncated: the file does not end with an Arrow IPC footer (was it still being written?)"
	if src.size < 8+10 {
		return nil, fail(truncated)
	}
	if _, err := src.fh.ReadAt(tail[:], src.size-10); err != nil {
		return nil, pathError(src.path, err)
	}
	if string(tail[4:]) != arrowMagic {
		return nil, fail(truncated)
	}
	footerLen := int64(int32(binary.LittleEndian.Uint32(tail[:4])))
	footerStart := src.size - 10 - footerLen
	if footerLen <= 0 || footerLen > maxArrowFooter || footerStart < 8 {
		return nil, fail("truncated or corrupt: its footer claims " + itoa64(footerLen) + " bytes of a " + itoa64(src.size) + "-byte file")
	}
	footer := make([]byte, footerLen)
	if _, err := src.fh.ReadAt(footer, footerStart); err != nil {
		return nil, pathError(src.path, err)
	}
	if err := ff.readFooter(footer, footerStart); err != nil {
		return nil, err
	}
	if ff.rows == 0 {
		return nil, fail("no bars")
	}
	return ff, nil
}

// corrupt is the error of a file whose metadata is corrupt.
func (ff *featherFile) corrupt(what string) error {
	return &Error{File: ff.src.path, Msg: "corrupt: " + what}
}

// readFooter reads the schema and the record batches' headers.
func (ff *featherFile) readFooter(footer []byte, footerStart int64) error {
	root, err := fbRoot(footer)
	if err != nil {
		return ff.corrupt("its footer")
	}
	schema, ok, err := root.table(1)
	if err != nil || !ok {
		return ff.corrupt("its schema")
	}
	if endian, err := schema.int16(0, 0); err != nil || endian != 0 {
		return &Error{File: ff.src.path, Msg: "big-endian Arrow data is not read"}
	}
	fields, err := ff.readSchema(schema)
	if err != nil {
		return err
	}
	if err := ff.mapColumns(fields); err != nil {
		return err
	}
	start, n, err := root.vector(3, 24)
	if err != nil {
		return ff.corrupt("its record batches")
	}
	if n > maxArrowBatches {
		return ff.corrupt(itoa64(int64(n)) + " record batches")
	}
	ff.batches = make([]arrowBatch, 0, n)
	for k := range n {
		p := start + 24*k
		off := int64(binary.LittleEndian.Uint64(footer[p:]))
		metaLen := int64(int32(binary.LittleEndian.Uint32(footer[p+8:])))
		bodyLen := int64(binary.LittleEndian.Uint64(footer[p+16:]))
		if off < 8 || metaLen < 8 || metaLen > maxArrowMeta || bodyLen < 0 || off > footerStart ||
			metaLen > footerStart-off || bodyLen > footerStart-off-metaLen {
			return ff.corrupt("record batch " + strconv.Itoa(k) + " lies outside the file")
		}
		b, err := ff.readBatch(k, off, metaLen, bodyLen)
		if err != nil {
			return err
		}
		b.start = ff.rows
		if b.rows > math.MaxInt64-ff.rows {
			return ff.corrupt("record batch " + strconv.Itoa(k) + " has " + itoa64(b.rows) + " rows")
		}
		ff.rows += b.rows
		b.used = b.rows > 0
		ff.batches = append(ff.batches, b)
	}
	return nil
}

// schemaWalk counts the nodes and buffers of the fields of a schema.
type schemaWalk struct {
	ff          *featherFile
	nodes, bufs int
	views       int
	fields      int
}

// readSchema reads the top-level fields and where their nodes and buffers
// lie in a record batch.
func (ff *featherFile) readSchema(schema fbTable) ([]*arrowField, error) {
	start, n, err := schema.vector(1, 4)
	if err != nil || n > maxArrowFields {
		return nil, ff.corrupt("its schema's fields")
	}
	w := &schemaWalk{ff: ff}
	var out []*arrowField
	for k := range n {
		t, err := schema.elem(start, k)
		if err != nil {
			return nil, ff.corrupt("its schema's fields")
		}
		f := &arrowField{node: w.nodes, buf: w.bufs, views: w.views}
		if err := w.field(t, f, 0); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// field reads field t (into f when it is a top-level one) and counts its
// nodes and buffers, and its children's.
func (w *schemaWalk) field(t fbTable, f *arrowField, depth int) error {
	ff := w.ff
	w.fields++
	if depth > maxArrowDepth || w.fields > maxArrowFields {
		return ff.corrupt("its schema nests too deep")
	}
	name, err := t.string(0, 1<<16)
	if err != nil {
		return ff.corrupt("a field's name")
	}
	typ, err := t.uint8(2, 0)
	if err != nil {
		return ff.corrupt("the type of field " + strconv.Quote(name))
	}
	tt, _, err := t.table(3)
	if err != nil {
		return ff.corrupt("the type of field " + strconv.Quote(name))
	}
	_, dict, err := t.table(4)
	if err != nil {
		return ff.corrupt("the dictionary of field " + strconv.Quote(name))
	}
	if f != nil {
		f.name, f.typ, f.dict = name, typ, dict
		f.desc = arrowTypeNames[typ]
		if f.desc == "" {
			f.desc = "type " + strconv.Itoa(int(typ))
		}
		if dict {
			f.desc = "dictionary of " + f.desc
		}
		if err := f.readType(tt); err != nil {
			return ff.corrupt("the type of field " + strconv.Quote(name))
		}
	}
	w.nodes++
	if dict {
		w.bufs += 2 // validity and indices; the values are in dictionary batches
		return nil
	}
	bufs := -1
	switch typ {
	case arrowNull, arrowRunEndEncoded:
		bufs = 0
	case arrowStruct, arrowFixedSizeList:
		bufs = 1
	case arrowInt, arrowFloatingPoint, arrowBool, arrowDecimal, arrowDate, arrowTime, arrowTimestamp,
		arrowInterval, arrowFixedSizeBinary, arrowDuration, arrowList, arrowLargeList, arrowMap:
		bufs = 2
	case arrowBinary, arrowUtf8, arrowLargeBinary, arrowLargeUtf8, arrowListView, arrowLargeListView:
		bufs = 3
	case arrowBinaryView, arrowUtf8View:
		bufs = 2
		w.views++
	case arrowUnion:
		mode, err := tt.int16(0, 0)
		if err != nil {
			return ff.corrupt("the type of field " + strconv.Quote(name))
		}
		bufs = 1 + int(mode&1) // type ids; dense unions also offsets
	}
	if bufs < 0 {
		return &Error{File: ff.src.path, Column: name, columnar: true,
			Msg: "a column of an Arrow type stratbench does not know (" + strconv.Itoa(int(typ)) + "): the columns after it cannot be found"}
	}
	w.bufs += bufs
	start, n, err := t.vector(5, 4)
	if err != nil {
		return ff.corrupt("the children of field " + strconv.Quote(name))
	}
	for k := range n {
		c, err := t.elem(start, k)
		if err != nil {
			return ff.corrupt("the children of field " + strconv.Quote(name))
		}
		if err := w.field(c, nil, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// readType reads the parameters of a top-level field's type that the bar
// columns need.
func (f *arrowField) readType(tt fbTable) error {
	switch f.typ {
	case arrowInt:
		bits, err := tt.int32(0, 0)
		if err != nil {
			return err
		}
		signed, err := tt.bool(1)
		if err != nil {
			return err
		}
		f.width, f.signed = int(bits/8), signed
		if !signed {
			f.desc = "u" + f.desc
		}
		f.desc += strconv.Itoa(int(bits))
	case arrowFloatingPoint:
		prec, err := tt.int16(0, 0)
		if err != nil {
			return err
		}
		f.float, f.width = true, map[int16]int{0: 2, 1: 4, 2: 8}[prec]
		f.desc = map[int16]string{0: "float16", 1: "float32", 2: "float64"}[prec]
	case arrowTimestamp:
		unit, err := tt.int16(0, 0)
		if err != nil {
			return err
		}
		f.width = 8
		f.conv = map[int16]convKind{0: convTimeSeconds, 1: convTimeMillis, 2: convTimeMicros, 3: convTimeNanos}[unit]
	case arrowDate:
		unit, err := tt.int16(0, 1)
		if err != nil {
			return err
		}
		f.conv, f.width = convTimeDate, 4
		if unit == 1 {
			f.conv, f.width = convTimeMillis, 8
		}
	case arrowUtf8:
		f.isString, f.width = true, 4
	case arrowLargeUtf8:
		f.isString, f.width = true, 8
	}
	return nil
}

// mapColumns finds the bar fields among the top-level fields, by name in
// any letter case (the time column as in Parquet: timestamp, or date in a
// freqtrade file), and checks their types.
func (ff *featherFile) mapColumns(fields []*arrowField) error {
	src := ff.src
	timeName := columnNames[colTimestamp]
	has := func(want string) bool {
		for _, f := range fields {
			if strings.EqualFold(f.name, want) {
				return true
			}
		}
		return false
	}
	if !has(timeName) && src.entry.ft != nil && has("date") {
		timeName = "date"
	}
	src.timeColumn = timeName
	for _, f := range fields {
		name := strings.ToLower(f.name)
		for c, want := range columnNames {
			if c == colTimestamp {
				want = timeName
			}
			if name != want {
				continue
			}
			if ff.cols[c] != nil {
				return &Error{columnar: true, File: src.path, Column: src.columnName(c), Msg: "duplicate column"}
			}
			if err := ff.checkType(c, f); err != nil {
				return err
			}
			ff.cols[c] = f
		}
	}
	for c, f := range ff.cols {
		if f != nil {
			continue
		}
		if c == colSymbol {
			sym, err := layoutSymbol(src, nil, timeName == "date")
			if err != nil {
				return err
			}
			ff.fileSymbol = sym
			continue
		}
		return &Error{columnar: true, File: src.path, Column: src.columnName(c),
			Msg: "missing column (the file needs " + strings.Join(columnNames[:], ",") +
				"; symbol may be left out when the file name is the symbol)"}
	}
	return nil
}

// checkType checks the type of bar column c's field and records how to
// convert it.
func (ff *featherFile) checkType(c int, f *arrowField) error {
	var want string
	ok := !f.dict
	switch c {
	case colTimestamp:
		want = "a timestamp, a date, or an int64 or int32 of unix seconds or milliseconds"
		switch {
		case f.typ == arrowTimestamp || f.typ == arrowDate:
			ok = ok && f.conv != convAbsent // a unit Arrow does not define
		case f.typ == arrowInt && f.signed && (f.width == 8 || f.width == 4):
			f.conv = convTimeUnix
		default:
			ok = false
		}
	case colSymbol:
		want = "a string (utf8)"
		ok = ok && f.isString
	default:
		want = "a number (float64, float32, int64 or int32)"
		ok = ok && (f.float && f.width >= 4 || f.typ == arrowInt && (f.width == 8 || f.width == 4))
		f.conv = convNumber
	}
	if !ok {
		return &Error{columnar: true, File: ff.src.path, Column: ff.src.columnName(c), Msg: "wrong column type " + f.desc + "; want " + want}
	}
	return nil
}

// readBatch reads the header of record batch k: its rows, and the nodes
// and buffers of the bar columns, each checked against the batch's body.
func (ff *featherFile) readBatch(k int, off, metaLen, bodyLen int64) (arrowBatch, error) {
	b := arrowBatch{body: off + metaLen, bodyLen: bodyLen, codec: arrowCodecNone}
	what := "record batch " + strconv.Itoa(k)
	meta := make([]byte, metaLen)
	if _, err := ff.src.fh.ReadAt(meta, off); err != nil {
		return b, pathError(ff.src.path, err)
	}
	// An encapsulated message: 0xFFFFFFFF, the header's length, the header
	// (older writers leave the first word out).
	fb := meta[4:]
	if binary.LittleEndian.Uint32(meta) == 0xFFFFFFFF {
		fb = meta[8:]
	}
	msg, err := fbRoot(fb)
	if err != nil {
		return b, ff.corrupt(what + "'s header")
	}
	if typ, err := msg.uint8(1, 0); err != nil || typ != 3 { // MessageHeader.RecordBatch
		return b, ff.corrupt(what + " is no record batch")
	}
	rb, ok, err := msg.table(2)
	if err != nil || !ok {
		return b, ff.corrupt(what + "'s header")
	}
	if b.rows, err = rb.int64(0, 0); err != nil || b.rows < 0 {
		return b, ff.corrupt(what + "'s length")
	}
	nStart, nNodes, err := rb.vector(1, 16)
	if err != nil {
		return b, ff.corrupt(what + "'s nodes")
	}
	bStart, nBufs, err := rb.vector(2, 16)
	if err != nil {
		return b, ff.corrupt(what + "'s buffers")
	}
	if comp, ok, err := rb.table(3); err != nil {
		return b, ff.corrupt(what + "'s compression")
	} else if ok {
		codec, err := comp.uint8(0, 0)
		if err != nil || codec > 1 {
			return b, &Error{File: ff.src.path, Msg: what + " is compressed with an unknown codec (" + strconv.Itoa(int(codec)) + ")"}
		}
		b.codec = int(codec)
	}
	// The view types' variadic buffers, in the order of their fields.
	vStart, nViews, err := rb.vector(4, 8)
	if err != nil {
		return b, ff.corrupt(what + "'s variadic buffer counts")
	}
	for c, f := range ff.cols {
		if f == nil {
			continue
		}
		buf := f.buf
		if f.views > nViews {
			return b, ff.corrupt(what + "'s variadic buffer counts")
		}
		for v := range f.views {
			n := int64(binary.LittleEndian.Uint64(fb[vStart+8*v:]))
			if n < 0 || n > int64(nBufs) {
				return b, ff.corrupt(what + "'s variadic buffer counts")
			}
			buf += int(n)
		}
		if f.node >= nNodes {
			return b, ff.corrupt(what + " has fewer columns than its schema")
		}
		p := nStart + 16*f.node
		node := arrowNode{int64(binary.LittleEndian.Uint64(fb[p:])), int64(binary.LittleEndian.Uint64(fb[p+8:]))}
		if node.length != b.rows || node.nulls < 0 || node.nulls > node.length {
			return b, &Error{File: ff.src.path, Column: ff.src.columnName(c), columnar: true,
				Msg: "corrupt: " + what + " has " + itoa64(b.rows) + " rows and " + itoa64(node.length) + " values of the column"}
		}
		b.nodes[c] = node
		nb := 2
		if f.isString {
			nb = 3
		}
		if buf+nb > nBufs {
			return b, ff.corrupt(what + " has fewer buffers than its schema")
		}
		for i := range nb {
			p := bStart + 16*(buf+i)
			ab := arrowBuf{int64(binary.LittleEndian.Uint64(fb[p:])), int64(binary.LittleEndian.Uint64(fb[p+8:]))}
			if ab.off < 0 || ab.len < 0 || ab.off > bodyLen || ab.len > bodyLen-ab.off {
				return b, &Error{File: ff.src.path, Column: ff.src.columnName(c), columnar: true,
					Msg: "corrupt: " + what + "'s buffer lies outside its body"}
			}
			b.bufs[c][i] = ab
		}
	}
	return b, nil
}

// newReader reads the bar columns cols of rows [from, end).
func (ff *featherFile) newReader(cols []int, syms symResolver, from, end int64) tableReader {
	r := &featherReader{ff: ff, cols: cols, syms: syms, row: from, end: end, record: ff.scanning}
	ff.scanning = false
	if ff.fileSymbol != "" {
		r.fileSym, _ = syms.intern([]byte(ff.fileSymbol))
	}
	for r.bi < len(ff.batches) && ff.batches[r.bi].start+ff.batches[r.bi].rows <= from {
		r.bi++
	}
	return r
}

// featherReader reads rows of a Feather file, a record batch at a time,
// each bar column through a stream of its own.
type featherReader struct {
	ff      *featherFile
	cols    []int
	syms    symResolver
	fileSym int32
	bi      int  // the batch read
	open    bool // the streams are open on batch bi
	row     int64
	end     int64
	cur     [numColumns]colStream
	// record: this reader is the scan's, which reads every batch whole:
	// it records each batch's times, so that streams skip the batches the
	// window does not need.
	record bool
	// The symbols of the current batch's dictionary... of its strings: the
	// last one seen, to skip the lookup.
	lastRaw []byte
	lastSym int32
}

func (r *featherReader) close() {
	for _, c := range r.cols {
		r.cur[c].close()
	}
	r.open = false
}

// batchDone records, for the scan, that batch bt was read whole: its
// times are known, and whether the window needs it.
func (r *featherReader) batchDone(bt *arrowBatch) {
	if r.record && r.open && r.row == bt.start+bt.rows && !bt.stats {
		bt.stats = true
		bt.used = r.ff.src.set.win.overlaps(bt.minT, bt.maxT)
	}
}

// read appends up to limit of the next rows to b, converted but not
// checked; it returns false after the last.
func (r *featherReader) read(b *block, limit int) (bool, error) {
	ff := r.ff
	for {
		if r.row >= r.end || r.bi >= len(ff.batches) {
			r.open = false
			return false, nil
		}
		bt := &ff.batches[r.bi]
		bEnd := min(bt.start+bt.rows, r.end)
		if !bt.used || r.row >= bEnd {
			r.open = false
			r.row = max(r.row, bt.start+bt.rows)
			r.bi++
			continue
		}
		if !r.open {
			if r.record {
				bt.minT, bt.maxT = math.MaxInt64, math.MinInt64
			}
			for _, c := range r.cols {
				if err := r.cur[c].open(ff, bt, c, r.row-bt.start); err != nil {
					return false, err
				}
			}
			r.open = true
		}
		k := int(min(int64(limit), bEnd-r.row))
		n := b.Len()
		b.extend(k)
		for _, c := range r.cols {
			if err := r.take(b, c, n, k); err != nil {
				b.Bars, b.pos = b.Bars.truncate(n), b.pos[:n]
				return false, err
			}
		}
		if ff.fileSymbol != "" {
			for i := n; i < n+k; i++ {
				b.Symbol[i] = r.fileSym
			}
		}
		for i := range k {
			b.pos[n+i] = r.row + int64(i) + 1
		}
		if r.record {
			for _, t := range b.Time[n : n+k] {
				bt.minT, bt.maxT = min(bt.minT, t), max(bt.maxT, t)
			}
		}
		if bt.stats {
			for i := n; i < n+k; i++ {
				if t := b.Time[i]; t < bt.minT || t > bt.maxT {
					err := ff.src.errorAt(b.pos[i], "timestamp", "the file changed while it was being read: "+formatTime(t)+" was not in it")
					b.Bars, b.pos = b.Bars.truncate(i), b.pos[:i]
					return false, err
				}
			}
		}
		r.row += int64(k)
		r.batchDone(bt)
		return true, nil
	}
}

// take converts the next k values of column c into rows [n, n+k) of b.
func (r *featherReader) take(b *block, c, n, k int) error {
	cs := &r.cur[c]
	f := r.ff.cols[c]
	switch c {
	case colTimestamp:
		dst := b.Time[n : n+k]
		if err := cs.ints(dst, f.width, f.signed); err != nil {
			return err
		}
		if f.conv == convTimeNanos {
			return nil
		}
		for i, x := range dst {
			t, err := convertTime(f.conv, x)
			if err != nil {
				return cs.fail(cs.row-int64(k)+int64(i), err.Error()+": "+strconv.FormatInt(x, 10))
			}
			dst[i] = t
		}
		return nil
	case colSymbol:
		for i := range k {
			raw, err := cs.str()
			if err != nil {
				return err
			}
			if r.lastRaw != nil && string(raw) == string(r.lastRaw) {
				b.Symbol[n+i] = r.lastSym
				continue
			}
			s, msg := r.syms.intern(raw)
			if msg != "" {
				return cs.fail(cs.row-1, msg)
			}
			b.Symbol[n+i], r.lastSym, r.lastRaw = s, s, append(r.lastRaw[:0], raw...)
		}
		return nil
	}
	var dst []float64
	switch c {
	case colOpen:
		dst = b.Open[n : n+k]
	case colHigh:
		dst = b.High[n : n+k]
	case colLow:
		dst = b.Low[n : n+k]
	case colClose:
		dst = b.Close[n : n+k]
	default:
		dst = b.Volume[n : n+k]
	}
	return cs.numbers(dst, f)
}

// prepare has nothing to do: the footer and the batch headers were read
// when the file was opened.
func (ff *featherFile) prepare(context.Context) error { return nil }

// streamNeed is what a stream of the file holds at most: for each column
// it reads, a read buffer per buffer of the column (a string column's
// offsets and bytes) and, in a file of compressed batches, a decompressor
// each at its largest (an LZ4 frame's block of 4 MiB, twice; zstd's window
// of 8 MiB). Writers use far less (pyarrow: LZ4 blocks of 64 KiB), but a
// file says what it uses only as it is read.
func (ff *featherFile) streamNeed() int64 {
	var codec int64
	for _, b := range ff.batches {
		switch b.codec {
		case arrowCodecLZ4:
			codec = max(codec, 8<<20)
		case arrowCodecZstd:
			codec = max(codec, maxZstdWindow+1<<20)
		}
	}
	var n int64
	for _, c := range streamCols(ff) {
		bufs := int64(1)
		if c == colSymbol {
			bufs = 2
		}
		n += bufs * (arrowReadBuf + codec)
	}
	return n
}

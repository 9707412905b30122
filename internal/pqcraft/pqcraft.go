// Package pqcraft writes Parquet files byte by byte, for tests: files no
// library writes, whose headers say what an attacker wants them to (a page
// of 30 million values in a few bytes, a footer of 200,000 row groups), as
// well as plain ones. It writes uncompressed pages of flat columns; the
// caller gives each page's encoded values.
package pqcraft

import (
	"encoding/binary"
	"math"
	"time"
)

// Parquet physical types, encodings and page types.
const (
	Int32     = 1
	Int64     = 2
	Double    = 5
	ByteArray = 6

	Plain      = 0
	RLEDict    = 8
	DeltaBP    = 5
	PageData   = 0
	PageDict   = 2
	Required   = 0
	Optional   = 1
	ConvUTF8   = 0
	noConvType = -1
)

// Column is a top-level column of the schema.
type Column struct {
	Name       string
	Type       int32
	Repetition int32
	// TimestampNanos annotates the column as TIMESTAMP(NANOS), String as
	// a string.
	TimestampNanos bool
	String         bool
}

// Chunk is a column chunk: its pages, encoded (see DataPage, DictPage).
type Chunk struct {
	Pages [][]byte
	// NumValues is what the footer says the chunk holds; Dict that its
	// first page is a dictionary; Min and Max its statistics (nil: none).
	NumValues int64
	Dict      bool
	Min, Max  []byte
}

// Group is a row group: its row count and a chunk per column.
type Group struct {
	Rows   int64
	Chunks []Chunk
}

// File writes a Parquet file of the columns and row groups.
func File(cols []Column, groups []Group) []byte {
	out := []byte("PAR1")
	type placed struct{ data, dict int64 }
	at := make([][]placed, len(groups))
	for g, grp := range groups {
		at[g] = make([]placed, len(grp.Chunks))
		for c, ch := range grp.Chunks {
			start := int64(len(out))
			p := placed{data: start}
			for i, page := range ch.Pages {
				if i == 1 && ch.Dict {
					p = placed{dict: start, data: int64(len(out))}
				}
				out = append(out, page...)
			}
			if !ch.Dict {
				p.dict = 0
			}
			at[g][c] = p
		}
	}
	w := &Writer{}
	w.Begin()
	w.I32(1, 1) // version
	w.List(2, tStruct, len(cols)+1)
	w.Begin() // the root
	w.Binary(4, []byte("schema"))
	w.I32(5, int32(len(cols)))
	w.End()
	for _, c := range cols {
		w.Begin()
		w.I32(1, c.Type)
		w.I32(3, c.Repetition)
		w.Binary(4, []byte(c.Name))
		switch {
		case c.String:
			w.I32(6, ConvUTF8)
			w.Struct(10)
			w.Struct(1)
			w.End()
			w.End()
		case c.TimestampNanos:
			w.Struct(10)
			w.Struct(8)
			w.Bool(1, true)
			w.Struct(2)
			w.Struct(3)
			w.End()
			w.End()
			w.End()
			w.End()
		}
		w.End()
	}
	var rows int64
	for _, g := range groups {
		rows += g.Rows
	}
	w.I64(3, rows)
	w.List(4, tStruct, len(groups))
	for g, grp := range groups {
		w.Begin()
		w.List(1, tStruct, len(grp.Chunks))
		for c, ch := range grp.Chunks {
			size := int64(0)
			for _, p := range ch.Pages {
				size += int64(len(p))
			}
			w.Begin()
			w.I64(2, at[g][c].data)
			w.Struct(3)
			w.I32(1, cols[c].Type)
			w.List(2, tI32, 1)
			w.Elem32(Plain)
			w.List(3, tBinary, 1)
			w.ElemBinary([]byte(cols[c].Name))
			w.I32(4, 0) // uncompressed
			w.I64(5, ch.NumValues)
			w.I64(6, size)
			w.I64(7, size)
			w.I64(9, at[g][c].data)
			if ch.Dict {
				w.I64(11, at[g][c].dict)
			}
			if ch.Min != nil {
				w.Struct(12)
				w.Binary(5, ch.Max)
				w.Binary(6, ch.Min)
				w.End()
			}
			w.End()
			w.End()
		}
		w.I64(2, 0)
		w.I64(3, grp.Rows)
		w.End()
	}
	w.End()
	out = append(out, w.B...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(w.B)))
	return append(out, "PAR1"...)
}

// DataPage is a data page (v1) of n values, uncompressed, whose encoded
// values are values; levels are the definition levels to put before them
// (nil for a required column).
func DataPage(n int32, encoding int32, levels, values []byte) []byte {
	body := append(append([]byte(nil), levels...), values...)
	w := &Writer{}
	w.Begin()
	w.I32(1, PageData)
	w.I32(2, int32(len(body)))
	w.I32(3, int32(len(body)))
	w.Struct(5)
	w.I32(1, n)
	w.I32(2, encoding)
	w.I32(3, 3) // RLE levels
	w.I32(4, 3)
	w.End()
	w.End()
	return append(w.B, body...)
}

// DictPage is a dictionary page of n PLAIN values.
func DictPage(n int32, values []byte) []byte {
	w := &Writer{}
	w.Begin()
	w.I32(1, PageDict)
	w.I32(2, int32(len(values)))
	w.I32(3, int32(len(values)))
	w.Struct(7)
	w.I32(1, n)
	w.I32(2, Plain)
	w.End()
	w.End()
	return append(w.B, values...)
}

// RLERun is an RLE run of count copies of value, width bits wide.
func RLERun(width int, count uint64, value uint64) []byte {
	b := binary.AppendUvarint(nil, count<<1)
	for k := range (width + 7) / 8 {
		b = append(b, byte(value>>(8*k)))
	}
	return b
}

// DictIndexes are the values of an RLE_DICTIONARY page: the indexes'
// width, then runs.
func DictIndexes(width int, runs ...[]byte) []byte {
	b := []byte{byte(width)}
	for _, r := range runs {
		b = append(b, r...)
	}
	return b
}

// Levels are the definition levels of n values all present (a nullable
// column without a null), RLE with their length in front.
func Levels(n uint64) []byte {
	r := RLERun(1, n, 1)
	return append(binary.LittleEndian.AppendUint32(nil, uint32(len(r))), r...)
}

// DeltaRange encodes n values first, first+step, … as DELTA_BINARY_PACKED
// in blocks of block values, one miniblock each (every delta the same:
// bit width 0), a few bytes per block whatever n.
func DeltaRange(first int64, step int64, n uint64, block uint64) []byte {
	b := binary.AppendUvarint(nil, block)
	b = binary.AppendUvarint(b, 1)
	b = binary.AppendUvarint(b, n)
	b = binary.AppendUvarint(b, zigzag(first))
	for left := n - min(n, 1); left > 0; left -= min(left, block) {
		b = binary.AppendUvarint(b, zigzag(step))
		b = append(b, 0)
	}
	return b
}

// PlainInt64 and PlainDouble are PLAIN values.
func PlainInt64(v ...int64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	return b
}

func PlainDouble(v ...float64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// PlainStrings are PLAIN BYTE_ARRAY values.
func PlainStrings(v ...string) []byte {
	var b []byte
	for _, s := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	return b
}

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// Thrift compact protocol types.
const (
	tTrue   = 1
	tFalse  = 2
	tI32    = 5
	tI64    = 6
	tBinary = 8
	tList   = 9
	tStruct = 12
)

// Writer writes Thrift structures in the compact protocol.
type Writer struct {
	B    []byte
	last []int16 // the last field id of each open structure
}

func (w *Writer) field(id int16, typ byte) {
	n := len(w.last) - 1
	if d := id - w.last[n]; d > 0 && d <= 15 {
		w.B = append(w.B, byte(d)<<4|typ)
	} else {
		w.B = append(w.B, typ)
		w.B = binary.AppendUvarint(w.B, zigzag(int64(id)))
	}
	w.last[n] = id
}

// Begin opens a structure (at the top, or as a list's element).
func (w *Writer) Begin() { w.last = append(w.last, 0) }

// Struct opens a structure as field id.
func (w *Writer) Struct(id int16) {
	w.field(id, tStruct)
	w.Begin()
}

// End closes the open structure.
func (w *Writer) End() {
	w.B = append(w.B, 0)
	w.last = w.last[:len(w.last)-1]
}

func (w *Writer) I32(id int16, v int32) {
	w.field(id, tI32)
	w.B = binary.AppendUvarint(w.B, zigzag(int64(v)))
}

func (w *Writer) I64(id int16, v int64) {
	w.field(id, tI64)
	w.B = binary.AppendUvarint(w.B, zigzag(v))
}

func (w *Writer) Bool(id int16, v bool) {
	if v {
		w.field(id, tTrue)
	} else {
		w.field(id, tFalse)
	}
}

func (w *Writer) Binary(id int16, v []byte) {
	w.field(id, tBinary)
	w.B = binary.AppendUvarint(w.B, uint64(len(v)))
	w.B = append(w.B, v...)
}

// List opens a list of n elements of type elem as field id; write them
// with Elem32, ElemBinary or Begin … End.
func (w *Writer) List(id int16, elem byte, n int) {
	w.field(id, tList)
	if n < 15 {
		w.B = append(w.B, byte(n)<<4|elem)
	} else {
		w.B = append(w.B, 0xf0|elem)
		w.B = binary.AppendUvarint(w.B, uint64(n))
	}
}

func (w *Writer) Elem32(v int32) { w.B = binary.AppendUvarint(w.B, zigzag(int64(v))) }

func (w *Writer) ElemBinary(v []byte) {
	w.B = binary.AppendUvarint(w.B, uint64(len(v)))
	w.B = append(w.B, v...)
}

// BarColumns are the columns of bars: a TIMESTAMP(NANOS), a string symbol
// and five doubles, all required.
var BarColumns = []Column{
	{Name: "timestamp", Type: Int64, Repetition: Required, TimestampNanos: true},
	{Name: "symbol", Type: ByteArray, Repetition: Required, String: true},
	{Name: "open", Type: Double, Repetition: Required},
	{Name: "high", Type: Double, Repetition: Required},
	{Name: "low", Type: Double, Repetition: Required},
	{Name: "close", Type: Double, Repetition: Required},
	{Name: "volume", Type: Double, Repetition: Required},
}

// T0 is the time of the first bar of the files made here.
var T0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// ConstChunk is a column chunk of n copies of one value (dict, PLAIN): a
// dictionary of it and one page of an RLE run of n indexes, a few bytes
// whatever n.
func ConstChunk(n uint64, dict []byte) Chunk {
	return Chunk{NumValues: int64(n), Dict: true, Pages: [][]byte{
		DictPage(1, dict),
		DataPage(int32(min(n, 1<<31-1)), RLEDict, nil, DictIndexes(1, RLERun(1, n, 0))),
	}}
}

// HugePage is a file of one row group of n bars of symbol X in one page
// per column, a few KiB whatever n: the timestamps step by one second
// from T0 (DELTA_BINARY_PACKED blocks of a few bytes each), or are all
// T0 when constant; open, high, low and close are 10, the volume 0.
func HugePage(n uint64, constant bool) []byte {
	t0 := T0.UnixNano()
	ts := Chunk{NumValues: int64(n), Pages: [][]byte{
		DataPage(int32(n), DeltaBP, nil, DeltaRange(t0, int64(time.Second), n, 1<<16)),
	}}
	if constant {
		ts = ConstChunk(n, PlainInt64(t0))
	}
	price := ConstChunk(n, PlainDouble(10))
	return File(BarColumns, []Group{{Rows: int64(n), Chunks: []Chunk{
		ts, ConstChunk(n, PlainStrings("X")), price, price, price, price, ConstChunk(n, PlainDouble(0)),
	}}})
}

// ManyGroups is a file of k row groups of one bar each, a second apart
// from T0: its footer takes about 280 bytes a row group.
func ManyGroups(k int) []byte {
	t0 := T0.UnixNano()
	gs := make([]Group, k)
	price := ConstChunk(1, PlainDouble(10))
	sym := ConstChunk(1, PlainStrings("X"))
	for i := range gs {
		ts := ConstChunk(1, PlainInt64(t0+int64(i)*int64(time.Second)))
		gs[i] = Group{Rows: 1, Chunks: []Chunk{ts, sym, price, price, price, price, price}}
	}
	return File(BarColumns, gs)
}

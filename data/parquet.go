// This file is long because it is one reader: Parquet's footer mapped onto
// the bar columns (which physical and logical types convert how), the row
// groups with their statistics for --from/--to, and the digest of what is
// read; the page reads live in pqread.go and pqscan.go, the conversions in pqconv.go.

package data

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Parquet is read with parquet-go's page API: each column chunk's pages
// are decoded into typed slices (the dictionary indexes and the
// dictionary's values when a page is dictionary-encoded) and converted
// into the bar columns a block at a time. Rows are never materialised as
// structs or parquet.Row values, which would cost several times more.

// convKind is how a Parquet column's values become a bar field.
type convKind uint8

const (
	convAbsent      convKind = iota
	convTimeNanos            // INT64 TIMESTAMP(NANOS)
	convTimeMicros           // INT64 TIMESTAMP(MICROS)
	convTimeMillis           // INT64 TIMESTAMP(MILLIS)
	convTimeSeconds          // an Arrow timestamp[s] (Feather)
	convTimeUnix             // INT64 or INT32 without a time type: unix seconds or milliseconds by magnitude
	convTimeDate             // INT32 DATE: days since 1970-01-01, at midnight UTC
	convTimeInt96            // INT96: the legacy Impala/Spark timestamp (nanoseconds of a Julian day)
	convString               // BYTE_ARRAY: the symbol
	convNumber               // DOUBLE, FLOAT, INT64 or INT32 (signed or unsigned)
	convDecimal              // DECIMAL of INT32, INT64, FIXED_LEN_BYTE_ARRAY or BYTE_ARRAY
	convFixedLE              // Nautilus: a little-endian fixed-point FIXED_LEN_BYTE_ARRAY (nautilus.go)
)

// pqColumn is where and how a bar field is in a Parquet file.
type pqColumn struct {
	leaf     int // index among the file's leaf columns; -1 when absent
	conv     convKind
	phys     format.Type
	unsigned bool // an unsigned integer type
	scale    int  // DECIMAL scale, or a fixed-point value's
	// precision is the decimals a Nautilus fixed-point column's values
	// have (its file's price_precision or size_precision), -1 unknown.
	precision int
	name      string // the column's name in the file
}

// pqGroup is a row group of a Parquet file.
type pqGroup struct {
	index       int
	start, rows int64 // its first row in the file (0-based) and its row count
	minT, maxT  int64 // the times of its first and last bar, from the statistics
	stats       bool  // whether minT and maxT are known
	used        bool  // it may hold bars in the window: it is read
}

// pqFile is an open Parquet file with its columns mapped to bar fields.
type pqFile struct {
	src        *source
	f          *parquet.File
	cols       [numColumns]pqColumn
	groups     []pqGroup
	rows       int64
	fileSymbol string // every bar's symbol when the file has no symbol column
	hashes     *fileHashes
	nautilus   *ntBars // a Nautilus bar file's metadata, nil for other files
}

func (pf *pqFile) symbolColumn() bool { return pf.cols[colSymbol].leaf >= 0 }
func (pf *pqFile) oneSymbol() string  { return pf.fileSymbol }

// Limits on what a Parquet footer may claim, against corrupt files.
const (
	maxFooterBytes = 256 << 20
	maxRowGroups   = 1 << 20
)

// openParquet reads the footer of a Parquet file and maps its columns.
// Nothing else of the file is read.
func openParquet(src *source) (*pqFile, error) {
	pf := &pqFile{src: src}
	fail := func(msg string) error { return &Error{File: src.path, Msg: msg} }
	const truncated = "truncated: the file does not end with a Parquet footer (was it still being written?)"
	if src.size < 12 {
		return nil, fail(truncated)
	}
	var head, tail [8]byte
	if _, err := src.fh.ReadAt(head[:4], 0); err != nil {
		return nil, pathError(src.path, err)
	}
	if _, err := src.fh.ReadAt(tail[:], src.size-8); err != nil {
		return nil, pathError(src.path, err)
	}
	switch {
	case string(head[:4]) != "PAR1":
		return nil, fail("not a Parquet file (it does not start with PAR1)")
	case string(tail[4:]) == "PARE":
		return nil, fail("encrypted Parquet files are not supported")
	case string(tail[4:]) != "PAR1":
		return nil, fail(truncated)
	}
	footerLen := int64(binary.LittleEndian.Uint32(tail[:4]))
	if footerLen > src.size-12 || footerLen > maxFooterBytes {
		return nil, fail("truncated or corrupt: its footer claims " + itoa64(footerLen) + " bytes of a " + itoa64(src.size) + "-byte file")
	}
	footer := make([]byte, footerLen)
	if _, err := src.fh.ReadAt(footer, src.size-8-footerLen); err != nil {
		return nil, pathError(src.path, err)
	}
	pf.hashes = &fileHashes{fh: src.fh, footer: sha256.Sum256(footer)}
	err := pf.protect("footer", func() error {
		var err error
		pf.f, err = parquet.OpenFile(pf.hashes, src.size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
		return err
	})
	if err != nil {
		return nil, fail("not a readable Parquet file: " + err.Error())
	}
	if err := pf.mapColumns(); err != nil {
		return nil, err
	}
	if err := pf.mapGroups(); err != nil {
		return nil, err
	}
	return pf, nil
}

// protect runs f, turning a panic of the Parquet decoder on corrupt data
// into an error: the file is input, and bad input is an error, never a
// crash.
func (pf *pqFile) protect(what string, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt %s: %v", what, p)
		}
	}()
	return f()
}

// leaf is a top-level column of a Parquet schema.
type leaf struct {
	el    *format.SchemaElement
	index int  // among the leaf columns
	group bool // a group (nested columns), not a leaf
}

// mapColumns finds the bar fields among the file's top-level columns, by
// name in any letter case, and checks their types.
func (pf *pqFile) mapColumns() error {
	md := pf.f.Metadata()
	schema := md.Schema
	var tops []leaf
	leaves := 0
	// walk visits element i and its subtree, returning the next element.
	var walk func(i int, top bool) (int, error)
	walk = func(i int, top bool) (int, error) {
		if i >= len(schema) {
			return i, &Error{File: pf.src.path, Msg: "corrupt schema"}
		}
		el := &schema[i]
		n, _ := el.NumChildren.Get()
		if n <= 0 {
			if top {
				tops = append(tops, leaf{el: el, index: leaves})
			}
			leaves++
			return i + 1, nil
		}
		if top {
			tops = append(tops, leaf{el: el, group: true})
		}
		j := i + 1
		for range n {
			var err error
			if j, err = walk(j, false); err != nil {
				return j, err
			}
		}
		return j, nil
	}
	if len(schema) == 0 {
		return &Error{File: pf.src.path, Msg: "corrupt schema"}
	}
	rootChildren, _ := schema[0].NumChildren.Get()
	i := 1
	for range rootChildren {
		var err error
		if i, err = walk(i, true); err != nil {
			return err
		}
	}
	for c := range pf.cols {
		pf.cols[c].leaf = -1
	}
	// The time column: timestamp, or what the layout names it: ts_event in
	// a Nautilus bar file, date in a freqtrade file.
	timeName := columnNames[colTimestamp]
	has := func(want string) bool {
		for _, l := range tops {
			if strings.EqualFold(l.el.Name, want) {
				return true
			}
		}
		return false
	}
	if !has(timeName) {
		if nt := nautilusMeta(md.KeyValueMetadata); nt != nil && has("ts_event") {
			pf.nautilus, timeName = nt, "ts_event"
		} else if pf.src.entry.ft != nil && has("date") {
			timeName = "date"
		}
	}
	pf.src.timeColumn = timeName
	for _, l := range tops {
		name := strings.ToLower(l.el.Name)
		c := -1
		for k, want := range columnNames {
			if k == colTimestamp {
				want = timeName
			}
			if name == want {
				c = k
			}
		}
		if c < 0 {
			continue
		}
		col := &pf.cols[c]
		if col.leaf >= 0 || col.conv != convAbsent {
			return &Error{columnar: true, File: pf.src.path, Column: pf.src.columnName(c), Msg: "duplicate column"}
		}
		if err := pf.mapColumn(c, l); err != nil {
			return err
		}
	}
	for c := range pf.cols {
		if pf.cols[c].leaf >= 0 {
			continue
		}
		if c == colSymbol {
			sym, err := layoutSymbol(pf.src, pf.nautilus, timeName == "date")
			if err != nil {
				return err
			}
			pf.fileSymbol = sym
			continue
		}
		if c == colTimestamp && timeName == columnNames[colTimestamp] && has("date") && pf.src.entry.ft == nil {
			return &Error{columnar: true, File: pf.src.path, Column: columnNames[c],
				Msg: "missing column (a date column is read as the time only in freqtrade's files, named PAIR-TIMEFRAME." +
					strings.TrimPrefix(extOf(pf.src.path), ".") + ")"}
		}
		return &Error{columnar: true, File: pf.src.path, Column: columnNames[c],
			Msg: "missing column (the file needs " + strings.Join(columnNames[:], ",") +
				"; symbol may be left out when the file name is the symbol)"}
	}
	return nil
}

// orderHint follows an error about a row that goes back in time, in a
// file duckdb wrote: its partitioned writes do not keep the rows' order
// (measured with duckdb 2.0.1: COPY ... PARTITION_BY wrote a partition's
// rows in stretches out of order, with or without ORDER BY, on one thread
// or several). stratbench data convert sorts them.
func (src *source) orderHint() string {
	if src.pq != nil && strings.HasPrefix(src.pq.f.Metadata().CreatedBy, "DuckDB") {
		return " (duckdb wrote this file, whose PARTITION_BY does not keep the rows' order: stratbench data convert sorts them into one file)"
	}
	return ""
}

// layoutSymbol is the symbol of every bar of a file without a symbol
// column: its partition folder's (symbol=VALUE), its Nautilus instrument,
// the pair of its freqtrade name (freqtrade: the file is freqtrade's, with
// a date column), or its name: SPY.parquet holds SPY's bars. A file in
// partition folders without symbol= has none (its name, part-0.parquet,
// is no symbol).
func layoutSymbol(src *source, nt *ntBars, freqtrade bool) (string, error) {
	e := src.entry
	base := filepath.Base(src.path)
	name, from := strings.TrimSuffix(base, extOf(base)), "the file name"
	switch {
	case e.symbol != "":
		return e.symbol, nil // checked by partitionSymbol
	case nt != nil:
		name, from = nt.instrument, "the instrument_id of its metadata"
	case freqtrade && e.ft != nil:
		name, from = e.ft.pair, "the pair of its freqtrade name"
	case e.partitioned:
		return "", &Error{columnar: true, File: src.path, Column: "symbol",
			Msg: "missing column, and no folder it lies in is a symbol partition (symbol=VALUE)"}
	}
	if msg := symbolProblem([]byte(name)); msg != "" {
		return "", &Error{columnar: true, File: src.path, Column: "symbol",
			Msg: "missing column, and " + from + " is not a symbol: " + msg}
	}
	return name, nil
}

// mapColumn checks the type of a bar field's column and records how to
// convert it.
func (pf *pqFile) mapColumn(c int, l leaf) error {
	el := l.el
	wrong := func(want string) error {
		return &Error{columnar: true, File: pf.src.path, Column: pf.src.columnName(c), Msg: "wrong column type " + describeType(l) + "; want " + want}
	}
	var want string
	switch c {
	case colTimestamp:
		want = "a TIMESTAMP, a DATE, or an integer of unix seconds or milliseconds"
	case colSymbol:
		want = "a string (BYTE_ARRAY)"
	default:
		want = "a number (DOUBLE, FLOAT, INT64, INT32 or DECIMAL)"
	}
	if l.group {
		return wrong(want)
	}
	if rep, ok := el.RepetitionType.Get(); ok && rep == format.Repeated {
		return wrong(want)
	}
	phys, ok := el.Type.Get()
	if !ok {
		return wrong(want)
	}
	col := &pf.cols[c]
	col.leaf, col.phys, col.name, col.precision = l.index, phys, el.Name, -1
	logical := el.LogicalType.Value
	if nt := pf.nautilus; nt != nil {
		// A Nautilus bar file: ts_event in unsigned nanoseconds, the
		// values fixed-point.
		width, _ := el.TypeLength.Get()
		lt, isInt := logical.(*format.IntType)
		switch {
		case c == colTimestamp && phys == format.Int64 && (logical == nil || isInt):
			col.conv, col.unsigned = convTimeNanos, logical == nil || !lt.IsSigned
			return nil
		case c >= colOpen && phys == format.FixedLenByteArray && logical == nil && ntScale(int(width)) >= 0:
			col.conv, col.scale, col.unsigned = convFixedLE, ntScale(int(width)), c == colVolume
			col.precision = nt.pricePrecision
			if c == colVolume {
				col.precision = nt.sizePrecision
			}
			return nil
		}
	}
	conv, hasConv := el.ConvertedType.Get()
	switch c {
	case colTimestamp:
		switch {
		case phys == format.Int64:
			switch lt := logical.(type) {
			case *format.TimestampType:
				switch lt.Unit.Value.(type) {
				case *format.NanoSeconds:
					col.conv = convTimeNanos
				case *format.MicroSeconds:
					col.conv = convTimeMicros
				case *format.MilliSeconds:
					col.conv = convTimeMillis
				}
			case nil, *format.IntType:
				switch {
				case hasConv && conv == 9: // TIMESTAMP_MILLIS
					col.conv = convTimeMillis
				case hasConv && conv == 10: // TIMESTAMP_MICROS
					col.conv = convTimeMicros
				case !hasConv || conv == 18: // none, or INT_64
					col.conv = convTimeUnix
				}
			}
		case phys == format.Int32:
			switch logical.(type) {
			case *format.DateType:
				col.conv = convTimeDate
			case nil, *format.IntType:
				switch {
				case hasConv && conv == 6: // DATE
					col.conv = convTimeDate
				case !hasConv || conv == 17: // none, or INT_32
					col.conv = convTimeUnix
				}
			}
		case phys == format.Int96:
			col.conv = convTimeInt96
		}
	case colSymbol:
		if phys == format.ByteArray {
			switch logical.(type) {
			case nil, *format.StringType, *format.EnumType:
				if !hasConv || conv == 0 || conv == 4 { // none, UTF8 or ENUM
					col.conv = convString
				}
			}
		}
	default:
		if lt, ok := logical.(*format.DecimalType); ok || hasConv && conv == 5 {
			scale, _ := el.Scale.Get()
			if ok {
				scale = lt.Scale
			}
			switch phys {
			case format.Int32, format.Int64, format.FixedLenByteArray, format.ByteArray:
				if scale >= 0 && scale <= 76 {
					col.conv, col.scale = convDecimal, int(scale)
				}
			}
			break
		}
		switch phys {
		case format.Double, format.Float:
			if logical == nil {
				col.conv = convNumber
			}
		case format.Int32, format.Int64:
			switch lt := logical.(type) {
			case nil:
				switch {
				case !hasConv:
					col.conv = convNumber
				case conv >= 11 && conv <= 14: // UINT_8 to UINT_64
					col.conv, col.unsigned = convNumber, true
				case conv >= 15 && conv <= 18: // INT_8 to INT_64
					col.conv = convNumber
				}
			case *format.IntType:
				col.conv, col.unsigned = convNumber, !lt.IsSigned
			}
		}
	}
	if col.conv == convAbsent {
		return wrong(want)
	}
	return nil
}

// describeType names a column's type for a message.
func describeType(l leaf) string {
	if l.group {
		return "a group of columns"
	}
	el := l.el
	s := "?"
	if phys, ok := el.Type.Get(); ok {
		s = phys.String()
	}
	if el.LogicalType.Value != nil {
		s += " (" + el.LogicalType.Value.String() + ")"
	} else if conv, ok := el.ConvertedType.Get(); ok && int(conv) < len(convertedNames) {
		s += " (" + convertedNames[conv] + ")"
	}
	if rep, ok := el.RepetitionType.Get(); ok && rep == format.Repeated {
		s = "a list of " + s
	}
	return s
}

// convertedNames are the names of the legacy converted types, by number.
var convertedNames = [...]string{"UTF8", "MAP", "MAP_KEY_VALUE", "LIST", "ENUM", "DECIMAL", "DATE",
	"TIME_MILLIS", "TIME_MICROS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "UINT_8", "UINT_16", "UINT_32",
	"UINT_64", "INT_8", "INT_16", "INT_32", "INT_64", "JSON", "BSON", "INTERVAL"}

// mapGroups records the row groups, their time statistics, and which ones
// the window needs. It checks what the footer says about each against the
// file, so that a corrupt footer is an error here rather than a crash
// later.
func (pf *pqFile) mapGroups() error {
	md := pf.f.Metadata()
	if len(md.RowGroups) > maxRowGroups || len(pf.f.RowGroups()) != len(md.RowGroups) {
		return &Error{File: pf.src.path, Msg: "corrupt footer: " + itoa64(int64(len(md.RowGroups))) + " row groups"}
	}
	win := pf.src.set.win
	var start int64
	var chunks []*chunkHash
	for gi := range md.RowGroups {
		rg := &md.RowGroups[gi]
		if rg.NumRows < 0 || rg.NumRows > math.MaxInt64-start {
			return &Error{File: pf.src.path, Msg: "corrupt footer: row group " + itoa64(int64(gi)) + " has " + itoa64(rg.NumRows) + " rows"}
		}
		g := pqGroup{index: gi, start: start, rows: rg.NumRows}
		start += rg.NumRows
		for c := range pf.cols {
			col := &pf.cols[c]
			if col.leaf < 0 {
				continue
			}
			if col.leaf >= len(rg.Columns) || len(pf.f.RowGroups()[gi].ColumnChunks()) <= col.leaf {
				return &Error{columnar: true, File: pf.src.path, Column: columnNames[c], Msg: "corrupt footer: row group " + itoa64(int64(gi)) + " lacks the column"}
			}
			meta := &rg.Columns[col.leaf].MetaData
			if meta.NumValues != rg.NumRows {
				return &Error{columnar: true, File: pf.src.path, Column: columnNames[c], Msg: "corrupt footer: row group " + itoa64(int64(gi)) + " has " +
					itoa64(rg.NumRows) + " rows and " + itoa64(meta.NumValues) + " values of the column"}
			}
		}
		if tc := pf.cols[colTimestamp]; tc.conv != convTimeInt96 {
			st := &rg.Columns[tc.leaf].MetaData.Statistics
			lo, hi := st.MinValue, st.MaxValue
			if len(lo) == 0 || len(hi) == 0 {
				lo, hi = st.Min, st.Max // the deprecated fields: signed order, right for integers
			}
			g.minT, g.maxT, g.stats = pf.statTimes(lo, hi)
		}
		g.used = g.rows > 0 && (!g.stats || win.overlaps(g.minT, g.maxT))
		if g.stats && g.rows > 0 {
			pf.src.seenMin, pf.src.seenMax = min(pf.src.seenMin, g.minT), max(pf.src.seenMax, g.maxT)
		}
		if g.used {
			for c := range pf.cols {
				col := &pf.cols[c]
				if col.leaf < 0 {
					continue
				}
				meta := &rg.Columns[col.leaf].MetaData
				off := meta.DataPageOffset
				if meta.DictionaryPageOffset > 0 && meta.DictionaryPageOffset < off {
					off = meta.DictionaryPageOffset
				}
				size := meta.TotalCompressedSize
				if off < 4 || size < 0 || off > pf.src.size-8 || size > pf.src.size-8-off {
					return &Error{columnar: true, File: pf.src.path, Column: columnNames[c],
						Msg: "truncated or corrupt: row group " + itoa64(int64(gi)) + "'s column lies outside the file"}
				}
				chunks = append(chunks, &chunkHash{start: off, end: off + size, next: off, h: sha256.New()})
			}
		}
		pf.groups = append(pf.groups, g)
	}
	pf.rows = start
	if start == 0 {
		return &Error{File: pf.src.path, Msg: "no bars"}
	}
	return pf.hashes.track(pf.src.path, chunks)
}

// statTimes converts the time statistics of a row group, the encoded
// minimum and maximum. It reports false when they cannot be used: absent,
// malformed, or unix integers in two magnitudes (seconds and
// milliseconds), which do not convert in order.
func (pf *pqFile) statTimes(lo, hi []byte) (int64, int64, bool) {
	raw := func(b []byte) (int64, bool) {
		switch len(b) {
		case 8:
			return int64(binary.LittleEndian.Uint64(b)), true
		case 4:
			return int64(int32(binary.LittleEndian.Uint32(b))), true
		}
		return 0, false
	}
	a, ok1 := raw(lo)
	b, ok2 := raw(hi)
	conv := pf.cols[colTimestamp].conv
	if !ok1 || !ok2 || conv == convTimeUnix && unixRegime(a) != unixRegime(b) ||
		pf.cols[colTimestamp].unsigned && (a < 0 || b < 0) {
		return 0, 0, false
	}
	ta, err1 := convertTime(conv, a)
	tb, err2 := convertTime(conv, b)
	if err1 != nil || err2 != nil || ta > tb {
		return 0, 0, false
	}
	return ta, tb, true
}

// usedRows is the number of rows in the row groups the window needs.
func (pf *pqFile) usedRows() int64 {
	var n int64
	for _, g := range pf.groups {
		if g.used {
			n += g.rows
		}
	}
	return n
}

// convertTime converts an integer time value of a column to unix
// nanoseconds.
func convertTime(conv convKind, v int64) (int64, error) {
	mul := int64(1)
	switch conv {
	case convTimeNanos:
		return v, nil
	case convTimeMicros:
		mul = 1_000
	case convTimeMillis:
		mul = 1_000_000
	case convTimeSeconds:
		mul = 1_000_000_000
	case convTimeDate:
		mul = 86_400_000_000_000
	case convTimeUnix:
		return unixNanos(v)
	}
	if v > math.MaxInt64/mul || v < math.MinInt64/mul {
		return 0, errTimestampRange
	}
	return v * mul, nil
}

// digest returns the hash of the file's footer and of the column chunks
// the window needs, reading what no replay has read.
func (pf *pqFile) digest(ctx context.Context) ([sha256.Size]byte, error) {
	return pf.hashes.digest(ctx, pf.src.path)
}

// This file is long because it is one reader: Parquet's footer mapped onto
// the bar columns (which physical and logical types convert how), the row
// groups with their statistics for --from/--to, and the digest of what is
// read; the footer's parsing lives in pqmeta.go, the page reads in
// pqpage.go, pqread.go and pqscan.go, the conversions in pqconv.go.

package data

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"
)

// Parquet is read page by page by a reader of stratbench's own (the
// footer in pqmeta.go, pages in pqpage.go and pqread.go, encodings in
// pqdecode.go, codecs in pqcodec.go): each column chunk's pages are
// decoded a piece at a time into typed slices (the dictionary indexes and
// the dictionary's values when a page is dictionary-encoded) and converted
// into the bar columns. Rows are never materialised. Nothing a file says
// about itself sizes an allocation unchecked: its footer, pages and
// headers are bounded (maxFooterBytes, maxPageBytes, maxPageHeader), what
// the footer makes the set keep is charged to its index budget, and a
// page's values are decoded in pieces, whatever count it declares.

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
	leaf     int // index among the wanted leaves (a group's chunks); -1 when absent
	conv     convKind
	phys     pqType
	size     int  // FIXED_LEN_BYTE_ARRAY: the values' width
	optional bool // nullable: its pages carry definition levels
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
	// The bar columns' chunks, when it is used (indexed by column).
	chunks []pqChunk
}

// pqFile is an open Parquet file with its columns mapped to bar fields.
// What is kept of its footer is what the bars need: the columns' types,
// the row groups, and the chunks of those the window needs with their
// spans (see survey).
type pqFile struct {
	src        *source
	cols       [numColumns]pqColumn
	groups     []pqGroup
	rows       int64
	fileSymbol string // every bar's symbol when the file has no symbol column
	stats      [numColumns]colStats
	footerSum  [sha256.Size]byte
	digest     [sha256.Size]byte // of the footer and the chunks the window needs, by the survey
	nautilus   *ntBars           // a Nautilus bar file's metadata, nil for other files
	createdBy  string            // the writer, as its footer names it
}

func (pf *pqFile) symbolColumn() bool { return pf.cols[colSymbol].leaf >= 0 }
func (pf *pqFile) oneSymbol() string  { return pf.fileSymbol }

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
	if footerLen > src.size-12 {
		return nil, fail("truncated or corrupt: its footer claims " + itoa64(footerLen) + " bytes of a " + itoa64(src.size) + "-byte file")
	}
	if footerLen > maxFooterBytes {
		return nil, fail("its footer (the file's metadata) is " + sizeText(footerLen) + ": footers over " + sizeText(maxFooterBytes) +
			" are not read (a file of that many row groups or columns; write it with larger row groups)")
	}
	raw := make([]byte, footerLen)
	if _, err := src.fh.ReadAt(raw, src.size-8-footerLen); err != nil {
		return nil, pathError(src.path, err)
	}
	pf.footerSum = sha256.Sum256(raw)
	// The bar fields' columns, and the other names a layout gives the
	// time (see mapColumns); the key-value pairs of a Nautilus bar file.
	want := func(name string) bool {
		return slices.Contains(columnNames[:], name) || name == "date" || name == "ts_event"
	}
	wantKey := func(key string) bool { return nautilusKey(key) }
	perGroup := groupCost + numColumns*(int64(pqChunkCost)+chunkMetaCost)
	ft, err := parseFooter(raw, want, wantKey, func(groups int64) error {
		if groups > maxRowGroups {
			return fail("its footer lists " + itoa64(groups) + " row groups: at most " + itoa64(maxRowGroups) + " are read (write it with larger row groups)")
		}
		return src.set.charge(src.path, groups*perGroup)
	})
	var fe *footerError
	var de *Error
	switch {
	case errors.As(err, &de):
		return nil, err
	case errors.As(err, &fe) && fe.column != "":
		return nil, &Error{columnar: true, File: src.path, Column: fe.column, Msg: fe.msg}
	case errors.As(err, &fe):
		return nil, fail("corrupt footer: " + fe.msg)
	case err != nil:
		return nil, fail("not a readable Parquet file: corrupt footer (" + err.Error() + ")")
	case ft.encrypted:
		return nil, fail("encrypted Parquet files are not supported")
	}
	if err := pf.mapColumns(ft); err != nil {
		return nil, err
	}
	if err := pf.mapGroups(ft); err != nil {
		return nil, err
	}
	return pf, nil
}

// maxRowGroups bounds the row groups of a file.
const maxRowGroups = 1 << 20

// mapColumns finds the bar fields among the file's top-level columns, by
// name in any letter case, and checks their types.
func (pf *pqFile) mapColumns(ft *footer) error {
	for c := range pf.cols {
		pf.cols[c].leaf = -1
	}
	// The time column: timestamp, or what the layout names it: ts_event in
	// a Nautilus bar file, date in a freqtrade file.
	timeName := columnNames[colTimestamp]
	has := func(want string) bool {
		for _, el := range ft.cols {
			if el.name == want {
				return true
			}
		}
		return false
	}
	if !has(timeName) {
		if nt := nautilusMeta(ft.keyValues); nt != nil && has("ts_event") {
			pf.nautilus, timeName = nt, "ts_event"
		} else if pf.src.entry.ft != nil && has("date") {
			timeName = "date"
		}
	}
	pf.src.timeColumn = timeName
	pf.createdBy = ft.createdBy
	k := 0 // the wanted leaves, in the order parseFooter kept them
	for i := range ft.cols {
		el := &ft.cols[i]
		leaf := -1
		if !el.group {
			leaf = k
			k++
		}
		c := -1
		for j, want := range columnNames {
			if j == colTimestamp {
				want = timeName
			}
			if el.name == want {
				c = j
			}
		}
		if c < 0 {
			continue
		}
		if err := pf.mapColumn(c, el, leaf); err != nil {
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
	if src.pq != nil && strings.HasPrefix(src.pq.createdBy, "DuckDB") {
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
// convert it; leaf is its index among the wanted leaves (-1: a group).
func (pf *pqFile) mapColumn(c int, el *schemaCol, leaf int) error {
	wrong := func(want string) error {
		return &Error{columnar: true, File: pf.src.path, Column: pf.src.columnName(c), Msg: "wrong column type " + describeType(el) + "; want " + want}
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
	if el.group || el.repetition == repRepeated || el.phys == pqNoType {
		return wrong(want)
	}
	phys := el.phys
	col := &pf.cols[c]
	col.leaf, col.phys, col.optional = leaf, phys, el.repetition != repRequired
	col.name, col.precision = el.orig, -1
	logical := el.logical
	if nt := pf.nautilus; nt != nil {
		// A Nautilus bar file: ts_event in unsigned nanoseconds, the
		// values fixed-point.
		switch {
		case c == colTimestamp && phys == pqInt64 && (logical.kind == logicalNone || logical.kind == logicalInteger):
			col.conv, col.unsigned = convTimeNanos, logical.kind == logicalNone || !logical.signed
			return nil
		case c >= colOpen && phys == pqFixedLenByteArray && logical.kind == logicalNone && ntScale(int(el.typeLength)) >= 0:
			col.conv, col.scale, col.unsigned = convFixedLE, ntScale(int(el.typeLength)), c == colVolume
			col.size = int(el.typeLength)
			col.precision = nt.pricePrecision
			if c == colVolume {
				col.precision = nt.sizePrecision
			}
			return nil
		}
	}
	conv, hasConv := el.converted, el.converted >= 0
	switch c {
	case colTimestamp:
		switch {
		case phys == pqInt64:
			switch logical.kind {
			case logicalTimestamp:
				switch logical.unit {
				case unitNanos:
					col.conv = convTimeNanos
				case unitMicros:
					col.conv = convTimeMicros
				case unitMillis:
					col.conv = convTimeMillis
				}
			case logicalNone, logicalInteger:
				switch {
				case hasConv && conv == 9: // TIMESTAMP_MILLIS
					col.conv = convTimeMillis
				case hasConv && conv == 10: // TIMESTAMP_MICROS
					col.conv = convTimeMicros
				case !hasConv || conv == 18: // none, or INT_64
					col.conv = convTimeUnix
				}
			}
		case phys == pqInt32:
			switch logical.kind {
			case logicalDate:
				col.conv = convTimeDate
			case logicalNone, logicalInteger:
				switch {
				case hasConv && conv == 6: // DATE
					col.conv = convTimeDate
				case !hasConv || conv == 17: // none, or INT_32
					col.conv = convTimeUnix
				}
			}
		case phys == pqInt96:
			col.conv = convTimeInt96
		}
	case colSymbol:
		if phys == pqByteArray {
			switch logical.kind {
			case logicalNone, logicalString, logicalEnum:
				if !hasConv || conv == 0 || conv == 4 { // none, UTF8 or ENUM
					col.conv = convString
				}
			}
		}
	default:
		if logical.kind == logicalDecimal || hasConv && conv == 5 {
			scale := max(el.scale, 0)
			if logical.hasScale {
				scale = logical.scale
			}
			switch phys {
			case pqInt32, pqInt64, pqByteArray:
				if scale >= 0 && scale <= 76 {
					col.conv, col.scale = convDecimal, int(scale)
				}
			case pqFixedLenByteArray:
				if scale >= 0 && scale <= 76 && el.typeLength > 0 && el.typeLength <= 64 {
					col.conv, col.scale, col.size = convDecimal, int(scale), int(el.typeLength)
				}
			}
			break
		}
		switch phys {
		case pqDouble, pqFloat:
			if logical.kind == logicalNone {
				col.conv = convNumber
			}
		case pqInt32, pqInt64:
			switch logical.kind {
			case logicalNone:
				switch {
				case !hasConv:
					col.conv = convNumber
				case conv >= 11 && conv <= 14: // UINT_8 to UINT_64
					col.conv, col.unsigned = convNumber, true
				case conv >= 15 && conv <= 18: // INT_8 to INT_64
					col.conv = convNumber
				}
			case logicalInteger:
				col.conv, col.unsigned = convNumber, !logical.signed
			}
		}
	}
	if col.conv == convAbsent {
		return wrong(want)
	}
	return nil
}

// describeType names a column's type for a message.
func describeType(el *schemaCol) string {
	if el.group {
		return "a group of columns"
	}
	s := el.phys.String()
	if el.phys == pqNoType {
		s = "?"
	}
	if el.logical.kind != logicalNone {
		s += " (" + el.logical.name + ")"
	} else if conv := el.converted; conv >= 0 && int(conv) < len(convertedNames) {
		s += " (" + convertedNames[conv] + ")"
	}
	if el.repetition == repRepeated {
		s = "a list of " + s
	}
	return s
}

// convertedNames are the names of the legacy converted types, by number.
var convertedNames = [...]string{"UTF8", "MAP", "MAP_KEY_VALUE", "LIST", "ENUM", "DECIMAL", "DATE",
	"TIME_MILLIS", "TIME_MICROS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "UINT_8", "UINT_16", "UINT_32",
	"UINT_64", "INT_8", "INT_16", "INT_32", "INT_64", "JSON", "BSON", "INTERVAL"}

// pqChunkCost is what a used row group's chunk costs to keep, spans aside.
var pqChunkCost = unsafe.Sizeof(pqChunk{})

// mapGroups records the row groups, their time statistics, and which ones
// the window needs, with those groups' column chunks. It checks what the
// footer says about each against the file, so that a corrupt footer is an
// error here rather than later.
func (pf *pqFile) mapGroups(ft *footer) error {
	win := pf.src.set.win
	nw := len(ft.wanted)
	var start int64
	var ranges [][2]int64
	pf.groups = make([]pqGroup, 0, len(ft.groupRows))
	for gi, rows := range ft.groupRows {
		if rows > math.MaxInt64-start {
			return &Error{File: pf.src.path, Msg: "corrupt footer: row group " + itoa64(int64(gi)) + " has " + itoa64(rows) + " rows"}
		}
		g := pqGroup{index: gi, start: start, rows: rows}
		start += rows
		metas := ft.chunks[gi*nw : (gi+1)*nw]
		for c := range pf.cols {
			col := &pf.cols[c]
			if col.leaf < 0 {
				continue
			}
			m := &metas[col.leaf]
			switch {
			case m.dataOff < 0:
				return &Error{columnar: true, File: pf.src.path, Column: columnNames[c], Msg: "corrupt footer: row group " + itoa64(int64(gi)) + " lacks the column's metadata"}
			case m.numValues != rows:
				return &Error{columnar: true, File: pf.src.path, Column: columnNames[c], Msg: "corrupt footer: row group " + itoa64(int64(gi)) + " has " +
					itoa64(rows) + " rows and " + itoa64(m.numValues) + " values of the column"}
			case m.phys != col.phys:
				return &Error{columnar: true, File: pf.src.path, Column: columnNames[c], Msg: "corrupt footer: row group " + itoa64(int64(gi)) +
					" holds the column as " + m.phys.String() + ", its schema says " + col.phys.String()}
			}
		}
		if tc := pf.cols[colTimestamp]; tc.conv != convTimeInt96 {
			g.minT, g.maxT, g.stats = pf.statTimes(metas[tc.leaf].stats())
		}
		g.used = g.rows > 0 && (!g.stats || win.overlaps(g.minT, g.maxT))
		if g.stats && g.rows > 0 {
			pf.src.seenMin, pf.src.seenMax = min(pf.src.seenMin, g.minT), max(pf.src.seenMax, g.maxT)
		}
		if g.used {
			g.chunks = make([]pqChunk, numColumns)
			for c := range pf.cols {
				col := &pf.cols[c]
				if col.leaf < 0 {
					continue
				}
				m := &metas[col.leaf]
				off := m.dataOff
				if m.dictOff > 0 && m.dictOff < off {
					off = m.dictOff
				}
				size := m.compressed
				if off < 4 || size < 0 || off > pf.src.size-8 || size > pf.src.size-8-off {
					return &Error{columnar: true, File: pf.src.path, Column: columnNames[c],
						Msg: "truncated or corrupt: row group " + itoa64(int64(gi)) + "'s column lies outside the file"}
				}
				g.chunks[c] = pqChunk{start: off, end: off + size, codec: m.codec}
				ranges = append(ranges, [2]int64{off, off + size})
			}
		}
		pf.groups = append(pf.groups, g)
	}
	pf.rows = start
	if start == 0 {
		return &Error{File: pf.src.path, Msg: "no bars"}
	}
	slices.SortFunc(ranges, func(a, b [2]int64) int { return cmpInt64(a[0], b[0]) })
	for i := 1; i < len(ranges); i++ {
		if ranges[i][0] < ranges[i-1][1] {
			return &Error{File: pf.src.path, Msg: "corrupt footer: column chunks overlap"}
		}
	}
	return nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// statTimes converts the time statistics of a row group, the encoded
// minimum and maximum. It reports false when they cannot be used: absent,
// malformed, or unix integers in two magnitudes (seconds and
// milliseconds), which do not convert in order.
func (pf *pqFile) statTimes(lo, hi []byte) (int64, int64, bool) {
	a, ok1 := leInt(lo)
	b, ok2 := leInt(hi)
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

// surveyAll surveys the chunks of the row groups the window needs (see
// pqFile.survey), computing the file's digest; it stops when ctx is done.
func (pf *pqFile) surveyAll(ctx context.Context, seed maphash.Seed) error {
	h := sha256.New()
	h.Write(pf.footerSum[:])
	sc := pf.src.set.openScratch()
	br, buf := sc.br, sc.buf
	for gi := range pf.groups {
		g := &pf.groups[gi]
		if !g.used {
			continue
		}
		for c := range pf.cols {
			if pf.cols[c].leaf < 0 {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := pf.survey(ctx, &g.chunks[c], c, g.rows, br, h, seed, buf); err != nil {
				return err
			}
		}
	}
	h.Sum(pf.digest[:0])
	return nil
}

// prepare surveys the pages of the row groups the window needs (see
// survey), and refuses the file when a stream of it would not fit the
// set's stream budget by itself.
func (pf *pqFile) prepare(ctx context.Context) error {
	if err := pf.surveyAll(ctx, pf.src.set.seed); err != nil {
		return err
	}
	if need := pf.streamNeed(); need > pf.src.set.streamBudget {
		var page int64
		for c := range pf.stats {
			page = max(page, pf.stats[c].page, pf.stats[c].dict, pf.stats[c].span)
		}
		return &Error{File: pf.src.path, Msg: "reading it takes " + sizeText(need) + " at once (its pages and dictionaries are up to " +
			sizeText(page) + "): more than the " + sizeText(pf.src.set.streamBudget) +
			" a replay's streams may hold; write it with smaller pages (pyarrow: data_page_size, dictionary_pagesize_limit)"}
	}
	return nil
}

// streamNeed is what a stream of the file holds at most (see need).
func (pf *pqFile) streamNeed() int64 { return pf.need(streamCols(pf)) }

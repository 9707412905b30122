package data

import (
	"encoding/binary"
	"strings"
	"unsafe"
)

// The footer of a Parquet file (its FileMetaData) is read into what the
// bars need and nothing else: the top-level columns named like a bar
// field, and for each row group its row count and the metadata of those
// columns' chunks. Every other column, key-value pair, index and
// statistic is skipped where it lies. What is kept is charged to the set's
// index budget before it is allocated (see indexBudget).

// Parquet physical types.
type pqType int8

const (
	pqBoolean pqType = iota
	pqInt32
	pqInt64
	pqInt96
	pqFloat
	pqDouble
	pqByteArray
	pqFixedLenByteArray
	pqNoType pqType = -1
)

var pqTypeNames = [...]string{"BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"}

func (t pqType) String() string {
	if t >= 0 && int(t) < len(pqTypeNames) {
		return pqTypeNames[t]
	}
	return "type " + itoa64(int64(t))
}

// Field repetitions.
const (
	repRequired = 0
	repOptional = 1
	repRepeated = 2
)

// logicalKind is the kind of a column's logical type annotation.
type logicalKind uint8

const (
	logicalNone logicalKind = iota
	logicalString
	logicalEnum
	logicalDecimal
	logicalDate
	logicalTimestamp
	logicalInteger
	logicalOther // any other annotation: not a type a bar field takes
)

// Time units of a TIMESTAMP.
const (
	unitNone = iota
	unitMillis
	unitMicros
	unitNanos
)

// logicalType is a column's logical type annotation, as far as the bars
// need it.
type logicalType struct {
	kind     logicalKind
	name     string // the annotation's name, for messages
	unit     uint8  // TIMESTAMP
	signed   bool   // INTEGER
	scale    int32  // DECIMAL
	hasScale bool
}

// schemaCol is a top-level column of a Parquet file.
type schemaCol struct {
	name       string // in lower case
	orig       string // as the file writes it
	leaf       int    // index among the file's leaf columns
	group      bool
	phys       pqType
	typeLength int32
	repetition int32 // -1: unset
	converted  int32 // -1: unset
	scale      int32 // -1: unset
	logical    logicalType
}

// chunkMeta is what a row group's footer says of one column chunk.
type chunkMeta struct {
	phys       pqType
	codec      int32
	numValues  int64
	dataOff    int64
	dictOff    int64 // 0: none
	compressed int64 // total compressed size
	// Statistics: the encoded minimum and maximum (at most 8 bytes are
	// kept, enough for the integer timestamps they are used for).
	minV, maxV   [8]byte
	minN, maxN   int8 // their lengths; -1 when absent or longer
	deprMin, dep int8 // the same for the deprecated min and max fields
	deprMinV     [8]byte
	deprMaxV     [8]byte
}

// footer is a parsed FileMetaData: the top-level columns named like a bar
// field, the file's number of leaf columns, and per row group its rows and
// the chunks of the wanted columns (chunks[g*len(wanted)+k] is wanted
// column k's chunk in row group g).
type footer struct {
	cols      []schemaCol
	leaves    int
	groupRows []int64
	wanted    []int // leaf index of each wanted column
	chunks    []chunkMeta
	encrypted bool
	// createdBy names the writer (cut to 256 bytes); keyValues are the
	// pairs of the file's key-value metadata whose keys wantKey took
	// (values cut to 1 KiB, 64 pairs at most).
	createdBy string
	keyValues []keyValue
}

// keyValue is a pair of a file's key-value metadata.
type keyValue struct{ Key, Value string }

// What a row group's footer entry costs, per wanted column and per row
// group (see indexBudget).
var (
	chunkMetaCost = int64(unsafe.Sizeof(chunkMeta{}))
	groupCost     = int64(unsafe.Sizeof(pqGroup{})) + 8
)

// parseFooter reads the FileMetaData in b. want reports whether a
// top-level column of that name (in lower case) may be a bar field, and
// wantKey whether a key of the key-value metadata is kept; charge is
// called with the number of row groups before they are allocated (each
// costs groupCost and chunkMetaCost a wanted column), and its error ends
// the parse.
func parseFooter(b []byte, want, wantKey func(name string) bool, charge func(groups int64) error) (*footer, error) {
	r := &thriftReader{b: b}
	ft := &footer{}
	// The schema must be read before the row groups, whatever the order of
	// the fields: remember where each is.
	schemaAt, groupsAt := -1, -1
	err := r.structure(func(f field) error {
		switch {
		case f.id == 2 && f.typ == tList:
			schemaAt = r.pos
		case f.id == 4 && f.typ == tList:
			groupsAt = r.pos
		case f.id == 8 && f.typ == tStruct: // encryption_algorithm: a plaintext footer of an encrypted file
			ft.encrypted = true
		case f.id == 6 && f.typ == tBinary:
			v, err := r.binary()
			ft.createdBy = string(v[:min(len(v), 256)])
			return err
		case f.id == 5 && f.typ == tList:
			return r.structList(f.typ, func(int, int) error {
				var k, v []byte
				err := r.structure(func(g field) error {
					var err error
					switch {
					case g.id == 1 && g.typ == tBinary:
						k, err = r.binary()
					case g.id == 2 && g.typ == tBinary:
						v, err = r.binary()
					default:
						err = r.skip(g.typ)
					}
					return err
				})
				if err == nil && wantKey(string(k)) && len(ft.keyValues) < 64 {
					ft.keyValues = append(ft.keyValues, keyValue{string(k), string(v[:min(len(v), 1<<10)])})
				}
				return err
			})
		}
		return r.skip(f.typ)
	})
	if err != nil {
		return nil, err
	}
	if schemaAt < 0 {
		return nil, errThrift
	}
	r.pos = schemaAt
	if err := ft.parseSchema(r, want); err != nil {
		return nil, err
	}
	leafCol := make(map[int]int, len(ft.cols)) // leaf index -> wanted column
	for _, c := range ft.cols {
		if !c.group {
			leafCol[c.leaf] = len(ft.wanted)
			ft.wanted = append(ft.wanted, c.leaf)
		}
	}
	if groupsAt >= 0 {
		r.pos = groupsAt
		if err := ft.parseGroups(r, leafCol, charge); err != nil {
			return nil, err
		}
	}
	return ft, nil
}

// parseSchema reads the schema, a tree flattened in preorder, keeping the
// root's children that want names.
func (ft *footer) parseSchema(r *thriftReader, want func(string) bool) error {
	// left[d] is how many children the open group at depth d still has;
	// depth 0 is the root.
	var left []int64
	var dupes map[string]bool
	return r.structList(tList, func(i, n int) error {
		var el schemaCol
		el.phys, el.repetition, el.converted, el.scale = pqNoType, -1, -1, -1
		var children int64
		var name []byte
		err := r.structure(func(f field) error {
			switch {
			case f.id == 1 && f.typ == tI32:
				v, err := r.i32()
				el.phys = pqType(min(max(v, -1), 100))
				return err
			case f.id == 2 && f.typ == tI32:
				v, err := r.i32()
				el.typeLength = v
				return err
			case f.id == 3 && f.typ == tI32:
				v, err := r.i32()
				el.repetition = v
				return err
			case f.id == 4 && f.typ == tBinary:
				var err error
				name, err = r.binary()
				return err
			case f.id == 5 && f.typ == tI32:
				v, err := r.i32()
				children = int64(v)
				return err
			case f.id == 6 && f.typ == tI32:
				v, err := r.i32()
				el.converted = v
				return err
			case f.id == 7 && f.typ == tI32:
				v, err := r.i32()
				el.scale = v
				return err
			case f.id == 10 && f.typ == tStruct:
				return r.logical(&el.logical)
			}
			return r.skip(f.typ)
		})
		if err != nil {
			return err
		}
		if i == 0 { // the root
			if children < 0 || children > int64(n-1) {
				return errThrift
			}
			left = append(left, children)
			return nil
		}
		depth := len(left)
		for depth > 0 && left[depth-1] == 0 {
			depth--
		}
		if depth == 0 {
			return errThrift // more elements than the tree has
		}
		left = left[:depth]
		left[depth-1]--
		top := depth == 1
		if children > 0 {
			if children > int64(n-i-1) || len(left) >= maxThriftDepth {
				return errThrift
			}
			left = append(left, children)
		}
		if top {
			lname := strings.ToLower(string(name))
			if want(lname) {
				if dupes[lname] {
					return &footerError{column: lname, msg: "duplicate column"}
				}
				if dupes == nil {
					dupes = map[string]bool{}
				}
				dupes[lname] = true
				el.name, el.orig = lname, string(name)
				el.leaf = ft.leaves
				el.group = children > 0
				ft.cols = append(ft.cols, el)
			}
		}
		if children <= 0 {
			ft.leaves++
		}
		return nil
	})
}

// footerError is a problem of the footer with one column.
type footerError struct {
	column, msg string
}

func (e *footerError) Error() string { return e.msg }

// logicalNames are the names of the LogicalType union's members, by field.
var logicalNames = [...]string{1: "STRING", 2: "MAP", 3: "LIST", 4: "ENUM", 5: "DECIMAL", 6: "DATE", 7: "TIME",
	8: "TIMESTAMP", 10: "INTEGER", 11: "UNKNOWN", 12: "JSON", 13: "BSON", 14: "UUID", 15: "FLOAT16",
	16: "VARIANT", 17: "GEOMETRY", 18: "GEOGRAPHY"}

// logical reads a LogicalType union.
func (r *thriftReader) logical(lt *logicalType) error {
	return r.structure(func(f field) error {
		if f.typ != tStruct {
			return r.skip(f.typ)
		}
		lt.name = "logical type " + itoa64(int64(f.id))
		if f.id >= 0 && int(f.id) < len(logicalNames) && logicalNames[f.id] != "" {
			lt.name = logicalNames[f.id]
		}
		switch f.id {
		case 1:
			lt.kind = logicalString
		case 4:
			lt.kind = logicalEnum
		case 6:
			lt.kind = logicalDate
		case 5:
			lt.kind = logicalDecimal
			return r.structure(func(g field) error {
				if g.id == 1 && g.typ == tI32 {
					v, err := r.i32()
					lt.scale, lt.hasScale = v, true
					return err
				}
				return r.skip(g.typ)
			})
		case 8:
			lt.kind = logicalTimestamp
			return r.structure(func(g field) error {
				if g.id == 2 && g.typ == tStruct { // unit
					return r.structure(func(u field) error {
						if u.typ == tStruct && u.id >= 1 && u.id <= 3 {
							lt.unit = uint8(u.id) // MILLIS, MICROS, NANOS
						}
						return r.skip(u.typ)
					})
				}
				return r.skip(g.typ)
			})
		case 10:
			lt.kind = logicalInteger
			lt.signed = true
			return r.structure(func(g field) error {
				if g.id == 2 && (g.typ == tTrue || g.typ == tFalse) {
					lt.signed = g.typ == tTrue
				}
				return r.skip(g.typ)
			})
		default:
			lt.kind = logicalOther
		}
		return r.skip(f.typ)
	})
}

// parseGroups reads the row groups, keeping the chunks of the wanted
// leaves (leafCol maps a leaf to its wanted column).
func (ft *footer) parseGroups(r *thriftReader, leafCol map[int]int, charge func(int64) error) error {
	k := len(ft.wanted)
	return r.structList(tList, func(g, n int) error {
		if g == 0 {
			if err := charge(int64(n)); err != nil {
				return err
			}
			ft.groupRows = make([]int64, n)
			ft.chunks = make([]chunkMeta, n*k)
		}
		chunks := ft.chunks[g*k : (g+1)*k]
		for i := range chunks {
			chunks[i].phys = pqNoType
			chunks[i].dataOff = -1
		}
		seen, rows := -1, int64(-1)
		err := r.structure(func(f field) error {
			switch {
			case f.id == 1 && f.typ == tList:
				return r.structList(f.typ, func(i, _ int) error {
					seen = i
					w, ok := leafCol[i]
					if !ok {
						return r.skip(tStruct)
					}
					return r.chunk(&chunks[w], &ft.encrypted)
				})
			case f.id == 3 && (f.typ == tI64 || f.typ == tI32):
				var err error
				rows, err = r.int(f.typ)
				return err
			}
			return r.skip(f.typ)
		})
		if err != nil {
			return err
		}
		if seen+1 != ft.leaves {
			return &footerError{msg: "row group " + itoa64(int64(g)) + " has " + itoa64(int64(seen+1)) + " column chunks, the schema " + itoa64(int64(ft.leaves)) + " columns"}
		}
		if rows < 0 {
			return &footerError{msg: "row group " + itoa64(int64(g)) + " has " + itoa64(rows) + " rows"}
		}
		ft.groupRows[g] = rows
		return nil
	})
}

// chunk reads a ColumnChunk into m.
func (r *thriftReader) chunk(m *chunkMeta, encrypted *bool) error {
	var elsewhere bool
	err := r.structure(func(f field) error {
		switch {
		case f.id == 1 && f.typ == tBinary:
			p, err := r.binary()
			elsewhere = len(p) > 0
			return err
		case f.id == 3 && f.typ == tStruct:
			return r.columnMeta(m)
		case f.id == 8 || f.id == 9:
			*encrypted = true
		}
		return r.skip(f.typ)
	})
	if err == nil && elsewhere {
		return &footerError{msg: "a column chunk lies in another file (file_path): not supported"}
	}
	return err
}

// columnMeta reads a ColumnMetaData into m.
func (r *thriftReader) columnMeta(m *chunkMeta) error {
	m.minN, m.maxN, m.deprMin, m.dep = -1, -1, -1, -1
	return r.structure(func(f field) error {
		var err error
		switch {
		case f.id == 1 && f.typ == tI32:
			var v int32
			v, err = r.i32()
			m.phys = pqType(min(max(v, -1), 100))
		case f.id == 4 && f.typ == tI32:
			m.codec, err = r.i32()
		case f.id == 5 && f.typ == tI64:
			m.numValues, err = r.varint()
		case f.id == 7 && f.typ == tI64:
			m.compressed, err = r.varint()
		case f.id == 9 && f.typ == tI64:
			m.dataOff, err = r.varint()
		case f.id == 11 && f.typ == tI64:
			m.dictOff, err = r.varint()
		case f.id == 12 && f.typ == tStruct:
			err = r.structure(func(s field) error {
				if s.typ != tBinary || s.id < 1 || s.id > 6 || s.id == 3 || s.id == 4 {
					return r.skip(s.typ)
				}
				v, err := r.binary()
				keep := func(dst *[8]byte, n *int8) {
					*n = -1
					if len(v) <= 8 {
						*n = int8(copy(dst[:], v))
					}
				}
				switch s.id {
				case 1:
					keep(&m.deprMaxV, &m.dep)
				case 2:
					keep(&m.deprMinV, &m.deprMin)
				case 5:
					keep(&m.maxV, &m.maxN)
				case 6:
					keep(&m.minV, &m.minN)
				}
				return err
			})
		default:
			err = r.skip(f.typ)
		}
		return err
	})
}

// stats returns the chunk's encoded minimum and maximum: the current
// fields, else the deprecated ones (signed order: right for integers).
func (m *chunkMeta) stats() (lo, hi []byte) {
	if m.minN > 0 && m.maxN > 0 {
		return m.minV[:m.minN], m.maxV[:m.maxN]
	}
	if m.deprMin > 0 && m.dep > 0 {
		return m.deprMinV[:m.deprMin], m.deprMaxV[:m.dep]
	}
	return nil, nil
}

// leUint reads a little-endian integer of 4 or 8 bytes.
func leInt(b []byte) (int64, bool) {
	switch len(b) {
	case 8:
		return int64(binary.LittleEndian.Uint64(b)), true
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(b))), true
	}
	return 0, false
}

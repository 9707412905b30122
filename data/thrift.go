package data

import (
	"encoding/binary"
	"errors"
	"math"
)

// Parquet's footer and page headers are Thrift structures in the compact
// protocol. thriftReader reads them from a byte slice that holds the whole
// structure, keeping nothing it is not asked for: every length and count
// it meets is checked against the bytes left before it is used (an
// element takes at least one byte), so a corrupt or hostile header costs
// its own size in time and nothing more in memory.

// Thrift compact protocol types, the low nibble of a field header.
const (
	tStop   = 0
	tTrue   = 1
	tFalse  = 2
	tByte   = 3
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tDouble = 7
	tBinary = 8
	tList   = 9
	tSet    = 10
	tMap    = 11
	tStruct = 12
)

// maxThriftDepth bounds the nesting of structures and containers: Parquet's
// own go 5 deep.
const maxThriftDepth = 32

// errThrift is what every malformed structure reports: its bytes do not
// read as the structure, whatever the exact fault.
var errThrift = errors.New("malformed Thrift structure")

type thriftReader struct {
	b     []byte
	pos   int
	depth int
}

// field is a field header: its id and type; type tStop ends a structure.
type field struct {
	id  int16
	typ byte
}

func (r *thriftReader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, errThrift
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

func (r *thriftReader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.b[r.pos:])
	if n <= 0 {
		return 0, errThrift
	}
	r.pos += n
	return v, nil
}

func (r *thriftReader) varint() (int64, error) {
	u, err := r.uvarint()
	return int64(u>>1) ^ -int64(u&1), err
}

func (r *thriftReader) i32() (int32, error) {
	v, err := r.varint()
	if err != nil || v < math.MinInt32 || v > math.MaxInt32 {
		return 0, errThrift
	}
	return int32(v), nil
}

// readField reads the next field header of a structure whose previous
// field had id last.
func (r *thriftReader) readField(last int16) (field, error) {
	c, err := r.byte()
	if err != nil {
		return field{}, err
	}
	typ := c & 0x0f
	if typ == tStop {
		return field{typ: tStop}, nil
	}
	if d := int16(c >> 4); d != 0 {
		return field{id: last + d, typ: typ}, nil
	}
	v, err := r.varint()
	if err != nil || v < math.MinInt16 || v > math.MaxInt16 {
		return field{}, errThrift
	}
	return field{id: int16(v), typ: typ}, nil
}

// int reads an integer field of any width.
func (r *thriftReader) int(typ byte) (int64, error) {
	switch typ {
	case tByte:
		c, err := r.byte()
		return int64(int8(c)), err
	case tI16, tI32, tI64:
		return r.varint()
	}
	return 0, errThrift
}

// binary reads a binary or string field, returning a slice of the input.
func (r *thriftReader) binary() ([]byte, error) {
	n, err := r.uvarint()
	if err != nil || n > uint64(len(r.b)-r.pos) {
		return nil, errThrift
	}
	s := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return s, nil
}

// list reads a list or set header: the number of elements and their type.
// The number is at most the bytes left: an element takes at least one.
func (r *thriftReader) list() (int, byte, error) {
	c, err := r.byte()
	if err != nil {
		return 0, 0, err
	}
	n := uint64(c >> 4)
	if n == 15 {
		if n, err = r.uvarint(); err != nil {
			return 0, 0, err
		}
	}
	if n > uint64(len(r.b)-r.pos) {
		return 0, 0, errThrift
	}
	return int(n), c & 0x0f, nil
}

// enter and leave bracket a nested structure or container.
func (r *thriftReader) enter() error {
	if r.depth++; r.depth > maxThriftDepth {
		return errThrift
	}
	return nil
}

func (r *thriftReader) leave() { r.depth-- }

// skip skips a value of type typ.
func (r *thriftReader) skip(typ byte) error {
	switch typ {
	case tTrue, tFalse:
		return nil
	case tByte:
		_, err := r.byte()
		return err
	case tI16, tI32, tI64:
		_, err := r.uvarint()
		return err
	case tDouble:
		if len(r.b)-r.pos < 8 {
			return errThrift
		}
		r.pos += 8
		return nil
	case tBinary:
		_, err := r.binary()
		return err
	case tList, tSet:
		if err := r.enter(); err != nil {
			return err
		}
		defer r.leave()
		n, et, err := r.list()
		if err != nil {
			return err
		}
		for range n {
			if err := r.skipElem(et); err != nil {
				return err
			}
		}
		return nil
	case tMap:
		if err := r.enter(); err != nil {
			return err
		}
		defer r.leave()
		n, err := r.uvarint()
		if err != nil || n > uint64(len(r.b)-r.pos) {
			return errThrift
		}
		if n == 0 {
			return nil
		}
		kv, err := r.byte()
		if err != nil {
			return err
		}
		for range n {
			if err := r.skipElem(kv >> 4); err != nil {
				return err
			}
			if err := r.skipElem(kv & 0x0f); err != nil {
				return err
			}
		}
		return nil
	case tStruct:
		return r.structure(func(f field) error { return r.skip(f.typ) })
	}
	return errThrift
}

// skipElem skips an element of a container: booleans take a byte there.
func (r *thriftReader) skipElem(typ byte) error {
	if typ == tTrue || typ == tFalse {
		_, err := r.byte()
		return err
	}
	return r.skip(typ)
}

// structure reads a structure, calling each for every field; each must
// read or skip the field's value.
func (r *thriftReader) structure(each func(f field) error) error {
	if err := r.enter(); err != nil {
		return err
	}
	defer r.leave()
	var last int16
	for {
		f, err := r.readField(last)
		if err != nil {
			return err
		}
		if f.typ == tStop {
			return nil
		}
		if err := each(f); err != nil {
			return err
		}
		last = f.id
	}
}

// structList reads a list of structures, calling each for element i; each
// reads the element with r.structure.
func (r *thriftReader) structList(typ byte, each func(i, n int) error) error {
	if typ != tList && typ != tSet {
		return errThrift
	}
	if err := r.enter(); err != nil {
		return err
	}
	defer r.leave()
	n, et, err := r.list()
	if err != nil {
		return err
	}
	if et != tStruct && n > 0 {
		return errThrift
	}
	for i := range n {
		if err := each(i, n); err != nil {
			return err
		}
	}
	return nil
}

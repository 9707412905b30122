package data

import (
	"encoding/binary"
	"errors"
)

// A reader of FlatBuffers, the encoding of Arrow IPC's metadata (the
// footer, the schema, each record batch's header), for what feather.go
// needs: tables, scalars, strings, vectors of tables and of structs. Every
// offset is checked against the buffer: a corrupt or hostile file is an
// error, never a read out of bounds.

var errFlatbuf = errors.New("corrupt metadata")

// fbTable is a table of a buffer: its position and its vtable's.
type fbTable struct {
	buf   []byte
	pos   int
	vt    int
	vtLen int
}

func le16(b []byte, at int) int { return int(binary.LittleEndian.Uint16(b[at:])) }
func le32(b []byte, at int) int64 {
	return int64(int32(binary.LittleEndian.Uint32(b[at:])))
}

// fbRoot is the root table of a buffer.
func fbRoot(buf []byte) (fbTable, error) {
	if len(buf) < 4 {
		return fbTable{}, errFlatbuf
	}
	return fbTableAt(buf, int64(binary.LittleEndian.Uint32(buf)))
}

// fbTableAt is the table at pos of buf.
func fbTableAt(buf []byte, pos int64) (fbTable, error) {
	n := int64(len(buf))
	if pos < 0 || pos+4 > n {
		return fbTable{}, errFlatbuf
	}
	vt := pos - le32(buf, int(pos))
	if vt < 0 || vt+4 > n {
		return fbTable{}, errFlatbuf
	}
	vtLen := le16(buf, int(vt))
	if vtLen < 4 || vtLen%2 != 0 || vt+int64(vtLen) > n {
		return fbTable{}, errFlatbuf
	}
	return fbTable{buf: buf, pos: int(pos), vt: int(vt), vtLen: vtLen}, nil
}

// at returns where field i's value of size bytes lies, 0 when the field
// is absent (its default applies).
func (t fbTable) at(i, size int) (int, error) {
	o := 4 + 2*i
	if o+2 > t.vtLen {
		return 0, nil
	}
	off := le16(t.buf, t.vt+o)
	if off == 0 {
		return 0, nil
	}
	p := t.pos + off
	if p+size > len(t.buf) {
		return 0, errFlatbuf
	}
	return p, nil
}

func (t fbTable) uint8(i int, def uint8) (uint8, error) {
	p, err := t.at(i, 1)
	if err != nil || p == 0 {
		return def, err
	}
	return t.buf[p], nil
}

func (t fbTable) bool(i int) (bool, error) {
	v, err := t.uint8(i, 0)
	return v != 0, err
}

func (t fbTable) int16(i int, def int16) (int16, error) {
	p, err := t.at(i, 2)
	if err != nil || p == 0 {
		return def, err
	}
	return int16(binary.LittleEndian.Uint16(t.buf[p:])), nil
}

func (t fbTable) int32(i int, def int32) (int32, error) {
	p, err := t.at(i, 4)
	if err != nil || p == 0 {
		return def, err
	}
	return int32(binary.LittleEndian.Uint32(t.buf[p:])), nil
}

func (t fbTable) int64(i int, def int64) (int64, error) {
	p, err := t.at(i, 8)
	if err != nil || p == 0 {
		return def, err
	}
	return int64(binary.LittleEndian.Uint64(t.buf[p:])), nil
}

// ref follows the offset in field i: where what it refers to lies, or 0
// when the field is absent.
func (t fbTable) ref(i int) (int64, error) {
	p, err := t.at(i, 4)
	if err != nil || p == 0 {
		return 0, err
	}
	return int64(p) + int64(binary.LittleEndian.Uint32(t.buf[p:])), nil
}

// table is the table field i refers to; ok is false when it is absent.
func (t fbTable) table(i int) (sub fbTable, ok bool, err error) {
	p, err := t.ref(i)
	if err != nil || p == 0 {
		return fbTable{}, false, err
	}
	sub, err = fbTableAt(t.buf, p)
	return sub, err == nil, err
}

// vector returns where the elements of the vector in field i start and
// how many there are, each of elemSize bytes (0, 0 when it is absent).
func (t fbTable) vector(i, elemSize int) (start, n int, err error) {
	p, err := t.ref(i)
	if err != nil || p == 0 {
		return 0, 0, err
	}
	if p+4 > int64(len(t.buf)) {
		return 0, 0, errFlatbuf
	}
	count := int64(binary.LittleEndian.Uint32(t.buf[p:]))
	start64 := p + 4
	if count*int64(elemSize) > int64(len(t.buf))-start64 {
		return 0, 0, errFlatbuf
	}
	return int(start64), int(count), nil
}

// string is the string in field i ("" when absent), at most limit bytes.
func (t fbTable) string(i, limit int) (string, error) {
	start, n, err := t.vector(i, 1)
	if err != nil {
		return "", err
	}
	if n > limit {
		return "", errFlatbuf
	}
	return string(t.buf[start : start+n]), nil
}

// elem is table k of a vector of tables that starts at start.
func (t fbTable) elem(start, k int) (fbTable, error) {
	p := start + 4*k
	return fbTableAt(t.buf, int64(p)+int64(binary.LittleEndian.Uint32(t.buf[p:])))
}

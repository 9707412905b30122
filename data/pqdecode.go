// This file is long because it is one layer of the Parquet reader: the
// value encodings of a page (bit-packed and RLE hybrid, delta binary
// packed, plain, dictionary indices) and the page decoder that picks
// among them. Each decoder keeps the same bounded-memory contract (a
// piece at a time into the caller's slice, nothing sized from the page),
// which reads best checked side by side; the file and column structure is
// in parquet.go and pqmeta.go, the page reads in pqpage.go and pqread.go.

package data

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// The value encodings of Parquet pages, each decoded a piece at a time
// into a caller's slice: a decoder holds its position and nothing sized
// from the page (a page's value count, a run's length, a delta block's
// size are what the data says, and data is hostile). Every read checks the
// bytes left, so a decoder fails at the first byte it lacks.

var (
	errShort   = errors.New("the page ends before its values do")
	errBitWide = errors.New("bit width out of range")
)

// readBits returns the w-bit value at bit offset bit of b, least
// significant bit first (Parquet's bit-packing order). The caller checks
// that the value's bits lie within b.
func readBits(b []byte, bit uint64, w uint) uint64 {
	i := int(bit >> 3)
	s := uint(bit & 7)
	var v uint64
	if i+8 <= len(b) {
		v = binary.LittleEndian.Uint64(b[i:])
	} else {
		for k := 0; i+k < len(b); k++ {
			v |= uint64(b[i+k]) << (8 * k)
		}
	}
	v >>= s
	if w+s > 64 && i+8 < len(b) {
		v |= uint64(b[i+8]) << (64 - s)
	}
	if w < 64 {
		v &= 1<<w - 1
	}
	return v
}

// unpack8 unpacks the eight values of width w (at most 32 bits) packed in
// the first w bytes of b.
func unpack8(dst []int32, b []byte, w uint) {
	if len(b) < 32 {
		var buf [32]byte
		copy(buf[:], b[:w])
		b = buf[:]
	}
	words := [5]uint64{binary.LittleEndian.Uint64(b[0:]), binary.LittleEndian.Uint64(b[8:]),
		binary.LittleEndian.Uint64(b[16:]), binary.LittleEndian.Uint64(b[24:]), 0}
	mask := uint64(1)<<w - 1
	for i := range 8 {
		bit := uint(i) * w
		q, r := bit>>6, bit&63
		v := words[q] >> r
		if r+w > 64 {
			v |= words[q+1] << (64 - r)
		}
		dst[i] = int32(v & mask)
	}
}

// hybridDecoder decodes the RLE / bit-packing hybrid of dictionary indexes
// and definition levels: runs of one repeated value, and groups of eight
// bit-packed values.
type hybridDecoder struct {
	b      []byte
	pos    int
	width  uint
	left   int    // values left in the current run
	packed bool   // the current run is bit-packed
	value  uint64 // a repeated run's value
	bit    uint64 // a packed run's next value, as a bit offset into b
}

func (d *hybridDecoder) init(b []byte, width uint) error {
	if width > 32 {
		return errBitWide
	}
	*d = hybridDecoder{b: b, width: width}
	return nil
}

// run reads the next run's header.
func (d *hybridDecoder) run() error {
	h, n := binary.Uvarint(d.b[d.pos:])
	if n <= 0 {
		return errShort
	}
	d.pos += n
	if h&1 == 1 {
		groups := h >> 1
		size := groups * uint64(d.width) // bytes: 8 values of width bits each group
		if groups > math.MaxInt32/8 || size > uint64(len(d.b)-d.pos) {
			// A last run may be cut short: its values beyond the page's
			// are padding. Keep the values whose bits are there.
			size = uint64(len(d.b) - d.pos)
			if d.width == 0 {
				groups = min(groups, math.MaxInt32/8)
			} else {
				groups = size / uint64(d.width)
			}
		}
		d.packed, d.left, d.bit = true, int(groups*8), uint64(d.pos)*8
		if d.width == 0 {
			d.left = int(groups * 8)
		}
		d.pos += int(size)
		if d.left == 0 {
			return errShort
		}
		return nil
	}
	count := h >> 1
	nb := int(d.width+7) / 8
	if nb > len(d.b)-d.pos {
		return errShort
	}
	var v uint64
	for k := range nb {
		v |= uint64(d.b[d.pos+k]) << (8 * k)
	}
	d.pos += nb
	if count > math.MaxInt32 {
		count = math.MaxInt32
	}
	d.packed, d.left, d.value = false, int(count), v
	return nil
}

// next fills dst with the next values.
func (d *hybridDecoder) next(dst []int32) error {
	for i := 0; i < len(dst); {
		if d.left == 0 {
			if err := d.run(); err != nil {
				return err
			}
			continue
		}
		k := min(d.left, len(dst)-i)
		if d.packed {
			j := 0
			// Eight values at once from a byte boundary: they are the w
			// bytes there (a run's groups of eight start on one).
			w := uint64(d.width)
			for ; j+8 <= k && d.bit%8 == 0 && w > 0; j += 8 {
				unpack8(dst[i+j:i+j+8], d.b[d.bit/8:], d.width)
				d.bit += 8 * w
			}
			for ; j < k; j++ {
				dst[i+j] = int32(readBits(d.b, d.bit, d.width))
				d.bit += w
			}
		} else {
			v := int32(d.value)
			for j := range k {
				dst[i+j] = v
			}
		}
		d.left -= k
		i += k
	}
	return nil
}

// firstNot returns the index of the first of the next n values that is
// not want, or -1 when they all are, consuming them.
func (d *hybridDecoder) firstNot(n int, want uint64) (int, error) {
	for i := 0; i < n; {
		if d.left == 0 {
			if err := d.run(); err != nil {
				return -1, err
			}
			continue
		}
		k := min(d.left, n-i)
		if d.packed {
			for j := range k {
				if readBits(d.b, d.bit, d.width) != want {
					return i + j, nil
				}
				d.bit += uint64(d.width)
			}
		} else if d.value != want {
			return i, nil
		}
		d.left -= k
		i += k
	}
	return -1, nil
}

// maxDeltaBlock bounds the block size of the delta encoding: writers use
// 128 values.
const maxDeltaBlock = 1 << 16

// deltaDecoder decodes DELTA_BINARY_PACKED: a first value, then blocks of
// deltas, each block a minimum delta and miniblocks of bit-packed
// offsets from it. Arithmetic wraps, as the format says.
type deltaDecoder struct {
	b         []byte
	pos       int
	block     int // values per block
	minis     int // miniblocks per block
	perMini   int // values per miniblock
	total     uint64
	emitted   uint64 // values returned (the first value included)
	last      uint64
	minDelta  uint64
	widths    []byte // the current block's miniblock bit widths
	mini      int    // the current miniblock
	inMini    int    // values of it read
	miniStart int    // where its bits start in b
	width     uint
}

// init reads the header.
func (d *deltaDecoder) init(b []byte) error {
	*d = deltaDecoder{b: b}
	block, err := d.uvarint()
	if err != nil {
		return err
	}
	minis, err := d.uvarint()
	if err != nil {
		return err
	}
	if block == 0 || block > maxDeltaBlock || block%128 != 0 || minis == 0 || minis > block || block%minis != 0 || (block/minis)%32 != 0 {
		return errors.New("DELTA_BINARY_PACKED block of " + strconv.FormatUint(block, 10) + " values in " + strconv.FormatUint(minis, 10) + " miniblocks")
	}
	d.block, d.minis, d.perMini = int(block), int(minis), int(block/minis)
	if d.total, err = d.uvarint(); err != nil {
		return err
	}
	first, err := d.uvarint()
	if err != nil {
		return err
	}
	d.last = uint64(int64(first>>1) ^ -int64(first&1))
	d.mini = d.minis // no block started
	return nil
}

func (d *deltaDecoder) uvarint() (uint64, error) {
	v, n := binary.Uvarint(d.b[d.pos:])
	if n <= 0 {
		return 0, errShort
	}
	d.pos += n
	return v, nil
}

// startBlock reads a block's header.
func (d *deltaDecoder) startBlock() error {
	md, err := d.uvarint()
	if err != nil {
		return err
	}
	d.minDelta = uint64(int64(md>>1) ^ -int64(md&1))
	if d.minis > len(d.b)-d.pos {
		return errShort
	}
	d.widths = d.b[d.pos : d.pos+d.minis]
	d.pos += d.minis
	d.mini = -1
	return d.startMini()
}

// startMini moves to the next miniblock of the block.
func (d *deltaDecoder) startMini() error {
	d.mini++
	if d.mini >= d.minis {
		return d.startBlock()
	}
	w := uint(d.widths[d.mini])
	if w > 64 {
		return errBitWide
	}
	d.width, d.inMini, d.miniStart = w, 0, d.pos
	// The miniblock's values left to read must have their bits; a last
	// miniblock may be cut after them.
	need := min(uint64(d.perMini), d.total-d.emitted)
	if (need*uint64(w)+7)/8 > uint64(len(d.b)-d.pos) {
		return errShort
	}
	d.pos += int(min(uint64(d.perMini)*uint64(w)/8, uint64(len(d.b)-d.pos)))
	return nil
}

// next fills dst with the next values, wrapping at 64 bits.
func (d *deltaDecoder) next(dst []int64) error {
	for i := range dst {
		if d.emitted >= d.total {
			return errShort
		}
		if d.emitted > 0 {
			if d.mini >= d.minis || d.inMini == d.perMini {
				if err := d.startMini(); err != nil {
					return err
				}
			}
			off := readBits(d.b, uint64(d.miniStart)*8+uint64(d.inMini)*uint64(d.width), d.width)
			d.inMini++
			d.last += d.minDelta + off
		}
		d.emitted++
		dst[i] = int64(d.last)
	}
	return nil
}

// end returns where the encoded values end in b, reading the block
// headers of the values not read yet (not their bits): what follows a
// DELTA_BINARY_PACKED run of lengths in the byte-array encodings.
func (d *deltaDecoder) end() (int, error) {
	e := *d
	left := e.total - e.emitted
	if e.emitted == 0 && left > 0 {
		left-- // the first value is in the header
	}
	// Values left in the current miniblock, then in the rest of its block.
	if e.mini < e.minis && left > 0 {
		inMini := uint64(e.perMini - e.inMini)
		if e.emitted == 0 {
			inMini = 0
		}
		left -= min(left, inMini)
		for m := e.mini + 1; m < e.minis && left > 0; m++ {
			w := uint64(e.widths[m])
			if w > 64 {
				return 0, errBitWide
			}
			size := uint64(e.perMini) * w / 8
			if size > uint64(len(e.b)-e.pos) {
				if (min(uint64(e.perMini), left)*w+7)/8 > uint64(len(e.b)-e.pos) {
					return 0, errShort
				}
				size = uint64(len(e.b) - e.pos)
			}
			e.pos += int(size)
			left -= min(left, uint64(e.perMini))
		}
	}
	for left > 0 {
		if _, err := e.uvarint(); err != nil {
			return 0, err
		}
		if e.minis > len(e.b)-e.pos {
			return 0, errShort
		}
		widths := e.b[e.pos : e.pos+e.minis]
		e.pos += e.minis
		for m := 0; m < e.minis && left > 0; m++ {
			w := uint64(widths[m])
			if w > 64 {
				return 0, errBitWide
			}
			size := uint64(e.perMini) * w / 8
			if size > uint64(len(e.b)-e.pos) {
				if (min(uint64(e.perMini), left)*w+7)/8 > uint64(len(e.b)-e.pos) {
					return 0, errShort
				}
				size = uint64(len(e.b) - e.pos)
			}
			e.pos += int(size)
			left -= min(left, uint64(e.perMini))
		}
	}
	return e.pos, nil
}

// maxValueBytes bounds one byte-array value (a symbol has at most 64
// bytes, a decimal a few dozen): a longer one is refused rather than
// copied, so a piece of values holds at most pieceValues times that.
const maxValueBytes = 1 << 10

var errLongValue = errors.New("a string value over " + strconv.Itoa(maxValueBytes) + " bytes")

// plainDecoder reads PLAIN values of a physical type.
type plainDecoder struct {
	b    []byte
	pos  int
	phys pqType
	size int // FIXED_LEN_BYTE_ARRAY's width
}

func (p *plainDecoder) init(b []byte, phys pqType, size int) {
	*p = plainDecoder{b: b, phys: phys, size: size}
}

// width is the bytes of a value, 0 for BYTE_ARRAY (4 at least).
func (p *plainDecoder) width() int {
	switch p.phys {
	case pqInt32, pqFloat:
		return 4
	case pqInt64, pqDouble:
		return 8
	case pqInt96:
		return 12
	case pqFixedLenByteArray:
		return p.size
	}
	return 0
}

// take returns the next n values' bytes, of w bytes each.
func (p *plainDecoder) take(n, w int) ([]byte, error) {
	if n > (len(p.b)-p.pos)/max(w, 1) {
		return nil, errShort
	}
	b := p.b[p.pos : p.pos+n*w]
	p.pos += n * w
	return b, nil
}

func (p *plainDecoder) int32s(dst []int32) error {
	b, err := p.take(len(dst), 4)
	if err != nil {
		return err
	}
	for i := range dst {
		dst[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return nil
}

func (p *plainDecoder) int64s(dst []int64) error {
	b, err := p.take(len(dst), 8)
	if err != nil {
		return err
	}
	for i := range dst {
		dst[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return err
}

func (p *plainDecoder) float32s(dst []float32) error {
	b, err := p.take(len(dst), 4)
	if err != nil {
		return err
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return err
}

func (p *plainDecoder) float64s(dst []float64) error {
	b, err := p.take(len(dst), 8)
	if err != nil {
		return err
	}
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return err
}

func (p *plainDecoder) int96s(dst []int96) error {
	b, err := p.take(len(dst), 12)
	if err != nil {
		return err
	}
	for i := range dst {
		v := b[12*i:]
		dst[i] = int96{binary.LittleEndian.Uint32(v), binary.LittleEndian.Uint32(v[4:]), binary.LittleEndian.Uint32(v[8:])}
	}
	return err
}

// byteArrays appends the next len(offs)-1 values to out, setting offs.
func (p *plainDecoder) byteArrays(out []byte, offs []uint32) ([]byte, error) {
	offs[0] = uint32(len(out))
	for i := 1; i < len(offs); i++ {
		if len(p.b)-p.pos < 4 {
			return out, errShort
		}
		n := binary.LittleEndian.Uint32(p.b[p.pos:])
		p.pos += 4
		if uint64(n) > uint64(len(p.b)-p.pos) {
			return out, errShort
		}
		if n > maxValueBytes {
			return out, errLongValue
		}
		out = append(out, p.b[p.pos:p.pos+int(n)]...)
		p.pos += int(n)
		offs[i] = uint32(len(out))
	}
	return out, nil
}

// pageDecoder decodes a data page's values a piece at a time, in the
// page's encoding.
type pageDecoder struct {
	enc    int32
	phys   pqType
	size   int // FIXED_LEN_BYTE_ARRAY's width
	plain  plainDecoder
	hybrid hybridDecoder // dictionary indexes
	delta  deltaDecoder  // values, lengths, or DELTA_BYTE_ARRAY's prefix lengths
	delta2 deltaDecoder  // DELTA_BYTE_ARRAY's suffix lengths
	data   []byte        // byte arrays' bytes (the delta encodings), or BYTE_STREAM_SPLIT's streams
	pos    int           // the next value's bytes in data, or BYTE_STREAM_SPLIT's next value
	n      int           // BYTE_STREAM_SPLIT: the page's values
	prev   []byte        // DELTA_BYTE_ARRAY: the previous value
}

// init starts decoding values, the encoded values of a page of n values
// of column spec; it returns what is wrong, or "".
func (d *pageDecoder) init(enc int32, values []byte, n int, spec *pqColumn, hasDict bool) string {
	d.enc, d.phys, d.size = enc, spec.phys, spec.size
	d.data, d.pos, d.n, d.prev = nil, 0, 0, d.prev[:0]
	phys := spec.phys
	unsupported := func() string {
		return encodingName(enc) + " encoding of " + phys.String() + " values"
	}
	switch enc {
	case encPlainDict, encRLEDict:
		if !hasDict {
			return "a dictionary-encoded page in a column chunk without a dictionary"
		}
		if n == 0 {
			return ""
		}
		if len(values) == 0 {
			return errShort.Error()
		}
		if err := d.hybrid.init(values[1:], uint(values[0])); err != nil {
			return "dictionary indexes: " + err.Error()
		}
	case encPlain:
		d.plain.init(values, phys, spec.size)
		if w := d.plain.width(); w > 0 && n > len(values)/w || w == 0 && n > len(values)/4 {
			return strconv.Itoa(n) + " values in " + strconv.Itoa(len(values)) + " bytes"
		}
	case encDeltaBinary:
		if phys != pqInt32 && phys != pqInt64 {
			return unsupported()
		}
		if err := d.delta.init(values); err != nil {
			return err.Error()
		}
		if d.delta.total < uint64(n) {
			return "DELTA_BINARY_PACKED: " + strconv.FormatUint(d.delta.total, 10) + " values for " + strconv.Itoa(n)
		}
	case encDeltaLength:
		if phys != pqByteArray {
			return unsupported()
		}
		if err := d.delta.init(values); err != nil {
			return err.Error()
		}
		end, err := d.delta.end()
		if err != nil {
			return "DELTA_LENGTH_BYTE_ARRAY lengths: " + err.Error()
		}
		d.data = values[end:]
	case encDeltaByteArray:
		if phys != pqByteArray && phys != pqFixedLenByteArray {
			return unsupported()
		}
		if err := d.delta.init(values); err != nil {
			return err.Error()
		}
		e1, err := d.delta.end()
		if err != nil {
			return "DELTA_BYTE_ARRAY prefix lengths: " + err.Error()
		}
		if err := d.delta2.init(values[e1:]); err != nil {
			return err.Error()
		}
		e2, err := d.delta2.end()
		if err != nil {
			return "DELTA_BYTE_ARRAY suffix lengths: " + err.Error()
		}
		d.data = values[e1+e2:]
	case encByteStreamSp:
		d.plain.init(nil, phys, spec.size)
		w := d.plain.width()
		if w == 0 || phys == pqInt96 {
			return unsupported()
		}
		if n != len(values)/w || len(values)%w != 0 {
			return "BYTE_STREAM_SPLIT: " + strconv.Itoa(len(values)) + " bytes for " + strconv.Itoa(n) + " values of " + strconv.Itoa(w)
		}
		d.data, d.n = values, n
	default:
		return unsupported()
	}
	return ""
}

// next decodes the next k values into v, using sc's room; dict is the
// chunk's dictionary. It returns what is wrong, or "".
func (d *pageDecoder) next(k int, sc *scratch, v *pageValues, dict *pageValues) string {
	var err error
	v.count = k
	switch d.enc {
	case encPlainDict, encRLEDict:
		sc.idx = grow(sc.idx, k)
		if err = d.hybrid.next(sc.idx); err != nil {
			return "dictionary indexes: " + err.Error()
		}
		for _, j := range sc.idx {
			if uint32(j) >= uint32(dict.count) {
				return "dictionary index " + strconv.Itoa(int(j)) + " out of range (" + strconv.Itoa(dict.count) + " entries)"
			}
		}
		*v = *dict
		v.idx = sc.idx
		return ""
	case encPlain:
		switch d.phys {
		case pqInt32:
			sc.i32 = grow(sc.i32, k)
			err, v.i32 = d.plain.int32s(sc.i32), sc.i32
		case pqInt64:
			sc.i64 = grow(sc.i64, k)
			err, v.i64 = d.plain.int64s(sc.i64), sc.i64
		case pqInt96:
			sc.i96 = grow(sc.i96, k)
			err, v.i96 = d.plain.int96s(sc.i96), sc.i96
		case pqFloat:
			sc.f32 = grow(sc.f32, k)
			err, v.f32 = d.plain.float32s(sc.f32), sc.f32
		case pqDouble:
			sc.f64 = grow(sc.f64, k)
			err, v.f64 = d.plain.float64s(sc.f64), sc.f64
		case pqByteArray:
			sc.offs = grow(sc.offs, k+1)
			sc.bytes, err = d.plain.byteArrays(sc.bytes[:0], sc.offs)
			v.bytes, v.offs = sc.bytes, sc.offs
		case pqFixedLenByteArray:
			v.bytes, err = d.plain.take(k, d.size)
			v.size = d.size
		}
	case encDeltaBinary:
		sc.i64 = grow(sc.i64, k)
		if err = d.delta.next(sc.i64); err == nil && d.phys == pqInt32 {
			sc.i32 = grow(sc.i32, k)
			for i, x := range sc.i64 {
				sc.i32[i] = int32(x)
			}
			v.i32 = sc.i32
		} else {
			v.i64 = sc.i64
		}
	case encDeltaLength:
		sc.lens = grow(sc.lens, k)
		sc.offs = grow(sc.offs, k+1)
		if err = d.delta.next(sc.lens); err != nil {
			break
		}
		out := sc.bytes[:0]
		sc.offs[0] = 0
		for i, l := range sc.lens {
			if l < 0 || l > int64(len(d.data)-d.pos) {
				return "DELTA_LENGTH_BYTE_ARRAY: " + errShort.Error()
			}
			if l > maxValueBytes {
				return errLongValue.Error()
			}
			out = append(out, d.data[d.pos:d.pos+int(l)]...)
			d.pos += int(l)
			sc.offs[i+1] = uint32(len(out))
		}
		sc.bytes, v.bytes, v.offs = out, out, sc.offs
	case encDeltaByteArray:
		sc.lens = grow(sc.lens, k)
		sc.i64 = grow(sc.i64, k)
		sc.offs = grow(sc.offs, k+1)
		if err = d.delta.next(sc.lens); err != nil {
			break
		}
		if err = d.delta2.next(sc.i64); err != nil {
			break
		}
		out := sc.bytes[:0]
		sc.offs[0] = 0
		for i := range k {
			p, s := sc.lens[i], sc.i64[i]
			if p < 0 || p > int64(len(d.prev)) || s < 0 || s > int64(len(d.data)-d.pos) {
				return "DELTA_BYTE_ARRAY: " + errShort.Error()
			}
			if p+s > maxValueBytes {
				return errLongValue.Error()
			}
			d.prev = append(d.prev[:p], d.data[d.pos:d.pos+int(s)]...)
			d.pos += int(s)
			if d.phys == pqFixedLenByteArray && len(d.prev) != d.size {
				return "DELTA_BYTE_ARRAY: a value of " + strconv.Itoa(len(d.prev)) + " bytes in a column of " + strconv.Itoa(d.size)
			}
			out = append(out, d.prev...)
			sc.offs[i+1] = uint32(len(out))
		}
		sc.bytes, v.bytes = out, out
		if d.phys == pqFixedLenByteArray {
			v.size = d.size
		} else {
			v.offs = sc.offs
		}
	case encByteStreamSp:
		w, n, b := d.plain.width(), d.n, d.data
		if k > n-d.pos {
			return errShort.Error()
		}
		switch d.phys {
		case pqInt32, pqFloat:
			sc.i32 = grow(sc.i32, k)
			for i := range k {
				j := d.pos + i
				sc.i32[i] = int32(uint32(b[j]) | uint32(b[n+j])<<8 | uint32(b[2*n+j])<<16 | uint32(b[3*n+j])<<24)
			}
			if d.phys == pqFloat {
				sc.f32 = grow(sc.f32, k)
				for i, x := range sc.i32 {
					sc.f32[i] = math.Float32frombits(uint32(x))
				}
				v.f32 = sc.f32
			} else {
				v.i32 = sc.i32
			}
		case pqInt64, pqDouble:
			sc.i64 = grow(sc.i64, k)
			for i := range k {
				j := d.pos + i
				var x uint64
				for s := range 8 {
					x |= uint64(b[s*n+j]) << (8 * s)
				}
				sc.i64[i] = int64(x)
			}
			if d.phys == pqDouble {
				sc.f64 = grow(sc.f64, k)
				for i, x := range sc.i64 {
					sc.f64[i] = math.Float64frombits(uint64(x))
				}
				v.f64 = sc.f64
			} else {
				v.i64 = sc.i64
			}
		case pqFixedLenByteArray:
			sc.bytes = grow(sc.bytes, k*w)
			for i := range k {
				for s := range w {
					sc.bytes[i*w+s] = b[s*n+d.pos+i]
				}
			}
			v.bytes, v.size = sc.bytes, w
		}
		d.pos += k
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

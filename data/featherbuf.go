package data

import (
	"encoding/binary"
	"errors"
	"io"
	"math"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// The buffers of a record batch are read as streams: a column's values
// are converted a block at a time from a 64 KiB buffer, decompressed as
// they are read (an LZ4 frame holds blocks of at most 4 MiB, and zstd is
// refused a window over 8 MiB), so that a stream's memory does not depend
// on the size of the batch, whatever its header claims.

const (
	arrowReadBuf    = 64 << 10
	maxZstdWindow   = 8 << 20
	maxStringOffset = math.MaxInt64 / 2
)

// bufStream is the bytes of one buffer of a record batch.
type bufStream struct {
	r    io.Reader
	buf  []byte
	i, n int   // buf[i:n] is read and not taken
	left int64 // bytes of the buffer not yet in buf
	lz4  *lz4.Reader
	zstd *zstd.Decoder
}

var errShortBuffer = errors.New("a buffer holds fewer bytes than its column needs")

// open starts reading the buffer ab of a batch's body; need is the number
// of bytes the column needs of it (what it holds is checked against that,
// never taken to size anything).
func (s *bufStream) open(ff *featherFile, bt *arrowBatch, ab arrowBuf, need int64) error {
	// A buffer of the size needed, from 4 KiB (a small batch) to 64 KiB.
	if size := int(min(max(need, 4<<10), arrowReadBuf)); len(s.buf) < size {
		s.buf = make([]byte, size)
	}
	s.i, s.n = 0, 0
	off, length := bt.body+ab.off, ab.len
	if bt.codec == arrowCodecNone || length == 0 {
		s.r, s.left = io.NewSectionReader(ff.src.fh, off, length), length
	} else {
		// A compressed buffer: its uncompressed length, then its bytes
		// (or, with a length of -1, its bytes uncompressed).
		if length < 8 {
			return errShortBuffer
		}
		var pre [8]byte
		if _, err := ff.src.fh.ReadAt(pre[:], off); err != nil {
			return err
		}
		plain := int64(binary.LittleEndian.Uint64(pre[:]))
		body := io.NewSectionReader(ff.src.fh, off+8, length-8)
		switch {
		case plain == -1:
			s.r, s.left = body, length-8
		case plain < 0:
			return errors.New("a buffer claims " + itoa64(plain) + " bytes")
		case bt.codec == arrowCodecLZ4:
			if s.lz4 == nil {
				s.lz4 = lz4.NewReader(body)
			} else {
				s.lz4.Reset(body)
			}
			s.r, s.left = s.lz4, plain
		default:
			if s.zstd == nil {
				d, err := zstd.NewReader(body, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
					zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderMaxMemory(maxZstdWindow))
				if err != nil {
					return err
				}
				s.zstd = d
			} else if err := s.zstd.Reset(body); err != nil {
				return err
			}
			s.r, s.left = s.zstd, plain
		}
	}
	if s.left < need {
		return errShortBuffer
	}
	return nil
}

// take returns the next n bytes (n at most 4 KiB, or the size of the
// buffer), valid until the next call.
func (s *bufStream) take(n int) ([]byte, error) {
	if s.n-s.i < n {
		copy(s.buf, s.buf[s.i:s.n])
		s.n -= s.i
		s.i = 0
		for s.n < n {
			want := int(min(int64(len(s.buf)-s.n), s.left))
			if want <= 0 {
				return nil, errShortBuffer
			}
			k, err := s.r.Read(s.buf[s.n : s.n+want])
			s.n += k
			s.left -= int64(k)
			if err == io.EOF && k == 0 {
				return nil, errShortBuffer
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
		}
	}
	b := s.buf[s.i : s.i+n]
	s.i += n
	return b, nil
}

// skip drops the next n bytes.
func (s *bufStream) skip(n int64) error {
	for n > 0 {
		k := int(min(n, int64(len(s.buf))))
		if _, err := s.take(k); err != nil {
			return err
		}
		n -= int64(k)
	}
	return nil
}

func (s *bufStream) close() {
	if s.zstd != nil {
		s.zstd.Close()
		s.zstd = nil
	}
	s.lz4, s.r = nil, nil
}

// colStream reads one bar column of a record batch.
type colStream struct {
	ff      *featherFile
	col     int
	f       *arrowField
	row     int64 // the file's row of the next value (0-based)
	vals    bufStream
	data    bufStream // a string's bytes
	nextOff int64     // a string column: where the next value starts in data
	dataAt  int64     // how far data has been read
	str1    []byte    // the string returned last
}

func (cs *colStream) fail(row int64, msg string) error {
	return cs.ff.src.errorAt(row+1, cs.ff.src.columnName(cs.col), msg)
}

// corrupt is the error of a column whose buffers cannot be read.
func (cs *colStream) corrupt(err error) error {
	return cs.fail(cs.row, "corrupt: "+err.Error())
}

// open starts reading column c of batch bt at its row skip.
func (cs *colStream) open(ff *featherFile, bt *arrowBatch, c int, skip int64) error {
	cs.ff, cs.col, cs.f, cs.row = ff, c, ff.cols[c], bt.start
	if bt.nodes[c].nulls > 0 {
		return cs.firstNull(bt)
	}
	w := int64(cs.f.width)
	rows := bt.rows
	if cs.f.isString {
		if err := cs.vals.open(ff, bt, bt.bufs[c][1], (rows+1)*w); err != nil {
			return cs.corrupt(err)
		}
		if err := cs.data.open(ff, bt, bt.bufs[c][2], 0); err != nil {
			return cs.corrupt(err)
		}
		cs.dataAt = 0
		first, err := cs.offset()
		if err != nil {
			return err
		}
		cs.nextOff = first
		for range skip {
			if _, err := cs.str(); err != nil {
				return err
			}
		}
		return nil
	}
	if err := cs.vals.open(ff, bt, bt.bufs[c][1], rows*w); err != nil {
		return cs.corrupt(err)
	}
	if err := cs.vals.skip(skip * w); err != nil {
		return cs.corrupt(err)
	}
	cs.row += skip
	return nil
}

// firstNull fails at the batch's first null value.
func (cs *colStream) firstNull(bt *arrowBatch) error {
	var v bufStream
	defer v.close()
	if err := v.open(cs.ff, bt, bt.bufs[cs.col][0], (bt.rows+7)/8); err != nil {
		return cs.corrupt(err)
	}
	for i := int64(0); i < bt.rows; i += 8 {
		b, err := v.take(1)
		if err != nil {
			return cs.corrupt(err)
		}
		for k := int64(0); k < 8 && i+k < bt.rows; k++ {
			if b[0]&(1<<k) == 0 {
				return cs.fail(bt.start+i+k, "null")
			}
		}
	}
	return cs.fail(bt.start, "corrupt: the column claims nulls and has none")
}

func (cs *colStream) close() {
	cs.vals.close()
	cs.data.close()
}

// offset reads a string column's next offset.
func (cs *colStream) offset() (int64, error) {
	b, err := cs.vals.take(cs.f.width)
	if err != nil {
		return 0, cs.corrupt(err)
	}
	if cs.f.width == 4 {
		return int64(int32(binary.LittleEndian.Uint32(b))), nil
	}
	return int64(binary.LittleEndian.Uint64(b)), nil
}

// str returns the next string, valid until the next call: at most
// maxSymbolLen+1 bytes of it (a longer one is no symbol).
func (cs *colStream) str() ([]byte, error) {
	end, err := cs.offset()
	if err != nil {
		return nil, err
	}
	start := cs.nextOff
	if end < start || end > maxStringOffset || start < cs.dataAt {
		return nil, cs.fail(cs.row, "corrupt: bad string offsets")
	}
	if err := cs.data.skip(start - cs.dataAt); err != nil {
		return nil, cs.corrupt(err)
	}
	n := min(end-start, maxSymbolLen+1)
	b, err := cs.data.take(int(n))
	if err != nil {
		return nil, cs.corrupt(err)
	}
	cs.str1 = append(cs.str1[:0], b...)
	cs.dataAt = start + n
	cs.nextOff = end
	cs.row++
	return cs.str1, nil
}

// ints reads len(dst) integers of width bytes.
func (cs *colStream) ints(dst []int64, width int, signed bool) error {
	per := len(cs.vals.buf) / width
	for len(dst) > 0 {
		k := min(len(dst), per)
		b, err := cs.vals.take(k * width)
		if err != nil {
			return cs.corrupt(err)
		}
		switch {
		case width == 8:
			for i := range k {
				dst[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
			}
		case signed:
			for i := range k {
				dst[i] = int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
			}
		default:
			for i := range k {
				dst[i] = int64(binary.LittleEndian.Uint32(b[4*i:]))
			}
		}
		dst = dst[k:]
		cs.row += int64(k)
	}
	return nil
}

// numbers reads len(dst) prices or volumes.
func (cs *colStream) numbers(dst []float64, f *arrowField) error {
	width := f.width
	per := len(cs.vals.buf) / width
	for len(dst) > 0 {
		k := min(len(dst), per)
		b, err := cs.vals.take(k * width)
		if err != nil {
			return cs.corrupt(err)
		}
		switch {
		case f.float && width == 8:
			for i := range k {
				dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
			}
		case f.float:
			for i := range k {
				dst[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
			}
		case width == 8 && f.signed:
			for i := range k {
				dst[i] = float64(int64(binary.LittleEndian.Uint64(b[8*i:])))
			}
		case width == 8:
			for i := range k {
				dst[i] = float64(binary.LittleEndian.Uint64(b[8*i:]))
			}
		case f.signed:
			for i := range k {
				dst[i] = float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
			}
		default:
			for i := range k {
				dst[i] = float64(binary.LittleEndian.Uint32(b[4*i:]))
			}
		}
		dst = dst[k:]
		cs.row += int64(k)
	}
	return nil
}

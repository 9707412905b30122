package data

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Parquet compression codecs.
const (
	codecNone   = 0
	codecSnappy = 1
	codecGzip   = 2
	codecLZO    = 3
	codecBrotli = 4
	codecLZ4    = 5 // deprecated: Hadoop's framing of LZ4 blocks, or a bare block
	codecZstd   = 6
	codecLZ4Raw = 7
)

var codecNames = [...]string{"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"}

func codecName(c int32) string {
	if c >= 0 && int(c) < len(codecNames) {
		return codecNames[c]
	}
	return "codec " + itoa64(int64(c))
}

// codecSupported says why a codec cannot be read, or "".
func codecSupported(c int32) string {
	switch c {
	case codecNone, codecSnappy, codecGzip, codecBrotli, codecLZ4, codecZstd, codecLZ4Raw:
		return ""
	case codecLZO:
		return "LZO compression is not supported (write the file with zstd, snappy or lz4)"
	}
	return "unknown compression codec " + itoa64(int64(c))
}

// codecScratch is the memory a codec's decoder holds besides the page it
// writes into: a window or state of its own, counted in a stream's memory.
func codecScratch(c int32) int64 {
	switch c {
	case codecGzip:
		return 64 << 10
	case codecBrotli:
		return 16<<20 + 64<<10 // its window, up to 16 MiB
	case codecZstd:
		return 1 << 20
	}
	return 0
}

// decompressor decompresses pages, each into a buffer of exactly the size
// its header says: a page whose data does not decompress to exactly that
// many bytes is corrupt. Nothing it allocates depends on what the page
// says beyond that size, which the caller has bounded. The decoders are
// made when first needed and reused.
type decompressor struct {
	zstd *zstd.Decoder
	gzip *gzip.Reader
	br   *brotli.Reader
	src  bytes.Reader
}

var errSize = errors.New("the page does not decompress to the size its header says")

// decode decompresses src, compressed with codec, into dst, which has the
// page's uncompressed size.
func (d *decompressor) decode(codec int32, dst, src []byte) error {
	switch codec {
	case codecNone:
		if len(src) != len(dst) {
			return errSize
		}
		copy(dst, src)
		return nil
	case codecSnappy:
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return err
		}
		if n != len(dst) {
			return errSize
		}
		_, err = snappy.Decode(dst, src)
		return err
	case codecLZ4Raw:
		return lz4Block(dst, src)
	case codecLZ4:
		if hadoopLZ4(dst, src) == nil {
			return nil
		}
		return lz4Block(dst, src)
	case codecZstd:
		if d.zstd == nil {
			z, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
				zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderMaxMemory(maxPageBytes), zstd.WithDecoderMaxWindow(maxPageBytes))
			if err != nil {
				return err
			}
			d.zstd = z
		}
		out, err := d.zstd.DecodeAll(src, dst[:0])
		if err != nil {
			return err
		}
		if len(out) != len(dst) || len(out) > 0 && &out[0] != &dst[0] {
			return errSize
		}
		return nil
	case codecGzip:
		d.src.Reset(src)
		if d.gzip == nil {
			z, err := gzip.NewReader(&d.src)
			if err != nil {
				return err
			}
			d.gzip = z
		} else if err := d.gzip.Reset(&d.src); err != nil {
			return err
		}
		return readExactly(d.gzip, dst)
	case codecBrotli:
		d.src.Reset(src)
		if d.br == nil {
			d.br = brotli.NewReader(&d.src)
		} else if err := d.br.Reset(&d.src); err != nil {
			return err
		}
		return readExactly(d.br, dst)
	}
	return errors.New(codecSupported(codec))
}

// close releases the decoders' resources.
func (d *decompressor) close() {
	if d.zstd != nil {
		d.zstd.Close()
		d.zstd = nil
	}
}

// readExactly fills dst from r, which must end there.
func readExactly(r io.Reader, dst []byte) error {
	if _, err := io.ReadFull(r, dst); err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return errSize
		}
		return err
	}
	var one [1]byte
	n, err := r.Read(one[:])
	for n == 0 && err == nil {
		n, err = r.Read(one[:])
	}
	if n > 0 {
		return errSize
	}
	if err != io.EOF {
		return err
	}
	return nil
}

// lz4Block decompresses one LZ4 block into exactly dst.
func lz4Block(dst, src []byte) error {
	n, err := lz4.UncompressBlock(src, dst)
	if err != nil {
		return err
	}
	if n != len(dst) {
		return errSize
	}
	return nil
}

// hadoopLZ4 decompresses Hadoop's framing of LZ4: blocks, each prefixed
// with its decompressed and compressed sizes (big-endian 32-bit).
func hadoopLZ4(dst, src []byte) error {
	out := 0
	for len(src) > 0 {
		if len(src) < 8 {
			return errSize
		}
		raw := binary.BigEndian.Uint32(src)
		comp := binary.BigEndian.Uint32(src[4:])
		src = src[8:]
		if uint64(comp) > uint64(len(src)) || uint64(raw) > uint64(len(dst)-out) {
			return errSize
		}
		if err := lz4Block(dst[out:out+int(raw)], src[:comp]); err != nil {
			return err
		}
		out += int(raw)
		src = src[comp:]
	}
	if out != len(dst) {
		return errSize
	}
	return nil
}

package data

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"stratbench/internal/pqcraft"
)

// page is a compressible payload of n bytes: runs and noise.
func page(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := 0; i < n; {
		k := min(n-i, 1+rng.IntN(64))
		if rng.IntN(2) == 0 {
			for j := range k {
				b[i+j] = byte(rng.Uint32())
			}
		} else {
			c := byte(rng.Uint32())
			for j := range k {
				b[i+j] = c
			}
		}
		i += k
	}
	return b
}

func compressWith(t *testing.T, codec int32, src []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch codec {
	case codecNone:
		return src
	case codecSnappy:
		return snappy.Encode(nil, src)
	case codecGzip:
		w := gzip.NewWriter(&buf)
		w.Write(src)
		w.Close()
	case codecBrotli:
		w := brotli.NewWriter(&buf)
		w.Write(src)
		w.Close()
	case codecZstd:
		w, _ := zstd.NewWriter(nil)
		return w.EncodeAll(src, nil)
	case codecLZ4Raw:
		dst := make([]byte, lz4.CompressBlockBound(len(src)))
		n, err := lz4.CompressBlock(src, dst, nil)
		if err != nil || n == 0 {
			t.Fatalf("lz4: %v", err)
		}
		return dst[:n]
	case codecLZ4: // Hadoop's framing, blocks of 64 KiB
		var out []byte
		for off := 0; off < len(src); off += 64 << 10 {
			blk := compressWith(t, codecLZ4Raw, src[off:min(len(src), off+64<<10)])
			out = binary.BigEndian.AppendUint32(out, uint32(min(len(src)-off, 64<<10)))
			out = binary.BigEndian.AppendUint32(out, uint32(len(blk)))
			out = append(out, blk...)
		}
		return out
	}
	return buf.Bytes()
}

// TestDecompress: every codec decodes into a buffer of exactly the page's
// size, reusing its decoders; LZ4 in Hadoop's framing or a bare block; a
// page whose header says another size, and garbage, are errors.
func TestDecompress(t *testing.T) {
	var d decompressor
	defer d.close()
	for _, size := range []int{0, 1, 199, 200, 3000, 100_000, 300_000} {
		src := page(size, uint64(size))
		for _, codec := range []int32{codecNone, codecSnappy, codecGzip, codecBrotli, codecZstd, codecLZ4Raw, codecLZ4} {
			if size == 0 && (codec == codecLZ4Raw || codec == codecLZ4) {
				continue
			}
			comp := compressWith(t, codec, src)
			out := make([]byte, size)
			if err := d.decode(codec, out, comp); err != nil || !bytes.Equal(out, src) {
				t.Errorf("%s, %d bytes: %v", codecName(codec), size, err)
			}
			if codec == codecLZ4 {
				// An old writer's bare block under the LZ4 codec.
				if err := d.decode(codec, out, compressWith(t, codecLZ4Raw, src)); err != nil || !bytes.Equal(out, src) {
					t.Errorf("LZ4 as a bare block, %d bytes: %v", size, err)
				}
			}
			if size == 0 {
				continue
			}
			for _, wrong := range []int{size - 1, size + 1} {
				if err := d.decode(codec, make([]byte, wrong), comp); err == nil {
					t.Errorf("%s: %d bytes decoded into %d without an error", codecName(codec), size, wrong)
				}
			}
			junk := page(len(comp), 99)
			d.decode(codec, out, junk) // an error or not: no panic, no loop
		}
	}
	if err := d.decode(codecLZO, make([]byte, 4), []byte{1, 2, 3}); err == nil {
		t.Error("LZO decoded")
	}
}

// TestDecoders: the hybrid and delta decoders against their encodings, in
// pieces of every size.
func TestDecoders(t *testing.T) {
	// 10 bit-packed values of width 3, then a run of 5 sevens.
	vals := []int32{1, 2, 3, 4, 5, 6, 7, 0, 1, 2}
	var bits uint64
	packed := []byte{byte(2<<1 | 1)} // two groups of 8
	for i, v := range append(vals, 0, 0, 0, 0, 0, 0) {
		bits |= uint64(v) << (3 * (i % 8))
		if i%8 == 7 {
			packed = append(packed, byte(bits), byte(bits>>8), byte(bits>>16))
			bits = 0
		}
	}
	enc := append(packed[:1:1], packed[1:]...)
	enc = append(enc, pqcraft.RLERun(3, 5, 7)...)
	for piece := 1; piece <= 15; piece++ {
		var d hybridDecoder
		d.init(enc, 3)
		var got []int32
		for len(got) < 21 {
			dst := make([]int32, min(piece, 21-len(got)))
			if err := d.next(dst); err != nil {
				t.Fatalf("piece %d: %v", piece, err)
			}
			got = append(got, dst...)
		}
		want := append(append(append([]int32{}, vals...), 0, 0, 0, 0, 0, 0), 7, 7, 7, 7, 7)
		if len(got) != len(want) {
			t.Fatalf("piece %d: %v", piece, got)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("piece %d: %v, want %v", piece, got, want)
			}
		}
	}
	// Delta: 1000 values stepping by 3 from -7, then the bytes after them.
	b := append(pqcraft.DeltaRange(-7, 3, 1000, 128), 0xAB)
	var d deltaDecoder
	if err := d.init(b); err != nil {
		t.Fatal(err)
	}
	end, err := d.end()
	if err != nil || end != len(b)-1 {
		t.Fatalf("end %d %v, want %d", end, err, len(b)-1)
	}
	out := make([]int64, 1000)
	for i := 0; i < 1000; i += 7 {
		if err := d.next(out[i:min(1000, i+7)]); err != nil {
			t.Fatal(err)
		}
	}
	for i, v := range out {
		if v != -7+3*int64(i) {
			t.Fatalf("value %d: %d", i, v)
		}
	}
	if err := d.next(out[:1]); err == nil {
		t.Error("a value past the end")
	}
}

// FuzzPageHeader: any bytes parse as a page header or fail, in time and
// memory bounded by their length.
func FuzzPageHeader(f *testing.F) {
	f.Add(pqcraft.DataPage(3, pqcraft.Plain, nil, pqcraft.PlainDouble(1, 2, 3)))
	f.Add(pqcraft.DictPage(1, pqcraft.PlainStrings("X")))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parsePageHeader(b)
		if err == nil && (h.size > len(b) || h.compressed < 0 || h.uncompressed < 0) {
			t.Fatalf("header %+v of %d bytes", h, len(b))
		}
	})
}

// FuzzFooter: any bytes parse as a footer or fail; the row groups are
// charged before they are kept.
func FuzzFooter(f *testing.F) {
	for _, file := range [][]byte{pqcraft.HugePage(100, false), pqcraft.ManyGroups(3)} {
		n := binary.LittleEndian.Uint32(file[len(file)-8:])
		f.Add(file[len(file)-8-int(n) : len(file)-8])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var groups int64
		ft, err := parseFooter(b, func(name string) bool { return name == "timestamp" || name == "close" },
			func(key string) bool { return key == "bar_type" }, func(n int64) error { groups += n; return nil })
		if err == nil && int64(len(ft.groupRows)) != groups {
			t.Fatalf("%d row groups kept, %d charged", len(ft.groupRows), groups)
		}
		if err == nil && len(ft.chunks) != len(ft.groupRows)*len(ft.wanted) {
			t.Fatalf("%d chunks for %d groups of %d columns", len(ft.chunks), len(ft.groupRows), len(ft.wanted))
		}
	})
}

// FuzzPageValues: any bytes decode as a page's values of any encoding and
// type, a piece at a time, or fail; nothing it holds grows beyond a piece
// of values (or the page's bytes) whatever count the page claims.
func FuzzPageValues(f *testing.F) {
	f.Add(int32(encPlain), uint8(pqDouble), uint16(3), pqcraft.PlainDouble(1, 2, 3))
	f.Add(int32(encRLEDict), uint8(pqInt64), uint16(500), pqcraft.DictIndexes(1, pqcraft.RLERun(1, 500, 0)))
	f.Add(int32(encDeltaBinary), uint8(pqInt64), uint16(300), pqcraft.DeltaRange(5, 2, 300, 128))
	f.Add(int32(encDeltaLength), uint8(pqByteArray), uint16(2), append(pqcraft.DeltaRange(1, 0, 2, 128), 'A', 'B'))
	f.Add(int32(encDeltaByteArray), uint8(pqByteArray), uint16(2), append(append(pqcraft.DeltaRange(0, 1, 2, 128), pqcraft.DeltaRange(1, 0, 2, 128)...), 'A', 'B'))
	f.Add(int32(encByteStreamSp), uint8(pqFloat), uint16(2), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(int32(encPlain), uint8(pqByteArray), uint16(2), pqcraft.PlainStrings("SPY", "QQQ"))
	f.Fuzz(func(t *testing.T, enc int32, phys uint8, n uint16, b []byte) {
		spec := &pqColumn{phys: pqType(phys % 8), size: 16}
		dict := pageValues{i64: []int64{1}, f64: []float64{1}, i32: []int32{1}, count: 1}
		var d pageDecoder
		if msg := d.init(enc, b, int(n), spec, true); msg != "" {
			return
		}
		var sc scratch
		for left := int(n); left > 0; {
			k := min(left, pieceValues)
			var v pageValues
			if msg := d.next(k, &sc, &v, &dict); msg != "" {
				return
			}
			if len(sc.bytes) > pieceValues*maxValueBytes+len(b) || cap(sc.idx) > pieceValues || cap(sc.i64) > pieceValues {
				t.Fatalf("a piece holds %d bytes, %d indexes, %d integers", len(sc.bytes), cap(sc.idx), cap(sc.i64))
			}
			left -= k
		}
	})
}

// FuzzDecompress: any bytes decompress into a page of any size up to 1
// MiB, or fail: never a panic or a loop.
func FuzzDecompress(f *testing.F) {
	f.Add(int32(codecSnappy), uint32(100), snappy.Encode(nil, page(100, 1)))
	f.Add(int32(codecLZ4Raw), uint32(3000), []byte{0xf0, 0x01, 0x02})
	f.Add(int32(codecLZ4), uint32(8), []byte{0, 0, 0, 8, 0, 0, 0, 2, 0x80, 1})
	f.Add(int32(codecZstd), uint32(10), []byte{0x28, 0xb5, 0x2f, 0xfd})
	f.Add(int32(codecGzip), uint32(10), []byte{0x1f, 0x8b, 8, 0})
	f.Add(int32(codecBrotli), uint32(10), []byte{0x0b, 0x02})
	var d decompressor
	f.Cleanup(d.close)
	f.Fuzz(func(t *testing.T, codec int32, size uint32, src []byte) {
		d.decode(codec%8, make([]byte, size%(1<<20)), src)
	})
}

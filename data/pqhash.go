package data

import (
	"context"
	"crypto/sha256"
	"hash"
	"io"
	"os"
	"sort"
	"sync"
)

// fileHashes hashes the column chunks of a Parquet file that a set uses,
// as they are read: it is the io.ReaderAt the decoder reads the file
// through. Each chunk is hashed in order, once, whichever reader reads
// it; bytes skipped ahead of a read are read for the hash on the spot.
type fileHashes struct {
	fh     *os.File
	footer [sha256.Size]byte

	mu     sync.Mutex
	chunks []*chunkHash // sorted by start, disjoint
	order  []*chunkHash // the same, in row group and column order
	sum    *[sha256.Size]byte
}

// chunkHash is the hash of bytes [start, end) of a file, done up to next.
type chunkHash struct {
	start, end, next int64
	h                hash.Hash
	sum              [sha256.Size]byte
}

// track sets the chunks to hash, in the order their digests combine.
func (fh *fileHashes) track(path string, chunks []*chunkHash) error {
	sorted := make([]*chunkHash, len(chunks))
	copy(sorted, chunks)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].start < sorted[j].start })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].start < sorted[i-1].end {
			return &Error{File: path, Msg: "corrupt footer: column chunks overlap"}
		}
	}
	fh.mu.Lock()
	defer fh.mu.Unlock()
	fh.chunks = sorted
	fh.order = chunks
	return nil
}

func (fh *fileHashes) ReadAt(p []byte, off int64) (int, error) {
	n, err := fh.fh.ReadAt(p, off)
	if n > 0 {
		fh.observe(p[:n], off)
	}
	return n, err
}

// observe hashes what of p, read at off, is next in a chunk.
func (fh *fileHashes) observe(p []byte, off int64) {
	fh.mu.Lock()
	defer fh.mu.Unlock()
	end := off + int64(len(p))
	i := sort.Search(len(fh.chunks), func(i int) bool { return fh.chunks[i].end > off })
	for ; i < len(fh.chunks) && fh.chunks[i].start < end; i++ {
		c := fh.chunks[i]
		if c.next >= c.end || c.next >= end {
			continue
		}
		if c.next < off && fh.fill(c, off) != nil {
			continue // hashed later, by digest
		}
		hi := min(c.end, end)
		c.h.Write(p[c.next-off : hi-off])
		c.next = hi
		if c.next == c.end {
			c.h.Sum(c.sum[:0])
		}
	}
}

// fill hashes c's bytes up to off, reading them.
func (fh *fileHashes) fill(c *chunkHash, off int64) error {
	buf := make([]byte, min(off-c.next, 1<<20))
	for c.next < off {
		m := int(min(off-c.next, int64(len(buf))))
		if _, err := fh.fh.ReadAt(buf[:m], c.next); err != nil {
			return err
		}
		c.h.Write(buf[:m])
		c.next += int64(m)
	}
	if c.next == c.end {
		c.h.Sum(c.sum[:0])
	}
	return nil
}

// digest finishes the hashes and combines them with the footer's.
func (fh *fileHashes) digest(ctx context.Context, path string) ([sha256.Size]byte, error) {
	fh.mu.Lock()
	defer fh.mu.Unlock()
	if fh.sum != nil {
		return *fh.sum, nil
	}
	for _, c := range fh.chunks {
		if err := ctx.Err(); err != nil {
			return [sha256.Size]byte{}, err
		}
		if c.next < c.end {
			if err := fh.fill(c, c.end); err != nil {
				return [sha256.Size]byte{}, pathError(path, err)
			}
		}
	}
	h := sha256.New()
	h.Write(fh.footer[:])
	for _, c := range fh.order {
		h.Write(c.sum[:])
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	fh.sum = &sum
	return sum, nil
}

var _ io.ReaderAt = (*fileHashes)(nil)

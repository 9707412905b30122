package backtest

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// chunkWriter keeps what it is given, and checks the contract's promise to
// the engine: every write ends at the end of a line.
type chunkWriter struct {
	t      *testing.T
	got    bytes.Buffer
	writes int
}

func (w *chunkWriter) Write(b []byte) (int, error) {
	if len(b) == 0 || b[len(b)-1] != '\n' {
		w.t.Fatalf("write %d does not end a line: %.40q…", w.writes+1, b)
	}
	w.writes++
	return w.got.Write(b)
}

type oneFile struct{ w io.Writer }

func (o oneFile) Create(string) io.Writer { return o.w }

// TestRecordFileGrowsAndChunks formats lines of every length into a record
// file whose buffer starts at the size expected (small for a file of few
// lines), far past a chunk: what reaches the writer is every line in
// order, in writes of whole lines, and the buffer never grows past a chunk
// and its slack but for a line longer than the slack.
func TestRecordFileGrowsAndChunks(t *testing.T) {
	for _, expect := range []int{0, 1 << 10, 1 << 30} {
		t.Run(fmt.Sprint(expect), func(t *testing.T) {
			w := &chunkWriter{t: t}
			var f recordFile
			f.open(oneFile{w}, "x.csv", "a,b\n", expect)
			// A buffer for what the run expects, not a chunk whatever it is.
			if want := min(expect, recordChunk) + recordSlack; cap(f.buf) != want {
				t.Fatalf("a buffer of %d bytes for %d expected, want %d", cap(f.buf), expect, want)
			}
			var want strings.Builder
			want.WriteString("a,b\n")
			for i := 0; want.Len() < 5*recordChunk; i++ {
				// Mostly short lines, now and then one longer than the slack.
				line := fmt.Sprintf("%d,%s", i, strings.Repeat("x", (i*37)%200+map[bool]int{true: 2 * recordSlack}[i%500 == 499]))
				f.buf = append(f.buf, line...)
				f.endLine()
				want.WriteString(line + "\n")
				if cap(f.buf) > recordChunk+recordSlack && len(line) < recordSlack {
					t.Fatalf("line %d: a buffer of %d bytes, over %d", i, cap(f.buf), recordChunk+recordSlack)
				}
			}
			f.flush()
			if w.got.String() != want.String() {
				t.Fatalf("the file differs from the lines formatted (%d bytes against %d)", w.got.Len(), want.Len())
			}
			if w.writes < 5 {
				t.Fatalf("%d writes for %d bytes: the file was not handed on in chunks", w.writes, want.Len())
			}
		})
	}
}

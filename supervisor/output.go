package supervisor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"stratbench/internal/units"
)

// capture turns the root's stdout and stderr into lines. Both streams share
// one byte budget; lines are delivered one call at a time, so that nothing
// follows the truncation notice.
type capture struct {
	out       func(Line)
	limit     int64 // 0: unlimited
	lineBytes int

	mu        sync.Mutex
	kept      int64
	truncated atomic.Bool // read without mu to skip parsing discarded output

	files   []*os.File
	readers sync.WaitGroup
}

func newCapture(out func(Line), limit int64, lineBytes int) *capture {
	if out == nil {
		out = func(Line) {}
	}
	return &capture{out: out, limit: limit, lineBytes: lineBytes}
}

// start reads stdout and stderr until EOF or until drain's deadline.
func (c *capture) start(stdout, stderr *os.File) {
	c.files = []*os.File{stdout, stderr}
	c.readers.Add(2)
	go c.read(stdout, Stdout)
	go c.read(stderr, Stderr)
}

// drain waits for both streams to end, at most timeout (a process outside
// the tree may hold a pipe open), and closes them.
func (c *capture) drain(timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for _, f := range c.files {
		f.SetReadDeadline(deadline)
	}
	c.readers.Wait()
	for _, f := range c.files {
		f.Close()
	}
}

// readChunk is how much one read takes from a pipe.
const readChunk = 32 << 10

// read splits one stream into lines. A line is collected up to lineBytes;
// past that it is delivered cut and the rest of it is dropped. Memory stays
// at readChunk plus lineBytes (and a few bytes) whatever the child writes.
func (c *capture) read(f io.Reader, stream Stream) {
	defer c.readers.Done()
	buf := make([]byte, readChunk)
	var line []byte
	dropping := false // the current line was cut: drop up to its newline
	for {
		n, err := f.Read(buf)
		data := buf[:n]
		if c.truncated.Load() {
			data = nil // drained and discarded
		}
		for len(data) > 0 {
			chunk, rest, newline := bytes.Cut(data, []byte{'\n'})
			data = rest
			if !dropping {
				if room := c.lineBytes - len(line); len(chunk) > room {
					// Take the bytes past the cut that may finish a rune, so
					// that the cut can move back to the rune's start.
					line = append(line, chunk[:min(len(chunk), room+utf8.UTFMax)]...)
					c.deliver(stream, cutAt(line, c.lineBytes), true, false)
					line, dropping = line[:0], true
				} else {
					line = append(line, chunk...)
				}
			}
			if newline {
				if !dropping {
					c.deliver(stream, line, false, true)
				}
				line, dropping = line[:0], false
			}
		}
		if err != nil {
			if len(line) > 0 && !dropping && !c.truncated.Load() {
				c.deliver(stream, line, false, false)
			}
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrDeadlineExceeded) {
				c.notice(fmt.Sprintf("supervisor: reading %s: %v", stream, err))
			}
			return
		}
	}
}

// deliver hands one line to the output, within the byte budget. cut says the
// line was cut at lineBytes; newline that it ended with one (which counts
// against the budget).
func (c *capture) deliver(stream Stream, text []byte, cut, newline bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.truncated.Load() {
		return
	}
	need := int64(len(text))
	if newline {
		need++
	}
	if c.limit > 0 && c.kept+need > c.limit {
		room := c.limit - c.kept
		if room < int64(len(text)) {
			text, cut = cutAt(text, int(room)), true
		}
		c.kept += int64(len(text))
		if len(text) > 0 {
			c.out(Line{Time: time.Now(), Stream: stream, Text: lineText(text, cut)})
		}
		c.truncated.Store(true)
		c.out(Line{Time: time.Now(), Stream: System, Text: fmt.Sprintf(
			"output truncated: the first %s (%d bytes) of stdout and stderr were kept, the rest is discarded",
			units.Bytes(c.limit), c.kept)})
		return
	}
	c.kept += need
	c.out(Line{Time: time.Now(), Stream: stream, Text: lineText(text, cut)})
}

// notice delivers a System line of the supervisor's own.
func (c *capture) notice(text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out(Line{Time: time.Now(), Stream: System, Text: text})
}

func (c *capture) totals() (kept int64, truncated bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kept, c.truncated.Load()
}

// cutAt returns text[:n], moved back to the start of a UTF-8 sequence that
// the cut would split: a whole rune across n, or the start of one whose
// last bytes text does not hold (they had not been read when the line
// reached its cap: utf8.FullRune is false only for such a beginning).
func cutAt(text []byte, n int) []byte {
	if n >= len(text) {
		return text
	}
	for s := n; s >= 0 && n-s < utf8.UTFMax; s-- {
		if utf8.RuneStart(text[s]) {
			if r, size := utf8.DecodeRune(text[s:]); r != utf8.RuneError && s+size > n || !utf8.FullRune(text[s:]) {
				return text[:s]
			}
			break
		}
	}
	return text[:n]
}

// lineText makes a line's text: valid UTF-8, no CR of a CRLF ending, and
// the cut marker when the line was cut.
func lineText(text []byte, cut bool) string {
	if !cut {
		text = bytes.TrimSuffix(text, []byte{'\r'})
	}
	s := strings.ToValidUTF8(string(text), "\uFFFD")
	if cut {
		s += CutMarker
	}
	return s
}

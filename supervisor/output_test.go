package supervisor

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// chunkReader returns at most n bytes per Read, as a pipe may.
type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n, len(r.data))
	copy(p, r.data[:k])
	r.data = r.data[k:]
	return k, nil
}

// captureBytes runs one stream of input through a capture.
func captureBytes(input []byte, chunk int, limit int64, lineBytes int) ([]Line, *capture) {
	var lines []Line
	c := newCapture(func(l Line) { lines = append(lines, l) }, limit, lineBytes)
	c.readers.Add(1)
	c.read(&chunkReader{input, max(chunk, 1)}, Stdout)
	return lines, c
}

func texts(lines []Line) []string {
	var out []string
	for _, l := range lines {
		prefix := ""
		if l.Stream == System {
			prefix = "SYSTEM: "
		}
		out = append(out, prefix+l.Text)
	}
	return out
}

func TestCaptureLines(t *testing.T) {
	notice := func(limit string, kept int) string {
		return "SYSTEM: output truncated: the first " + limit + " (" + string(rune('0'+kept)) + " bytes) of stdout and stderr were kept, the rest is discarded"
	}
	for _, tc := range []struct {
		name      string
		input     string
		limit     int64
		lineBytes int
		want      []string
		kept      int64
		truncated bool
	}{
		{"plain", "a\nbc\n\nlast", 0, 100, []string{"a", "bc", "", "last"}, 10, false},
		{"crlf", "a\r\nb\r", 0, 100, []string{"a", "b"}, 5, false},
		{"invalid utf-8", "ok \xff\xfe end\n\xc3\n", 0, 100, []string{"ok \uFFFD end", "\uFFFD"}, 12, false},
		{"long line", "abcdefgh\nxy\n", 0, 5, []string{"abcde" + CutMarker, "xy"}, 8, false},
		{"cut inside a rune", "aééé\n", 0, 4, []string{"aé" + CutMarker}, 3, false},
		{"exact line length", "abcde\n", 0, 5, []string{"abcde"}, 6, false},
		{"exact budget", "12345\n", 6, 100, []string{"12345"}, 6, false},
		{"budget then more", "12345\nx\n", 6, 100, []string{"12345", notice("6 bytes", 6)}, 6, true},
		{"budget mid line", "12345\nabcdef\nmore\n", 8, 100, []string{"12345", "ab" + CutMarker, notice("8 bytes", 8)}, 8, true},
		{"newline over budget", "1234\n", 4, 100, []string{"1234", notice("4 bytes", 4)}, 4, true},
	} {
		for _, chunk := range []int{1, 3, 1 << 20} {
			lines, c := captureBytes([]byte(tc.input), chunk, tc.limit, tc.lineBytes)
			if got := texts(lines); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("%s (chunks of %d): lines %q, want %q", tc.name, chunk, got, tc.want)
			}
			if kept, truncated := c.totals(); kept != tc.kept || truncated != tc.truncated {
				t.Errorf("%s (chunks of %d): kept %d truncated %v, want %d %v", tc.name, chunk, kept, truncated, tc.kept, tc.truncated)
			}
		}
	}
}

func FuzzCapture(f *testing.F) {
	f.Add([]byte("a\nbc\r\n\xff\nlong line here\n"), 3, int64(10), 4)
	f.Add([]byte("ééé\n\n"), 1, int64(0), 3)
	f.Fuzz(func(t *testing.T, input []byte, chunk int, limit int64, lineBytes int) {
		if lineBytes <= 0 || lineBytes > 1<<16 || limit < 0 {
			return
		}
		lines, c := captureBytes(input, chunk, limit, lineBytes)
		kept, truncated := c.totals()
		if limit > 0 && kept > limit || kept > int64(len(input)) {
			t.Fatalf("kept %d of %d bytes under limit %d", kept, len(input), limit)
		}
		for i, l := range lines {
			if !utf8.ValidString(l.Text) {
				t.Fatalf("line %d not UTF-8: %q", i, l.Text)
			}
			if l.Stream == System && (i != len(lines)-1 || !truncated) {
				t.Fatalf("notice at line %d of %d (truncated %v)", i, len(lines), truncated)
			}
			body := strings.TrimSuffix(l.Text, CutMarker)
			// A replaced byte grows from 1 to 3 bytes.
			if l.Stream != System && len(body) > 3*lineBytes {
				t.Fatalf("line of %d bytes with lineBytes %d", len(body), lineBytes)
			}
		}
		// Valid, short, CR-free lines within the budget come back unchanged.
		if utf8.Valid(input) && !bytes.ContainsRune(input, '\r') && limit == 0 {
			var want []string
			for _, l := range strings.SplitAfter(string(input), "\n") {
				if l == "" {
					continue
				}
				if l = strings.TrimSuffix(l, "\n"); len(l) <= lineBytes {
					want = append(want, l)
				} else {
					want = append(want, string(cutAt([]byte(l), lineBytes))+CutMarker)
				}
			}
			if got := texts(lines); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Fatalf("lines %q, want %q", got, want)
			}
		}
	})
}

// TestDrainIsBounded: a process outside the tree holds the stdout pipe open.
func TestDrainIsBounded(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	er, ew, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ew.Close()
	var got []string
	c := newCapture(func(l Line) { got = append(got, l.Text) }, 0, 100)
	c.start(r, er)
	w.WriteString("done\npartial")
	begin := time.Now()
	c.drain(100 * time.Millisecond)
	if took := time.Since(begin); took > 5*time.Second {
		t.Fatalf("drain took %v", took)
	}
	if strings.Join(got, "|") != "done|partial" {
		t.Fatalf("lines %q", got)
	}
}

func runOutput(t *testing.T, mode string, limits Limits) ([]Line, Result) {
	t.Helper()
	c := newCollector()
	spec := pySpec(t, c, "output.py", mode)
	spec.Limits = limits
	res := waitDone(t, start(t, newHost(t), spec), 60*time.Second)
	if res.ExitCode != 0 {
		t.Fatalf("output.py %s exited %d: %q", mode, res.ExitCode, texts(c.snapshot()))
	}
	return c.snapshot(), res
}

func TestOutputOfRealProcess(t *testing.T) {
	lines, _ := runOutput(t, "badutf8", Limits{})
	if got := texts(lines); strings.Join(got, "|") != "ok \uFFFD end|\uFFFD" {
		t.Errorf("badutf8: %q", got)
	}
	lines, _ = runOutput(t, "nonewline", Limits{})
	if got := texts(lines); strings.Join(got, "|") != "first|last" {
		t.Errorf("nonewline: %q", got)
	}
	lines, res := runOutput(t, "streams", Limits{})
	// Order holds per stream only: two pipes, two readers.
	slices.SortFunc(lines, func(a, b Line) int { return int(a.Stream) - int(b.Stream) })
	if len(lines) != 2 || lines[0].Stream != Stdout || lines[0].Text != "to stdout" || lines[1].Stream != Stderr || lines[1].Text != "to stderr" {
		t.Errorf("streams: %+v", lines)
	}
	if res.OutputBytes != int64(len("to stdout\nto stderr\n")) || res.OutputTruncated {
		t.Errorf("streams: %d bytes, truncated %v", res.OutputBytes, res.OutputTruncated)
	}
}

func TestOutputLongLine(t *testing.T) {
	lines, res := runOutput(t, "longline", Limits{})
	want := strings.Repeat("é", DefaultLineBytes/2) + CutMarker
	if len(lines) != 2 || lines[0].Text != want || lines[1].Text != "after" {
		t.Fatalf("got %d lines, the first %d bytes: %.40q…", len(lines), len(lines[0].Text), lines[0].Text)
	}
	if res.OutputBytes != DefaultLineBytes+int64(len("after\n")) {
		t.Errorf("kept %d bytes", res.OutputBytes)
	}
}

// TestOutputFlood prints 100 MiB under the real 64 MiB cap: one notice, the
// child is never blocked, and the supervisor's memory stays small.
func TestOutputFlood(t *testing.T) {
	const limit = 64 << 20
	var lines, notices, bytes atomic.Int64
	var last atomic.Value
	c := newCollector()
	spec := pySpec(t, c, "output.py", "flood")
	spec.Limits.OutputBytes = limit
	spec.Output = func(l Line) {
		if l.Stream == System {
			notices.Add(1)
		} else {
			lines.Add(1)
			bytes.Add(int64(len(l.Text)) + 1)
		}
		last.Store(l)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	stop := make(chan struct{})
	peakHeap := make(chan uint64)
	go func() {
		var m runtime.MemStats
		var peak uint64
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapInuse)
			case <-stop:
				peakHeap <- peak
				return
			}
		}
	}()
	begin := time.Now()
	res := waitDone(t, start(t, newHost(t), spec), 60*time.Second)
	close(stop)
	peak := <-peakHeap
	if res.ExitCode != 0 {
		t.Fatalf("flood exited %d", res.ExitCode)
	}
	if notices.Load() != 1 || last.Load().(Line).Stream != System {
		t.Fatalf("%d notices, last line %+v", notices.Load(), last.Load())
	}
	if !res.OutputTruncated || res.OutputBytes != limit || bytes.Load() != limit {
		t.Fatalf("kept %d (delivered %d), truncated %v; want exactly %d", res.OutputBytes, bytes.Load(), res.OutputTruncated, limit)
	}
	if want := "output truncated: the first 64.00 MiB (67108864 bytes)"; !strings.HasPrefix(last.Load().(Line).Text, want) {
		t.Errorf("notice %q", last.Load().(Line).Text)
	}
	t.Logf("100 MiB flood: %d lines in %v; Go heap in use %.1f MiB before, peak %.1f MiB during",
		lines.Load(), time.Since(begin), float64(before.HeapInuse)/(1<<20), float64(peak)/(1<<20))
}

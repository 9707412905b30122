package ray

import (
	"errors"
	"strings"
	"testing"
)

// streamAll feeds text to the cursor in the given chunk sizes, as one
// stream from the beginning of the log, and returns the lines delivered.
func streamAll(cur *LogCursor, text string, sizes []int, final bool) ([]string, error) {
	var got []string
	collect := func(l string) error { got = append(got, l); return nil }
	cur.restart()
	i := 0
	for k := 0; i < len(text); k++ {
		n := 1
		if len(sizes) > 0 {
			n = sizes[k%len(sizes)]
		}
		if n <= 0 {
			n = 1
		}
		end := min(i+n, len(text))
		if err := cur.feed(text[i:end], collect); err != nil {
			return got, err
		}
		i = end
	}
	return got, cur.finish(final, collect)
}

func TestLogCursorChunks(t *testing.T) {
	text := "Runtime env is setting up.\nfirst\r\n\nthird é line\nunfinished"
	want := []string{"Runtime env is setting up.", "first", "", "third é line"}
	for size := 1; size <= len(text); size++ {
		var cur LogCursor
		got, err := streamAll(&cur, text, []int{size}, false)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("chunks of %d: lines %q, want %q", size, got, want)
		}
		if cur.Offset != int64(len(text)-len("unfinished")) || cur.Lines != 4 {
			t.Fatalf("chunks of %d: offset %d, lines %d", size, cur.Offset, cur.Lines)
		}
	}
}

// TestLogCursorResume: a new stream from the beginning (a reconnection, a
// new GET) delivers only what follows the cursor, and a line cut by the
// end of the first stream comes once, whole.
func TestLogCursorResume(t *testing.T) {
	var cur LogCursor
	first, err := streamAll(&cur, "a\nb\npart", []int{3}, false)
	if err != nil {
		t.Fatal(err)
	}
	second, err := streamAll(&cur, "a\nb\npartial line\nc\nlast", []int{2}, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(append(first, second...), "|"); got != "a|b|partial line|c|last" {
		t.Fatalf("lines %q", got)
	}
	if _, err := streamAll(&cur, "a\nb\n", nil, false); !errors.Is(err, ErrLogShrank) {
		t.Fatalf("a shorter log: %v, want ErrLogShrank", err)
	}
}

func TestLogCursorStopsAtCallbackError(t *testing.T) {
	var cur LogCursor
	stop := errors.New("stop")
	n := 0
	err := cur.feed("a\nb\nc\n", func(string) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 || cur.Lines != 2 || cur.Offset != 4 {
		t.Fatalf("err %v after %d lines, cursor %+v", err, n, cur)
	}
}

// FuzzLogCursor: however a log is cut into streams and chunks, every line
// is delivered once, in order, and the last unfinished line only when the
// job is over.
func FuzzLogCursor(f *testing.F) {
	f.Add("a\nbb\n\nccc", uint8(3), uint8(2), uint8(5))
	f.Add("line\r\nline\n", uint8(1), uint8(7), uint8(1))
	f.Add("", uint8(0), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, text string, cutA, cutB, chunk uint8) {
		// Three streams, each from the beginning, each seeing a longer
		// prefix of the log (the log grows between them).
		a := int(cutA) % (len(text) + 1)
		b := a + int(cutB)%(len(text)-a+1)
		var cur LogCursor
		var got []string
		for i, end := range []int{a, b, len(text)} {
			lines, err := streamAll(&cur, text[:end], []int{int(chunk)%9 + 1, 1, 3}, i == 2)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, lines...)
		}
		var want []string
		if text != "" {
			want = strings.Split(text, "\n")
			if want[len(want)-1] == "" {
				want = want[:len(want)-1]
			}
			for i := range want {
				want[i] = strings.TrimSuffix(want[i], "\r")
			}
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
			t.Fatalf("lines %q, want %q", got, want)
		}
		if cur.Offset != int64(len(text)) {
			t.Fatalf("offset %d, want %d", cur.Offset, len(text))
		}
	})
}

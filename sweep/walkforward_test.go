package sweep

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func day(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }

// foldsText writes folds as "train from–to | test from–to" lines, times
// as MM-DDTHH:MM.
func foldsText(folds []Fold) string {
	f := func(t time.Time) string { return t.UTC().Format("01-02T15:04") }
	var b strings.Builder
	for i, fd := range folds {
		if fd.Index != i {
			fmt.Fprintf(&b, "(index %d) ", fd.Index)
		}
		fmt.Fprintf(&b, "%s–%s | %s–%s\n", f(fd.Train.From), f(fd.Train.To), f(fd.Test.From), f(fd.Test.To))
	}
	return b.String()
}

func mustFolds(t *testing.T, arg string, bars Bars, from, to time.Time) []Fold {
	t.Helper()
	wf, err := ParseWalkForward(arg)
	if err != nil {
		t.Fatal(err)
	}
	folds, err := wf.Folds(bars, from, to)
	if err != nil {
		t.Fatal(err)
	}
	return folds
}

func TestFoldsOfTheBundledWeek(t *testing.T) {
	// The bundled data set: 1-minute bars from 2026-01-05 for 7 days.
	// train=2d,test=1d: 5 folds testing 2026-01-07 … 2026-01-11.
	folds := mustFolds(t, "train=2d,test=1d", week, time.Time{}, time.Time{})
	want := "" +
		"01-05T00:00–01-07T00:00 | 01-07T00:00–01-08T00:00\n" +
		"01-06T00:00–01-08T00:00 | 01-08T00:00–01-09T00:00\n" +
		"01-07T00:00–01-09T00:00 | 01-09T00:00–01-10T00:00\n" +
		"01-08T00:00–01-10T00:00 | 01-10T00:00–01-11T00:00\n" +
		"01-09T00:00–01-11T00:00 | 01-11T00:00–01-12T00:00\n"
	if got := foldsText(folds); got != want {
		t.Fatalf("folds\n%swant\n%s", got, want)
	}
	// As the runs' inclusive --from/--to: the last nanosecond before the end.
	from, to := folds[4].Test.RunFlags()
	if from != "2026-01-11T00:00:00Z" || to != "2026-01-11T23:59:59.999999999Z" {
		t.Fatalf("run flags %s %s", from, to)
	}
	if y := folds[0].Test.Years(); y != 1/365.25 {
		t.Fatalf("a day is %v years", y)
	}
}

func TestFoldTiling(t *testing.T) {
	for _, tc := range []struct {
		name, arg string
		from, to  time.Time
		want      string
	}{
		{"anchored: train windows grow", "train=2d,test=1d,anchored", time.Time{}, time.Time{}, "" +
			"01-05T00:00–01-07T00:00 | 01-07T00:00–01-08T00:00\n" +
			"01-05T00:00–01-08T00:00 | 01-08T00:00–01-09T00:00\n" +
			"01-05T00:00–01-09T00:00 | 01-09T00:00–01-10T00:00\n" +
			"01-05T00:00–01-10T00:00 | 01-10T00:00–01-11T00:00\n" +
			"01-05T00:00–01-11T00:00 | 01-11T00:00–01-12T00:00\n"},
		{"step longer than test: gaps", "train=1d,test=12h,step=2d", time.Time{}, time.Time{}, "" +
			"01-05T00:00–01-06T00:00 | 01-06T00:00–01-06T12:00\n" +
			"01-07T00:00–01-08T00:00 | 01-08T00:00–01-08T12:00\n" +
			"01-09T00:00–01-10T00:00 | 01-10T00:00–01-10T12:00\n"},
		{"a last test window cut at the end", "train=2d,test=2d", time.Time{}, time.Time{}, "" +
			"01-05T00:00–01-07T00:00 | 01-07T00:00–01-09T00:00\n" +
			"01-07T00:00–01-09T00:00 | 01-09T00:00–01-11T00:00\n" +
			"01-09T00:00–01-11T00:00 | 01-11T00:00–01-12T00:00\n"},
		{"anchored, step longer than test, cut", "train=36h,test=1d,step=30h,anchored", time.Time{}, time.Time{}, "" +
			"01-05T00:00–01-06T12:00 | 01-06T12:00–01-07T12:00\n" +
			"01-05T00:00–01-07T18:00 | 01-07T18:00–01-08T18:00\n" +
			"01-05T00:00–01-09T00:00 | 01-09T00:00–01-10T00:00\n" +
			"01-05T00:00–01-10T06:00 | 01-10T06:00–01-11T06:00\n" +
			"01-05T00:00–01-11T12:00 | 01-11T12:00–01-12T00:00\n"},
		{"--from and --to", "train=1d,test=1d", day(6), time.Date(2026, 1, 9, 11, 59, 0, 0, time.UTC), "" +
			"01-06T00:00–01-07T00:00 | 01-07T00:00–01-08T00:00\n" +
			"01-07T00:00–01-08T00:00 | 01-08T00:00–01-09T00:00\n" +
			"01-08T00:00–01-09T00:00 | 01-09T00:00–01-09T11:59\n"},
		{"--to past the data: the data's end", "train=3d,test=2d", time.Time{}, day(20), "" +
			"01-05T00:00–01-08T00:00 | 01-08T00:00–01-10T00:00\n" +
			"01-07T00:00–01-10T00:00 | 01-10T00:00–01-12T00:00\n"},
		{"--from before the data (calendar alignment)", "train=5d,test=2d", day(3), time.Time{}, "" +
			"01-03T00:00–01-08T00:00 | 01-08T00:00–01-10T00:00\n" +
			"01-05T00:00–01-10T00:00 | 01-10T00:00–01-12T00:00\n"},
		{"one fold with a short test", "train=6d23h,test=1d", time.Time{}, time.Time{}, "" +
			"01-05T00:00–01-11T23:00 | 01-11T23:00–01-12T00:00\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			folds := mustFolds(t, tc.arg, week, tc.from, tc.to)
			if got := foldsText(folds); got != tc.want {
				t.Fatalf("folds\n%swant\n%s", got, tc.want)
			}
			checkTiling(t, tc.arg, week, tc.from, tc.to, folds)
		})
	}
}

// checkTiling checks the fold arithmetic's properties: train windows end
// where test windows start; test windows are Step apart, in the window,
// and only the last is cut; one more fold would test from the end on.
func checkTiling(t *testing.T, arg string, bars Bars, from, to time.Time, folds []Fold) {
	t.Helper()
	wf, err := ParseWalkForward(arg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := DataWindow(bars, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(folds) == 0 {
		t.Fatal("no folds")
	}
	for k, f := range folds {
		if f.Index != k || !f.Train.To.Equal(f.Test.From) || !f.Test.From.Before(w.To) || f.Test.To.After(w.To) {
			t.Fatalf("fold %d %+v in %s", k, f, w)
		}
		wantFrom := w.From.Add(time.Duration(k) * wf.Step)
		if wf.Anchored {
			wantFrom = w.From
		}
		if !f.Train.From.Equal(wantFrom) || f.Test.From.Sub(w.From) != time.Duration(k)*wf.Step+wf.Train {
			t.Fatalf("fold %d %+v: offsets", k, f)
		}
		if full := f.Test.Duration() == wf.Test; !full && (k != len(folds)-1 || !f.Test.To.Equal(w.To)) {
			t.Fatalf("fold %d of %d cut: %+v", k, len(folds), f)
		}
		if wf.Anchored == false && f.Train.Duration() != wf.Train {
			t.Fatalf("fold %d train %s", k, f.Train.Duration())
		}
	}
	if next := folds[len(folds)-1].Test.From.Add(wf.Step); next.Before(w.To) {
		t.Fatalf("a fold testing from %s is missing (the window ends %s)", next, w.To)
	}
}

func TestDataWindow(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to time.Time
		want     Window
	}{
		{"the data", time.Time{}, time.Time{}, Window{day(5), day(12)}},
		{"--from", day(6), time.Time{}, Window{day(6), day(12)}},
		{"--to: just after it", time.Time{}, time.Date(2026, 1, 8, 12, 0, 0, 0, time.UTC),
			Window{day(5), time.Date(2026, 1, 8, 12, 0, 0, 1, time.UTC)}},
		{"--to past the data", time.Time{}, day(30), Window{day(5), day(12)}},
		{"--to at the last bar", time.Time{}, week.Last, Window{day(5), week.Last.Add(time.Nanosecond)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := DataWindow(week, tc.from, tc.to)
			if err != nil {
				t.Fatal(err)
			}
			if !w.From.Equal(tc.want.From) || !w.To.Equal(tc.want.To) {
				t.Fatalf("window %s, want %s", w, tc.want)
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		text string
	}{
		{"30m", 30 * time.Minute, "30m"},
		{"12h", 12 * time.Hour, "12h"},
		{"5d", 5 * Day, "5d"},
		{"2w", 2 * Week, "2w"},
		{"9d", 9 * Day, "1w2d"},
		{"1d12h", 36 * time.Hour, "1d12h"},
		{"36h", 36 * time.Hour, "1d12h"},
		{"1.5d", 36 * time.Hour, "1d12h"},
		{".5w", 84 * time.Hour, "3d12h"},
		{"1h30m", 90 * time.Minute, "1h30m"},
		{"90s", 90 * time.Second, "1m30s"},
		{"1m0.5s", 60*time.Second + 500*time.Millisecond, "1m500ms"},
		{"250ms", 250 * time.Millisecond, "250ms"},
		{"3µs", 3 * time.Microsecond, "3µs"},
		{"3us", 3 * time.Microsecond, "3µs"},
		{"1ns", 1, "1ns"},
		{"15250w", 15250 * Week, "15250w"},
	} {
		d, err := ParseDuration(tc.in)
		if err != nil || d != tc.want {
			t.Fatalf("ParseDuration(%q) = %v, %v; want %v", tc.in, d, err, tc.want)
		}
		if got := FormatDuration(d); got != tc.text {
			t.Fatalf("FormatDuration(%v) = %q, want %q", d, got, tc.text)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"", "empty duration: want a number and a unit, such as 30m, 12h, 5d or 2w"},
		{"d", `duration "d": want a number before each unit, such as 30m, 12h, 5d or 2w`},
		{"-1d", `duration "-1d": want a number before each unit, such as 30m, 12h, 5d or 2w`},
		{"1.2.3d", `duration "1.2.3d": want a number before each unit, such as 30m, 12h, 5d or 2w`},
		{"5", `duration "5": 5 has no unit (w, d, h, m, s, ms, us or ns)`},
		{"1y", `duration "1y": unknown unit "y" (w, d, h, m, s, ms, us or ns; months and years vary in length)`},
		{"1mo", `duration "1mo": unknown unit "mo" (w, d, h, m, s, ms, us or ns; months and years vary in length)`},
		{"1 d", `duration "1 d": unknown unit " d" (w, d, h, m, s, ms, us or ns; months and years vary in length)`},
		{"0s", `duration "0s": must be longer than 0`},
		{"15251w", `duration "15251w": 15251w is too long`},
		{"9300000000000000000ns", `duration "9300000000000000000ns": 9300000000000000000ns is too long`},
		{"15000w15000w", `duration "15000w15000w" is too long`},
	} {
		if d, err := ParseDuration(tc.in); err == nil || err.Error() != tc.want {
			t.Fatalf("ParseDuration(%q) = %v, %v; want the error %q", tc.in, d, err, tc.want)
		}
	}
}

func TestWalkForwardSpec(t *testing.T) {
	wf, err := ParseWalkForward("anchored,test=1d,train=2w")
	if err != nil {
		t.Fatal(err)
	}
	if wf != (WalkForward{Train: 2 * Week, Test: Day, Step: Day, Anchored: true}) {
		t.Fatalf("parsed %+v", wf)
	}
	if s := wf.String(); s != "train=2w,test=1d,step=1d,anchored" {
		t.Fatalf("String %q", s)
	}
	if back := roundTrip(t, wf); back != wf {
		t.Fatalf("JSON round trip %+v", back)
	}
	data, _ := wf.MarshalJSON()
	if string(data) != `{"train":"2w","test":"1d","step":"1d","anchored":true}` {
		t.Fatalf("JSON %s", data)
	}
}

// TestWindowCheck: fed the bar times of the bundled week with a day left
// out, the check names the first fold whose train or test window holds no
// bar, and passes the whole week; it needs no bar past the last window's
// start.
func TestWindowCheck(t *testing.T) {
	hourly := func(skip func(time.Time) bool) []int64 {
		var ts []int64
		for at := day(5); at.Before(day(12)); at = at.Add(time.Hour) {
			if !skip(at) {
				ts = append(ts, at.UnixNano())
			}
		}
		return ts
	}
	between := func(from, to time.Time) func(time.Time) bool {
		return func(at time.Time) bool { return !at.Before(from) && at.Before(to) }
	}
	for _, tc := range []struct {
		name, arg string
		skip      func(time.Time) bool
		want      string // "" for no refusal
	}{
		{"every window holds bars", "train=2d,test=1d", func(time.Time) bool { return false }, ""},
		{"a test window without bars", "train=2d,test=1d", between(day(9), day(10)),
			"fold 2's test window [2026-01-09T00:00:00Z, 2026-01-10T00:00:00Z) holds no bar"},
		{"a day without bars: the first window it empties", "train=1d,test=1d", between(day(6), day(7)),
			"fold 0's test window [2026-01-06T00:00:00Z, 2026-01-07T00:00:00Z) holds no bar"},
		{"the gap in a train window only", "train=1d,test=1d,step=2d", between(day(7), day(8)),
			"fold 1's train window [2026-01-07T00:00:00Z, 2026-01-08T00:00:00Z) holds no bar"},
		{"anchored: train windows all hold the first day", "train=1d,test=1d,step=2d,anchored", between(day(7), day(8)), ""},
		{"a gap only between windows", "train=1d,test=12h,step=2d", between(day(6).Add(12*time.Hour), day(7)), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wf, err := ParseWalkForward(tc.arg)
			if err != nil {
				t.Fatal(err)
			}
			folds := mustFolds(t, tc.arg, week, time.Time{}, time.Time{})
			c := NewWindowCheck(wf, folds)
			for _, ts := range hourly(tc.skip) {
				if c.Done() {
					break
				}
				c.See(ts)
			}
			err = c.Err()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v\nfolds\n%s", err, foldsText(folds))
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want a refusal with %q\nfolds\n%s", err, tc.want, foldsText(folds))
			}
			var ue *UsageError
			if tc.want != "" && (!errors.As(err, &ue) || ue.Field != FieldWalkForward) {
				t.Fatalf("%T %v, want a *UsageError of --walk-forward", err, err)
			}
		})
	}
}

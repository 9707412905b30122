package sweep

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Units of walk-forward durations beyond Go's.
const (
	Day  = 24 * time.Hour
	Week = 7 * Day
)

// MaxFolds is the most folds a walk-forward may have: each fold is a
// whole sweep.
const MaxFolds = 10_000

// ParseDuration parses a walk-forward duration: a positive sequence of
// decimal numbers, each with a unit, as in "30m", "12h", "5d", "2w",
// "1d12h" or "1.5h". Units are w (7 days), d (24 hours) and Go's h, m, s,
// ms, us (µs) and ns; "m" is minutes, never months. Months and years are
// not units, since their length varies.
func ParseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, errors.New("empty duration: want a number and a unit, such as 30m, 12h, 5d or 2w")
	}
	var total time.Duration
	rest := s
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		j := i
		for j < len(rest) && !(rest[j] >= '0' && rest[j] <= '9' || rest[j] == '.') {
			j++
		}
		num, unit := rest[:i], rest[i:j]
		rest = rest[j:]
		if !plainNumber(num) {
			return 0, fmt.Errorf("duration %q: want a number before each unit, such as 30m, 12h, 5d or 2w", s)
		}
		var part time.Duration
		switch unit {
		case "w", "d":
			// Go parses the number with hours, exactly; a day is 24 of them.
			hours, err := time.ParseDuration(num + "h")
			if err != nil {
				return 0, fmt.Errorf("duration %q: %s%s is too long", s, num, unit)
			}
			mult := time.Duration(24)
			if unit == "w" {
				mult = 7 * 24
			}
			if hours > math.MaxInt64/mult {
				return 0, fmt.Errorf("duration %q: %s%s is too long", s, num, unit)
			}
			part = hours * mult
		case "h", "m", "s", "ms", "us", "µs", "μs", "ns":
			d, err := time.ParseDuration(num + unit)
			if err != nil {
				return 0, fmt.Errorf("duration %q: %s%s is too long", s, num, unit)
			}
			part = d
		case "":
			return 0, fmt.Errorf("duration %q: %s has no unit (w, d, h, m, s, ms, us or ns)", s, num)
		default:
			return 0, fmt.Errorf("duration %q: unknown unit %q (w, d, h, m, s, ms, us or ns; months and years vary in length)", s, unit)
		}
		if total > math.MaxInt64-part {
			return 0, fmt.Errorf("duration %q is too long", s)
		}
		total += part
	}
	if total <= 0 {
		return 0, fmt.Errorf("duration %q: must be longer than 0", s)
	}
	return total, nil
}

// plainNumber reports whether s is digits with at most one point among
// or after them (1, 1.5, .5, 5.).
func plainNumber(s string) bool {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" {
		return false
	}
	for _, c := range whole + frac {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// FormatDuration writes d in the form ParseDuration reads, with the
// largest units first: "2w", "1d12h", "1h30m", "1m0.5s".
func FormatDuration(d time.Duration) string {
	if d <= 0 {
		return d.String()
	}
	var b strings.Builder
	for _, u := range []struct {
		size time.Duration
		name string
	}{{Week, "w"}, {Day, "d"}, {time.Hour, "h"}, {time.Minute, "m"}} {
		if n := d / u.size; n > 0 {
			b.WriteString(strconv.FormatInt(int64(n), 10) + u.name)
			d -= n * u.size
		}
	}
	if d > 0 {
		b.WriteString(d.String()) // "30s", "1.5s", "250ms"
	}
	return b.String()
}

// WalkForward is a parsed --walk-forward: train on one window, test the
// best combination on the next, move on by Step.
type WalkForward struct {
	// Train and Test are the lengths of each fold's train and test windows.
	Train, Test time.Duration

	// Step is how far each fold starts after the one before; at least
	// Test (gaps between test windows are allowed, overlaps are not).
	Step time.Duration

	// Anchored keeps every train window's start at the data's start, so
	// train windows grow by Step; otherwise they roll forward.
	Anchored bool
}

// wfForm is the usage of --walk-forward, for messages.
const wfForm = "want train=DUR,test=DUR[,step=DUR][,anchored]"

// ParseWalkForward parses train=DUR,test=DUR[,step=DUR][,anchored] (in
// any order). Step defaults to Test and may not be shorter.
func ParseWalkForward(arg string) (WalkForward, error) {
	var wf WalkForward
	seen := map[string]bool{}
	for _, item := range strings.Split(arg, ",") {
		key, val, hasVal := strings.Cut(item, "=")
		if seen[key] {
			return WalkForward{}, usage(FieldWalkForward, arg, fmt.Sprintf("%s is given twice", key))
		}
		seen[key] = true
		var dst *time.Duration
		switch key {
		case "train":
			dst = &wf.Train
		case "test":
			dst = &wf.Test
		case "step":
			dst = &wf.Step
		case "anchored":
			if hasVal {
				return WalkForward{}, usage(FieldWalkForward, arg, "anchored takes no value: "+wfForm)
			}
			wf.Anchored = true
			continue
		default:
			return WalkForward{}, usage(FieldWalkForward, arg, fmt.Sprintf("unknown part %q: %s", item, wfForm))
		}
		if !hasVal {
			return WalkForward{}, usage(FieldWalkForward, arg, fmt.Sprintf("%s needs a duration: %s", key, wfForm))
		}
		d, err := ParseDuration(val)
		if err != nil {
			return WalkForward{}, usage(FieldWalkForward, arg, fmt.Sprintf("%s: %v", key, err))
		}
		*dst = d
	}
	for _, key := range []string{"train", "test"} {
		if !seen[key] {
			return WalkForward{}, usage(FieldWalkForward, arg, fmt.Sprintf("no %s window: %s", key, wfForm))
		}
	}
	if !seen["step"] {
		wf.Step = wf.Test
	}
	if wf.Step < wf.Test {
		return WalkForward{}, usage(FieldWalkForward, arg, fmt.Sprintf("the step %s is shorter than the test window %s: test windows would overlap",
			FormatDuration(wf.Step), FormatDuration(wf.Test)))
	}
	return wf, nil
}

// String writes wf as --walk-forward takes it, step included.
func (wf WalkForward) String() string {
	s := fmt.Sprintf("train=%s,test=%s,step=%s", FormatDuration(wf.Train), FormatDuration(wf.Test), FormatDuration(wf.Step))
	if wf.Anchored {
		s += ",anchored"
	}
	return s
}

// walkForwardJSON is a WalkForward in the sweep document's spec.
type walkForwardJSON struct {
	Train    string `json:"train"`
	Test     string `json:"test"`
	Step     string `json:"step"`
	Anchored bool   `json:"anchored"`
}

// MarshalJSON writes {"train": "2d", "test": "1d", "step": "1d", "anchored": false}.
func (wf WalkForward) MarshalJSON() ([]byte, error) {
	return json.Marshal(walkForwardJSON{FormatDuration(wf.Train), FormatDuration(wf.Test), FormatDuration(wf.Step), wf.Anchored})
}

// UnmarshalJSON reads what MarshalJSON writes, with the checks of
// ParseWalkForward.
func (wf *WalkForward) UnmarshalJSON(data []byte) error {
	var w walkForwardJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	arg := "train=" + w.Train + ",test=" + w.Test + ",step=" + w.Step
	if w.Anchored {
		arg += ",anchored"
	}
	parsed, err := ParseWalkForward(arg)
	if err != nil {
		return err
	}
	*wf = parsed
	return nil
}

// Window is a half-open span of time [From, To).
type Window struct {
	// From is the first instant in the window, To the first after it.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// Duration returns the window's length.
func (w Window) Duration() time.Duration { return w.To.Sub(w.From) }

// Years returns the window's length in Julian years (365.25 days), the
// year the metrics annualise with.
func (w Window) Years() float64 { return w.Duration().Hours() / (365.25 * 24) }

// RunFlags returns the window as the --from and --to of one run, which
// are inclusive: --to is the last nanosecond before To.
func (w Window) RunFlags() (from, to string) {
	return w.From.UTC().Format(time.RFC3339Nano), w.To.Add(-time.Nanosecond).UTC().Format(time.RFC3339Nano)
}

func (w Window) String() string {
	return "[" + w.From.UTC().Format(time.RFC3339Nano) + ", " + w.To.UTC().Format(time.RFC3339Nano) + ")"
}

// Bars describes the data a walk-forward tiles, as far as folds need it.
type Bars struct {
	// First and Last are the times of the first and the last bar within
	// --from and --to.
	First, Last time.Time

	// Interval is one bar interval: the data's usual gap between
	// consecutive timestamps (the metrics' bar_interval_s).
	Interval time.Duration
}

// DataWindow returns the half-open window a walk-forward tiles: from
// --from (from; the zero time for none: the first bar) to the last bar's
// time plus one bar interval, or to just after --to (to, inclusive) when
// that comes first. A --to past the data's end does not stretch the
// window over time without bars.
func DataWindow(bars Bars, from, to time.Time) (Window, error) {
	return dataWindow(bars, from, to, wfLabel{})
}

// dataWindow is DataWindow, its refusals naming the walk-forward as label
// says.
func dataWindow(bars Bars, from, to time.Time, label wfLabel) (Window, error) {
	if bars.First.IsZero() || bars.Last.IsZero() || bars.Last.Before(bars.First) {
		return Window{}, label.usage("no bars in the data window")
	}
	if bars.Interval <= 0 {
		return Window{}, label.usage("the data's bar interval is unknown (a single timestamp): a walk-forward needs bars at two times at least")
	}
	w := Window{From: bars.First.UTC(), To: bars.Last.Add(bars.Interval).UTC()}
	if !from.IsZero() {
		w.From = from.UTC()
	}
	if !to.IsZero() {
		if end := to.Add(time.Nanosecond).UTC(); end.Before(w.To) {
			w.To = end
		}
	}
	if !w.From.Before(w.To) {
		return Window{}, label.usage(fmt.Sprintf("the data window %s is empty", w))
	}
	return w, nil
}

// wfLabel is how a walk-forward's refusals name it: Saved for a spec
// restored from a document, and with the argument as the user gave it,
// which may differ from String's form (test=1d,train=8d is
// train=1w1d,test=1d,step=1d): the reasons say the windows it makes.
type wfLabel struct {
	saved bool
	arg   string
}

// usage is a refusal of the walk-forward label names.
func (l wfLabel) usage(reason string) *UsageError {
	return &UsageError{Field: FieldWalkForward, Saved: l.saved, Arg: l.arg, Reason: reason}
}

// Fold is one walk-forward fold: a train window and the test window
// after it.
type Fold struct {
	// Index numbers the folds from 0.
	Index int
	// Train is the window the fold's sweep runs on; Test, the window
	// after it, the one its best combination runs on.
	Train Window
	Test  Window
}

// Folds tiles the data window (see DataWindow) into folds. Fold k trains
// on [start + k·Step, start + k·Step + Train) (anchored: [start, start +
// k·Step + Train)) and tests on the Test that follows; a fold exists while
// its test window starts before the window's end, and a last test window
// that runs past the end is cut there. A walk-forward whose first fold has
// no test window, or whose first train window holds no bar, is refused.
func (wf WalkForward) Folds(bars Bars, from, to time.Time) ([]Fold, error) {
	return wf.folds(bars, from, to, wfLabel{arg: wf.String()})
}

// folds is Folds, its refusals naming the walk-forward as label says.
func (wf WalkForward) folds(bars Bars, from, to time.Time, label wfLabel) ([]Fold, error) {
	w, err := dataWindow(bars, from, to, label)
	if err != nil {
		return nil, err
	}
	refuse := func(reason string) ([]Fold, error) {
		return nil, label.usage(reason)
	}
	span := w.Duration()
	if span <= wf.Train {
		return refuse(fmt.Sprintf("the first fold does not fit the data: the data window %s lasts %s, no longer than the train window %s",
			w, FormatDuration(span), FormatDuration(wf.Train)))
	}
	if !bars.First.Before(w.From.Add(wf.Train)) {
		return refuse(fmt.Sprintf("the first fold does not fit the data: its train window %s holds no bar (the first is at %s)",
			Window{w.From, w.From.Add(wf.Train)}, bars.First.UTC().Format(time.RFC3339Nano)))
	}
	// Folds exist for k·Step < span − Train.
	n := (span-wf.Train-1)/wf.Step + 1
	if n > MaxFolds {
		return refuse(fmt.Sprintf("%d folds, more than %d: steps of %s over the data window %s (%s): use a longer step",
			n, MaxFolds, FormatDuration(wf.Step), w, FormatDuration(span)))
	}
	folds := make([]Fold, n)
	for k := range folds {
		offset := time.Duration(k) * wf.Step
		trainFrom := w.From.Add(offset)
		if wf.Anchored {
			trainFrom = w.From
		}
		testFrom := w.From.Add(offset + wf.Train)
		testTo := testFrom.Add(wf.Test)
		if testTo.After(w.To) {
			testTo = w.To
		}
		folds[k] = Fold{Index: k, Train: Window{trainFrom, testFrom}, Test: Window{testFrom, testTo}}
	}
	return folds, nil
}

// WindowCheck finds the fold windows that hold no bar, from the data's bar
// times seen in order: a fold whose train window holds no bar has nothing to
// sweep, and one whose test window holds none has nothing to test, so the
// run there would fail to open its data. Fed every bar time (See, in
// ascending order; Done says when no later time can change the answer),
// Err refuses the walk-forward naming the first such window. The zero
// value is not usable: see NewWindowCheck.
type WindowCheck struct {
	label   wfLabel
	folds   []Fold
	windows []checkedWindow // by fold, train then test
	byFrom  []int           // indices of windows in order of their From
	next    int             // the first of byFrom not reached by a bar yet
}

// checkedWindow is one window and the first bar time at or after its
// start, once a bar has reached it.
type checkedWindow struct {
	from, to int64 // unix nanoseconds, half-open
	first    int64 // the first bar time >= from
	reached  bool
}

// NewWindowCheck returns a check of folds, the folds of wf.
func NewWindowCheck(wf WalkForward, folds []Fold) *WindowCheck {
	return newWindowCheck(wfLabel{arg: wf.String()}, folds)
}

// newWindowCheck is NewWindowCheck, its refusal naming the walk-forward as
// label says.
func newWindowCheck(label wfLabel, folds []Fold) *WindowCheck {
	c := &WindowCheck{label: label, folds: folds, windows: make([]checkedWindow, 0, 2*len(folds))}
	for _, f := range folds {
		c.windows = append(c.windows,
			checkedWindow{from: f.Train.From.UnixNano(), to: f.Train.To.UnixNano()},
			checkedWindow{from: f.Test.From.UnixNano(), to: f.Test.To.UnixNano()})
	}
	c.byFrom = make([]int, len(c.windows))
	for i := range c.byFrom {
		c.byFrom[i] = i
	}
	slices.SortStableFunc(c.byFrom, func(a, b int) int { return cmp.Compare(c.windows[a].from, c.windows[b].from) })
	return c
}

// See takes the next bar time t (unix nanoseconds), no earlier than the
// last.
func (c *WindowCheck) See(t int64) {
	for c.next < len(c.byFrom) && t >= c.windows[c.byFrom[c.next]].from {
		w := &c.windows[c.byFrom[c.next]]
		w.first, w.reached = t, true
		c.next++
	}
}

// Done says whether every window's start has been reached: later bar
// times change nothing.
func (c *WindowCheck) Done() bool { return c.next == len(c.byFrom) }

// Err returns a *UsageError for the first fold (train before test) with a
// window that holds no bar among the times seen, or nil.
func (c *WindowCheck) Err() error {
	for i, w := range c.windows {
		if w.reached && w.first < w.to {
			continue
		}
		f := c.folds[i/2]
		phase, win := PhaseTrain, f.Train
		if i%2 == 1 {
			phase, win = PhaseTest, f.Test
		}
		return c.label.usage(fmt.Sprintf(
			"fold %d's %s window %s holds no bar: every fold's train and test windows must hold bars "+
				"(a gap in the data, such as a weekend, needs windows or a step that span it)", f.Index, phase, win))
	}
	return nil
}

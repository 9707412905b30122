package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"stratbench/contract"
)

// manifest is a MANIFEST's params as the engine decodes them.
var manifest = map[string]any{"fast": int64(10), "slow": int64(50), "stop": 0.05, "trend": true, "mode": "ema"}

const declaredList = "declared: fast, mode, slow, stop, trend"

func ptr[T any](v T) *T { return &v }

// week is the bundled data set's bars: 1-minute bars from
// 2026-01-05T00:00:00Z for 7 days.
var week = Bars{
	First:    time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC),
	Last:     time.Date(2026, 1, 11, 23, 59, 0, 0, time.UTC),
	Interval: time.Minute,
}

func TestRefusals(t *testing.T) {
	metricList := strings.Join(MetricKeys(), ", ")
	for _, tc := range []struct {
		name     string
		flags    Flags
		declared map[string]any
		want     string
	}{
		{"undeclared grid param", Flags{Grid: []string{"slowest=1,2"}}, manifest,
			`--grid slowest=1,2: the strategy's MANIFEST declares no param "slowest" (` + declaredList + `)`},
		{"no equals", Flags{Grid: []string{"fast"}}, manifest,
			`--grid fast: want NAME=V1,V2,... or NAME=LO:HI:STEP`},
		{"no name", Flags{Grid: []string{"=1,2"}}, manifest,
			`--grid =1,2: want NAME=V1,V2,... or NAME=LO:HI:STEP`},
		{"not an int", Flags{Grid: []string{"fast=5,x"}}, manifest,
			`--grid fast=5,x: value "x": not an int (the default is 10)`},
		{"int given a float", Flags{Grid: []string{"fast=5,7.5"}}, manifest,
			`--grid fast=5,7.5: value "7.5": not an int (the default is 10)`},
		{"empty value of an int", Flags{Grid: []string{"fast="}}, manifest,
			`--grid fast=: value "": not an int (the default is 10)`},
		{"not a finite float", Flags{Grid: []string{"stop=0.1,inf"}}, manifest,
			`--grid stop=0.1,inf: value "inf": not a finite number (the default is 0.05)`},
		{"not a bool", Flags{Grid: []string{"trend=true,maybe"}}, manifest,
			`--grid trend=true,maybe: value "maybe": not a bool: want true, false, yes, no, on, off, 1 or 0, in any case (the default is true)`},
		{"empty int range", Flags{Grid: []string{"fast=10:5:1"}}, manifest,
			`--grid fast=10:5:1: empty range: LO 10 is above HI 5 (the default is 10)`},
		{"empty float range", Flags{Grid: []string{"stop=0.5:0.1:0.1"}}, manifest,
			`--grid stop=0.5:0.1:0.1: empty range: LO 0.5 is above HI 0.1 (the default is 0.05)`},
		{"zero step", Flags{Grid: []string{"fast=1:10:0"}}, manifest,
			`--grid fast=1:10:0: STEP 0: the step must be greater than 0 (the default is 10)`},
		{"negative float step", Flags{Grid: []string{"stop=0:1:-0.1"}}, manifest,
			`--grid stop=0:1:-0.1: STEP -0.1: the step must be greater than 0 (the default is 0.05)`},
		{"int param, float range", Flags{Grid: []string{"fast=1:10:0.5"}}, manifest,
			`--grid fast=1:10:0.5: STEP "0.5" is not an int: an int param takes int ranges only (the default is 10)`},
		{"int param, bad range", Flags{Grid: []string{"fast=a:10:1"}}, manifest,
			`--grid fast=a:10:1: LO "a": not an int (the default is 10)`},
		{"float range not a number", Flags{Grid: []string{"stop=0:x:0.1"}}, manifest,
			`--grid stop=0:x:0.1: HI "x": not a finite number (the default is 0.05)`},
		{"bool range", Flags{Grid: []string{"trend=0:1:1"}}, manifest,
			`--grid trend=0:1:1: trend is a bool param: a range LO:HI:STEP needs an int or float param (the default is true)`},
		{"value twice", Flags{Grid: []string{"fast=5,5"}}, manifest,
			`--grid fast=5,5: the value "5" is given twice (the default is 10)`},
		{"same float twice", Flags{Grid: []string{"stop=1,1.0"}}, manifest,
			`--grid stop=1,1.0: the value "1.0" is the same as "1" (the default is 0.05)`},
		{"same bool twice", Flags{Grid: []string{"trend=yes,true"}}, manifest,
			`--grid trend=yes,true: the value "true" is the same as "yes" (the default is true)`},
		{"range beyond precision", Flags{Grid: []string{"stop=1e16:1.0000000000000002e16:1e-3"}}, manifest,
			`--grid stop=1e16:1.0000000000000002e16:1e-3: the range repeats the value 1e+16: its step is below the precision of a float of that size (the default is 0.05)`},
		{"too many values", Flags{Grid: []string{"fast=0:2000000:1"}}, manifest,
			`--grid fast=0:2000000:1: 2000001 values, more than the 1000000 one param may take (the default is 10)`},
		{"too many float values", Flags{Grid: []string{"stop=0:1:1e-300"}}, manifest,
			`--grid stop=0:1:1e-300: more than 10^18 values, more than the 1000000 one param may take (the default is 0.05)`},
		{"not UTF-8", Flags{Grid: []string{"mode=a,\xff"}}, manifest,
			`--grid "mode=a,\xff": not valid UTF-8`},
		{"--param not UTF-8", Flags{Params: []string{"mode=\xff"}}, manifest,
			`--param "mode=\xff": not valid UTF-8`},
		{"swept twice", Flags{Grid: []string{"fast=1,2", "fast=3"}}, manifest,
			`--grid fast=3: fast is already swept by an earlier axis`},
		{"swept and fixed", Flags{Grid: []string{"fast=1,2"}, Params: []string{"fast=3"}}, manifest,
			`--grid fast=1,2: fast is also fixed, as fast=3: a param is either swept or fixed`},
		{"swept and fixed, undeclared", Flags{Grid: []string{"x=1,2"}, Params: []string{"x=3"}}, nil,
			`--grid x=1,2: x is also fixed, as x=3: a param is either swept or fixed`},
		{"too many combinations", Flags{Grid: []string{"fast=0:1000:1", "slow=0:1000:1", "stop=0:1000:1"}}, manifest,
			`--grid stop=…: the grid has more than 1000000000 combinations`},
		{"undeclared --param", Flags{Params: []string{"foo=1"}}, manifest,
			`--param foo=1: the strategy's MANIFEST declares no param "foo" (` + declaredList + `)`},
		{"mistyped --param", Flags{Params: []string{"fast=abc"}}, manifest,
			`--param fast=abc: not an int (the default is 10)`},
		{"--param without value", Flags{Params: []string{"fast"}}, manifest,
			`--param fast: want key=value`},
		{"constraint does not parse", Flags{Grid: []string{"fast=1,2"}, Constraint: "fast <"}, manifest,
			`--constraint "fast <": unexpected token EOF at column 6`},
		{"constraint names an unknown param", Flags{Grid: []string{"fast=1,2"}, Constraint: "fast < nope"}, manifest,
			`--constraint "fast < nope": unknown name nope at column 8 (params: fast, mode, slow, stop, trend)`},
		{"constraint names an unknown param, undeclared", Flags{Grid: []string{"a=1,2", "b=3"}, Params: []string{"c=x"}, Constraint: "a < d"}, nil,
			`--constraint "a < d": unknown name d at column 5 (params: a, b, c)`},
		{"constraint is not a bool", Flags{Grid: []string{"fast=1,2"}, Constraint: "fast + 1"}, manifest,
			`--constraint "fast + 1": expected bool, but got int`},
		{"constraint uses now()", Flags{Grid: []string{"fast=1,2"}, Constraint: "now() != nil"}, manifest,
			`--constraint "now() != nil": unknown name now at column 1 (params: fast, mode, slow, stop, trend)`},
		{"random 0", Flags{Random: ptr(int64(0))}, manifest,
			`--random 0: want the number of combinations to run, 1 or more`},
		{"unknown metric", Flags{Metric: "profit"}, manifest,
			`--metric profit: not a metric of the job report (metrics: ` + metricList + `)`},
		{"positions is no metric", Flags{Metric: "positions"}, manifest,
			`--metric positions: not a metric of the job report (metrics: ` + metricList + `)`},
		{"step shorter than test", Flags{WalkForward: "train=2d,test=1d,step=12h"}, manifest,
			`--walk-forward train=2d,test=1d,step=12h: the step 12h is shorter than the test window 1d: test windows would overlap`},
		{"walk-forward without test", Flags{WalkForward: "train=2d"}, manifest,
			`--walk-forward train=2d: no test window: want train=DUR,test=DUR[,step=DUR][,anchored]`},
		{"walk-forward unknown part", Flags{WalkForward: "train=2d,test=1d,gap=1h"}, manifest,
			`--walk-forward train=2d,test=1d,gap=1h: unknown part "gap=1h": want train=DUR,test=DUR[,step=DUR][,anchored]`},
		{"walk-forward part twice", Flags{WalkForward: "train=2d,test=1d,train=3d"}, manifest,
			`--walk-forward train=2d,test=1d,train=3d: train is given twice`},
		{"walk-forward bad unit", Flags{WalkForward: "train=2x,test=1d"}, manifest,
			`--walk-forward train=2x,test=1d: train: duration "2x": unknown unit "x" (w, d, h, m, s, ms, us or ns; months and years vary in length)`},
		{"walk-forward months", Flags{WalkForward: "train=2M,test=1d"}, manifest,
			`--walk-forward train=2M,test=1d: train: duration "2M": unknown unit "M" (w, d, h, m, s, ms, us or ns; months and years vary in length)`},
		{"walk-forward zero", Flags{WalkForward: "train=0d,test=1d"}, manifest,
			`--walk-forward train=0d,test=1d: train: duration "0d": must be longer than 0`},
		{"walk-forward no unit", Flags{WalkForward: "train=2,test=1d"}, manifest,
			`--walk-forward train=2,test=1d: train: duration "2": 2 has no unit (w, d, h, m, s, ms, us or ns)`},
		{"walk-forward anchored=", Flags{WalkForward: "train=2d,test=1d,anchored=yes"}, manifest,
			`--walk-forward train=2d,test=1d,anchored=yes: anchored takes no value: want train=DUR,test=DUR[,step=DUR][,anchored]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSpec(tc.flags, tc.declared)
			assertUsage(t, err, tc.want)
			if s != nil {
				t.Fatalf("a refused spec returned %+v", s)
			}
		})
	}
}

// assertUsage checks that err is a *UsageError whose message, with its
// field named as the command line names it (a Saved one as the document
// does), is exactly want.
func assertUsage(t *testing.T, err error, want string) {
	t.Helper()
	var ue *UsageError
	if !errors.As(err, &ue) {
		t.Fatalf("error %v (%T), want a *UsageError %q", err, err, want)
	}
	if got := commandLine(ue); got != want {
		t.Fatalf("error\n  %s\nwant\n  %s", got, want)
	}
}

// flags are the command line's names of the fields (app's).
var flags = map[Field]string{FieldParams: "--param", FieldGrid: "--grid", FieldConstraint: "--constraint", FieldRandom: "--random",
	FieldMetric: "--metric", FieldWalkForward: "--walk-forward", FieldJobs: "--jobs", FieldResume: "--resume", FieldID: "sweep id"}

// commandLine is the message of ue as the command line prints it.
func commandLine(ue *UsageError) string {
	if ue.Saved {
		return ue.Error()
	}
	return ue.Named(flags[ue.Field])
}

func TestRefusalsWithData(t *testing.T) {
	// A constraint that fails on a combination is refused by Plan, before
	// any run, naming the combination.
	s := mustSpec(t, Flags{Grid: []string{"fast=5,6", "slow=50,60"}, Constraint: "fast % (slow - 60) == 0"}, manifest)
	_, err := s.Plan(context.Background())
	assertUsage(t, err, `--constraint "fast % (slow - 60) == 0": combination 1 (fast=5, slow=60): runtime error: integer divide by zero at column 6`)

	for _, tc := range []struct {
		name, wf string
		from, to time.Time
		want     string
	}{
		{"first fold does not fit", "train=7d,test=1d", time.Time{}, time.Time{},
			`--walk-forward train=1w,test=1d,step=1d: the first fold does not fit the data: the data window [2026-01-05T00:00:00Z, 2026-01-12T00:00:00Z) lasts 1w, no longer than the train window 1w`},
		{"first fold does not fit the --to", "train=2d,test=1d", time.Time{}, time.Date(2026, 1, 6, 12, 0, 0, 0, time.UTC),
			`--walk-forward train=2d,test=1d,step=1d: the first fold does not fit the data: the data window [2026-01-05T00:00:00Z, 2026-01-06T12:00:00.000000001Z) lasts 1d12h1ns, no longer than the train window 2d`},
		{"first train window holds no bar", "train=2d,test=1d", time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC), time.Time{},
			`--walk-forward train=2d,test=1d,step=1d: the first fold does not fit the data: its train window [2025-12-01T00:00:00Z, 2025-12-03T00:00:00Z) holds no bar (the first is at 2026-01-05T00:00:00Z)`},
		{"too many folds", "train=1h,test=1s", time.Time{}, time.Time{},
			`--walk-forward train=1h,test=1s,step=1s: 601200 folds, more than 10000: steps of 1s over the data window [2026-01-05T00:00:00Z, 2026-01-12T00:00:00Z) (1w): use a longer step`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustSpec(t, Flags{WalkForward: tc.wf}, manifest)
			folds, err := s.WalkForward().Folds(week, tc.from, tc.to)
			assertUsage(t, err, tc.want)
			if folds != nil {
				t.Fatalf("refused folds %v", folds)
			}
		})
	}
	// The spec's folds echo the walk-forward as the user typed it, not
	// in String's form (train=1w1d,test=1d,step=1d); the reason says the
	// windows it makes.
	s = mustSpec(t, Flags{WalkForward: "test=1d,train=8d"}, manifest)
	_, err = s.Folds(week, time.Time{}, time.Time{})
	assertUsage(t, err, `--walk-forward test=1d,train=8d: the first fold does not fit the data: the data window [2026-01-05T00:00:00Z, 2026-01-12T00:00:00Z) lasts 1w, no longer than the train window 1w1d`)
	s = mustSpec(t, Flags{WalkForward: "test=1d,train=2d"}, manifest)
	folds, err := s.Folds(Bars{First: week.First, Last: week.Last, Interval: time.Minute}, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	check := s.WindowCheck(folds)
	check.See(week.First.UnixNano())
	assertUsage(t, check.Err(), `--walk-forward test=1d,train=2d: fold 0's test window [2026-01-07T00:00:00Z, 2026-01-08T00:00:00Z) holds no bar: `+
		`every fold's train and test windows must hold bars (a gap in the data, such as a weekend, needs windows or a step that span it)`)
	// A restored spec's are the document's.
	r, err := RestoreSpec(roundTrip(t, s.Doc()), manifest)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Folds(week, time.Time{}, week.First.Add(time.Hour))
	assertUsage(t, err, `spec.walk_forward train=2d,test=1d,step=1d: the first fold does not fit the data: the data window [2026-01-05T00:00:00Z, 2026-01-05T01:00:00.000000001Z) lasts 1h1ns, no longer than the train window 2d`)

	_, err = DataWindow(Bars{First: week.First, Last: week.First}, time.Time{}, time.Time{})
	assertUsage(t, err, `--walk-forward: the data's bar interval is unknown (a single timestamp): a walk-forward needs bars at two times at least`)
	_, err = DataWindow(Bars{}, time.Time{}, time.Time{})
	assertUsage(t, err, `--walk-forward: no bars in the data window`)
}

func mustSpec(t *testing.T, f Flags, declared map[string]any) *Spec {
	t.Helper()
	s, err := ParseSpec(f, declared)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustPlan(t *testing.T, s *Spec) *Plan {
	t.Helper()
	p, err := s.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// planned lists a plan's combinations as "index:params".
func planned(p *Plan) []string {
	var out []string
	for c := range p.All(context.Background()) {
		out = append(out, formatCombination(c))
	}
	return out
}

func formatCombination(c Combination) string {
	return strings.TrimSpace(strings.Join([]string{itoa(c.Index) + ":", c.Params.String()}, " "))
}

func itoa(i int64) string { return formatArg(i) }

func TestGridOrderLastFastest(t *testing.T) {
	s := mustSpec(t, Flags{Grid: []string{"fast=5,10", "mode=ema,sma,wma", "trend=yes,no"}}, manifest)
	if s.Size() != 12 {
		t.Fatalf("size %d, want 12", s.Size())
	}
	got := planned(mustPlan(t, s))
	want := []string{
		"0: fast=5, mode=ema, trend=true", "1: fast=5, mode=ema, trend=false",
		"2: fast=5, mode=sma, trend=true", "3: fast=5, mode=sma, trend=false",
		"4: fast=5, mode=wma, trend=true", "5: fast=5, mode=wma, trend=false",
		"6: fast=10, mode=ema, trend=true", "7: fast=10, mode=ema, trend=false",
		"8: fast=10, mode=sma, trend=true", "9: fast=10, mode=sma, trend=false",
		"10: fast=10, mode=wma, trend=true", "11: fast=10, mode=wma, trend=false",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("combinations\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, w := range want {
		if g := formatCombination(s.At(int64(i))); g != w {
			t.Fatalf("At(%d) = %s, want %s", i, g, w)
		}
	}
	// No --grid: one combination, the defaults.
	one := mustPlan(t, mustSpec(t, Flags{}, manifest))
	if got := planned(one); !slices.Equal(got, []string{"0:"}) || one.Len() != 1 {
		t.Fatalf("empty grid: %q (len %d)", got, one.Len())
	}
}

func TestValuesTypedLikeParam(t *testing.T) {
	s := mustSpec(t, Flags{
		Grid:   []string{"fast=5,7", "stop=1,0.5,2e-3", "trend=1,off", "mode=1.5,a:b:c"},
		Params: []string{"slow=60"},
	}, manifest)
	c := s.At(0)
	want := Params{{"fast", int64(5)}, {"stop", 1.0}, {"trend", true}, {"mode", "1.5"}}
	if !slices.Equal(c.Params, want) {
		t.Fatalf("At(0) = %#v, want %#v", c.Params, want)
	}
	if g := s.Grid()[3].Values; !slices.Equal(g, []any{"1.5", "a:b:c"}) {
		t.Fatalf("str values %#v: a str param reads a:b:c as a value", g)
	}
	if g := s.Grid()[1].Values; !slices.Equal(g, []any{1.0, 0.5, 0.002}) {
		t.Fatalf("float values %#v", g)
	}
	// The run's --param arguments type back to the same values: a float
	// always looks like one.
	args := s.Args(c)
	if want := []string{"slow=60", "fast=5", "stop=1.0", "trend=true", "mode=1.5"}; !slices.Equal(args, want) {
		t.Fatalf("args %q, want %q", args, want)
	}
	if !slices.Equal(s.Fixed(), Params{{"slow", int64(60)}}) {
		t.Fatalf("fixed %v", s.Fixed())
	}
}

func TestValuesTypedByLook(t *testing.T) {
	// The MANIFEST declares no params: any name, each value typed by its
	// look, as --param types it.
	s := mustSpec(t, Flags{Grid: []string{"n=1,2.5,x,true,True", "r=1:2:0.5", "k=1:3:1", "t=10:30:xx"}}, nil)
	want := []Axis{
		{"n", []any{int64(1), 2.5, "x", true, "True"}},
		{"r", []any{1.0, 1.5, 2.0}},
		{"k", []any{int64(1), int64(2), int64(3)}},
		{"t", []any{"10:30:xx"}},
	}
	for i, ax := range s.Grid() {
		if ax.Name != want[i].Name || !slices.Equal(ax.Values, want[i].Values) {
			t.Fatalf("axis %d: %#v, want %#v", i, ax, want[i])
		}
	}
	// Every value's --param text is typed back to the same value.
	for _, ax := range s.Grid() {
		for _, v := range ax.Values {
			if back := contract.GuessParam(formatArg(v)); back != v {
				t.Fatalf("%#v written %q reads back as %#v", v, formatArg(v), back)
			}
		}
	}
	// A mixed-type param works in a constraint.
	p := mustPlan(t, mustSpec(t, Flags{Grid: []string{"n=1,2.5,x"}, Constraint: "n == 1 or n == 'x'"}, nil))
	if got := planned(p); !slices.Equal(got, []string{"0: n=1", "2: n=x"}) {
		t.Fatalf("mixed constraint: %q", got)
	}
}

func TestFloatRangeEdges(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want []any
	}{
		// HI on the step is included, and values are the decimals written.
		{"stop=0:1:0.1", []any{0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0}},
		{"stop=0.1:0.3:0.1", []any{0.1, 0.2, 0.3}},
		// HI off the step is not included; the last value stays below it.
		{"stop=0:1:0.3", []any{0.0, 0.3, 0.6, 0.9}},
		{"stop=0:0.95:0.1", []any{0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}},
		// Within 1e-9 relative of a whole number of steps: HI included, exactly.
		{"stop=0:1.0000000001:0.5", []any{0.0, 0.5, 1.0000000001}},
		// Beyond it: not.
		{"stop=0:1.00000001:0.5", []any{0.0, 0.5, 1.0}},
		{"stop=0:0.99999999:0.5", []any{0.0, 0.5}},
		{"stop=-1:1:0.5", []any{-1.0, -0.5, 0.0, 0.5, 1.0}},
		{"stop=2.5e-3:1e-2:2.5e-3", []any{0.0025, 0.005, 0.0075, 0.01}},
		{"stop=5:5:1", []any{5.0}},
		{"stop=5:5.5:1", []any{5.0}},
		// A float param takes an int-looking range as floats.
		{"stop=1:3:1", []any{1.0, 2.0, 3.0}},
		// More decimals than a float64 tells apart: computed without rounding.
		{"stop=0:3e-16:1e-16", []any{0.0, 1e-16, 2e-16, 3e-16}},
		{"fast=-3:3:2", []any{int64(-3), int64(-1), int64(1), int64(3)}},
		{"fast=1:10:4", []any{int64(1), int64(5), int64(9)}},
		{"fast=-9223372036854775808:9223372036854775807:9223372036854775807",
			[]any{int64(-9223372036854775808), int64(-1), int64(9223372036854775806)}},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			s := mustSpec(t, Flags{Grid: []string{tc.arg}}, manifest)
			if got := s.Grid()[0].Values; !slices.Equal(got, tc.want) {
				t.Fatalf("values %v, want %v", got, tc.want)
			}
		})
	}
}

func TestConstraint(t *testing.T) {
	s := mustSpec(t, Flags{
		Grid:       []string{"fast=5:20:5", "slow=10:40:10", "stop=0.01,0.1"},
		Params:     []string{"mode=sma"},
		Constraint: "fast < slow && stop < 0.05 && mode == 'sma' && trend",
	}, manifest)
	p := mustPlan(t, s)
	var got []string
	for c := range p.All(context.Background()) {
		got = append(got, formatCombination(c))
	}
	// fast < slow: 5 with 10..40 (4), 10 with 20..40 (3), 15 with 20..40
	// (3), 20 with 30, 40 (2); stop 0.01 only.
	if len(got) != 12 || p.Len() != 12 {
		t.Fatalf("%d kept (Len %d): %q", len(got), p.Len(), got)
	}
	if got[0] != "0: fast=5, slow=10, stop=0.01" || got[11] != "30: fast=20, slow=40, stop=0.01" {
		t.Fatalf("kept %q", got)
	}
	// Indices are numbered before the constraint: the same combinations
	// keep their index with or without it.
	for c := range p.All(context.Background()) {
		if g, w := formatCombination(s.At(c.Index)), formatCombination(c); g != w {
			t.Fatalf("index %d is %s in the grid and %s in the plan", c.Index, g, w)
		}
	}
	// A constraint that keeps nothing leaves an empty plan.
	none := mustPlan(t, mustSpec(t, Flags{Grid: []string{"fast=5,10"}, Constraint: "fast > 100"}, manifest))
	if none.Len() != 0 || len(planned(none)) != 0 {
		t.Fatalf("empty plan: %d", none.Len())
	}
	// The defaults of params not swept are variables too.
	def := mustPlan(t, mustSpec(t, Flags{Grid: []string{"fast=40,60"}, Constraint: "fast < slow"}, manifest))
	if got := planned(def); !slices.Equal(got, []string{"0: fast=40"}) {
		t.Fatalf("against the default slow=50: %q", got)
	}
}

func TestRandomSampling(t *testing.T) {
	flags := Flags{Grid: []string{"fast=1:40:1", "slow=1:50:1"}, Constraint: "fast < slow", Random: ptr(int64(25)), Seed: 7}
	s := mustSpec(t, flags, manifest)
	p := mustPlan(t, s)
	first := planned(p)
	if len(first) != 25 || p.Len() != 25 {
		t.Fatalf("%d sampled, want 25", len(first))
	}
	// Pinned: the algorithm is documented, so the sample is the same on
	// every machine and in every version.
	var idx []int64
	for c := range p.All(context.Background()) {
		idx = append(idx, c.Index)
		if f, _ := c.Params.Get("fast"); f.(int64) >= mustGet(c.Params, "slow").(int64) {
			t.Fatalf("sampled %s against the constraint", formatCombination(c))
		}
	}
	if !slices.IsSorted(idx) {
		t.Fatalf("sample not in index order: %v", idx)
	}
	if want := bottomK(s, 7, 25); !slices.Equal(idx, want) {
		t.Fatalf("sample %v, want %v", idx, want)
	}
	// The same again, and from a spec rebuilt from its document.
	if again := planned(mustPlan(t, mustSpec(t, flags, manifest))); !slices.Equal(again, first) {
		t.Fatalf("second sample %q, first %q", again, first)
	}
	restored, err := RestoreSpec(roundTrip(t, s.Doc()), manifest)
	if err != nil {
		t.Fatal(err)
	}
	if again := planned(mustPlan(t, restored)); !slices.Equal(again, first) {
		t.Fatalf("restored sample %q, first %q", again, first)
	}
	// Another seed, another sample; a larger N contains the smaller one.
	other := flags
	other.Seed = 8
	if s8 := planned(mustPlan(t, mustSpec(t, other, manifest))); slices.Equal(s8, first) {
		t.Fatal("seed 8 sampled what seed 7 did")
	}
	larger := flags
	larger.Random = ptr(int64(100))
	big := planned(mustPlan(t, mustSpec(t, larger, manifest)))
	for _, c := range first {
		if !slices.Contains(big, c) {
			t.Fatalf("the sample of 100 lacks %s of the sample of 25", c)
		}
	}
	// N beyond what the constraint keeps: all of them.
	all := flags
	all.Random = ptr(int64(5000))
	kept := Flags{Grid: flags.Grid, Constraint: flags.Constraint}
	if a, k := planned(mustPlan(t, mustSpec(t, all, manifest))), planned(mustPlan(t, mustSpec(t, kept, manifest))); !slices.Equal(a, k) || len(k) != 1180 {
		t.Fatalf("random 5000 ran %d, the constraint keeps %d", len(a), len(k))
	}
	fewer := flags
	fewer.Random = ptr(int64(1500))
	if n := mustPlan(t, mustSpec(t, fewer, manifest)).Len(); n != 1180 {
		t.Fatalf("random 1500 of 1180 kept: %d", n)
	}
}

func mustGet(p Params, name string) any {
	v, _ := p.Get(name)
	return v
}

// bottomK is the documented sampling, written plainly: sort every kept
// index by its key and take the first n.
func bottomK(s *Spec, seed int64, n int) []int64 {
	ev := s.newEvaluator()
	var kept []int64
	for i := range s.Size() {
		if ok, _ := ev.keep(i); ok {
			kept = append(kept, i)
		}
	}
	slices.SortFunc(kept, func(a, b int64) int {
		ka, kb := splitmix64Output(uint64(seed), a+1), splitmix64Output(uint64(seed), b+1)
		switch {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return int(a - b)
	})
	kept = kept[:min(n, len(kept))]
	slices.Sort(kept)
	return kept
}

// splitmix64Output is the n-th output (from 1) of SplitMix64 seeded with
// seed, by running the generator.
func splitmix64Output(seed uint64, n int64) uint64 {
	state := seed
	var z uint64
	for range n {
		state += 0x9E3779B97F4A7C15
		z = state
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		z ^= z >> 31
	}
	return z
}

func TestSampleKeyIsSplitMix64(t *testing.T) {
	// The published first output of SplitMix64 seeded with 0 (as in
	// Vigna's reference implementation, splitmix64.c).
	if k := sampleKey(0, 0); k != 0xE220A8397B1DCDAF {
		t.Fatalf("sampleKey(0, 0) = %#x, want 0xe220a8397b1dcdaf", k)
	}
	for _, seed := range []uint64{0, 1, 1 << 63, ^uint64(0)} {
		for i := range int64(5) {
			if a, b := sampleKey(seed, i), splitmix64Output(seed, i+1); a != b {
				t.Fatalf("seed %d index %d: %#x, generator %#x", seed, i, a, b)
			}
		}
	}
	// A negative seed is its two's complement.
	s := mustSpec(t, Flags{Grid: []string{"fast=1:30:1"}, Random: ptr(int64(3)), Seed: -1}, manifest)
	if got, want := planned(mustPlan(t, s)), bottomK(s, -1, 3); len(got) != 3 || got[0] != formatCombination(s.At(want[0])) {
		t.Fatalf("seed -1: %q, want indices %v", got, want)
	}
}

func TestPlanHonoursContext(t *testing.T) {
	s := mustSpec(t, Flags{Grid: []string{"fast=1:1000:1", "slow=1:1000:1"}, Constraint: "fast < slow"}, manifest)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Plan(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Plan with a cancelled context: %v", err)
	}
}

// TestPlanAllEndsWithItsContext: the plan stops yielding once its context
// ends, also while the constraint drops every combination between the
// last one yielded and the next it keeps; with --random, at the next one.
func TestPlanAllEndsWithItsContext(t *testing.T) {
	for _, flags := range []Flags{
		{Grid: []string{"fast=1:1000:1", "slow=1:1000:1"}, Constraint: "fast == 1 && slow == 1 || fast == 1000 && slow == 1000"},
		{Grid: []string{"fast=1:1000:1", "slow=1:1000:1"}, Constraint: "fast == 1 || fast == 1000", Random: ptr(int64(5)), Seed: 1},
	} {
		p := mustPlan(t, mustSpec(t, flags, manifest))
		var all []int64
		for c := range p.All(context.Background()) {
			all = append(all, c.Index)
		}
		if len(all) < 2 || all[len(all)-1] < 999_000 {
			t.Fatalf("%v: the plan yields %v; want a first combination and one from the end", flags, all)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var got []int64
		for c := range p.All(ctx) {
			got = append(got, c.Index)
			cancel()
		}
		cancel()
		if !slices.Equal(got, all[:1]) {
			t.Fatalf("%v: cancelled after the first, the plan yielded %v", flags, got)
		}
	}
}

func TestLargeGridIsLazy(t *testing.T) {
	// A million combinations cost no memory up front, and the plan walks
	// them in order.
	s := mustSpec(t, Flags{Grid: []string{"fast=1:1000:1", "slow=1:1000:1"}}, manifest)
	p := mustPlan(t, s)
	if p.Len() != 1_000_000 {
		t.Fatalf("len %d", p.Len())
	}
	n := int64(0)
	for c := range p.All(context.Background()) {
		if c.Index != n {
			t.Fatalf("combination %d at position %d", c.Index, n)
		}
		n++
		if n == 2001 {
			break
		}
	}
	if got := formatCombination(s.At(999_999)); got != "999999: fast=1000, slow=1000" {
		t.Fatalf("last combination %s", got)
	}
}

func TestRestoreSpec(t *testing.T) {
	s := mustSpec(t, Flags{
		Grid:        []string{"stop=0:1:0.25", "fast=5,10", "mode=ema,sma"},
		Params:      []string{"slow=60", "trend=no"},
		Constraint:  "fast < slow",
		Random:      ptr(int64(4)),
		Seed:        3,
		Metric:      "total_return",
		Minimize:    true,
		WalkForward: "train=2d,test=1d,anchored",
	}, manifest)
	doc := roundTrip(t, s.Doc())
	r, err := RestoreSpec(doc, manifest)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := planned(mustPlan(t, r)), planned(mustPlan(t, s)); !slices.Equal(got, want) {
		t.Fatalf("restored plan %q, want %q", got, want)
	}
	if r.Objective() != (Objective{"total_return", true}) || *r.WalkForward() != *s.WalkForward() || !slices.Equal(r.Fixed(), s.Fixed()) {
		t.Fatalf("restored %+v", r)
	}
	// The MANIFEST changed under the sweep: refused.
	changed := map[string]any{"fast": int64(10), "slow": int64(50), "stop": int64(0), "trend": true, "mode": "ema"}
	_, err = RestoreSpec(doc, changed)
	assertUsage(t, err, `spec.grid stop: the sweep's spec has the float value 0.0 where the param takes an int`)
	_, err = RestoreSpec(doc, map[string]any{"fast": int64(1)})
	assertUsage(t, err, `spec.params slow: the strategy's MANIFEST declares no param "slow" (declared: fast); the sweep's spec has it`)
	// A value of the document that is no good is named as its field (the
	// user gave no such flag), in the plan's refusals too.
	bad := doc
	bad.Metric = "nonsense"
	_, err = RestoreSpec(bad, manifest)
	assertUsage(t, err, "spec.metric nonsense: not a metric of the job report (metrics: "+strings.Join(MetricKeys(), ", ")+")")
	bad = doc
	bad.Random = ptr(int64(0))
	_, err = RestoreSpec(bad, manifest)
	assertUsage(t, err, "spec.random 0: want the number of combinations to run, 1 or more")
	bad = doc
	bad.Constraint = ptr("fast <")
	_, err = RestoreSpec(bad, manifest)
	var ue *UsageError
	if !errors.As(err, &ue) || ue.Field != FieldConstraint || !ue.Saved || !strings.HasPrefix(ue.Error(), "spec.constraint ") {
		t.Fatalf("a constraint that does not parse: %v", err)
	}
	bad = doc
	bad.Constraint, bad.Random = ptr("fast % (fast - 5) == 0"), nil
	r, err = RestoreSpec(bad, manifest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Plan(context.Background()); !errors.As(err, &ue) || ue.Field != FieldConstraint || !ue.Saved {
		t.Fatalf("a constraint that fails on a combination: %v", err)
	}
}

// roundTrip writes v as JSON and reads it back.
func roundTrip[T any](t *testing.T, v T) T {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back T
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("read back %s: %v", data, err)
	}
	return back
}

// TestCheckPrior: a resume's kept results must be runs of the plan as it
// is: the params the plan has at their index, an index the plan runs, the
// folds the spec makes, and each fold's test run its best train run's.
func TestCheckPrior(t *testing.T) {
	const path = "/h/sweeps/sw-1/results.jsonl"
	const hint = ": the sweep's spec (sweep.json) or its results were edited since these runs ran; a resume would mix runs of two plans: start a new sweep"
	plain := mustSpec(t, Flags{Grid: []string{"fast=1,2,3"}, Constraint: "fast != 2"}, manifest)
	doc := &Document{SweepID: "sw-1"}
	check := func(s *Spec, folds []Fold, prior ...Result) error {
		t.Helper()
		return CheckPrior(doc, path, s, mustPlan(t, s), folds, prior)
	}
	run := func(index, fast int64) Result {
		r := passed(index, 1)
		r.Params = Params{{"fast", fast}}
		return r
	}
	if err := check(plain, nil, run(0, 1), run(2, 3)); err != nil {
		t.Fatalf("the plan's own runs: %v", err)
	}
	for _, tc := range []struct {
		name  string
		prior []Result
		want  string
	}{
		{"other params", []Result{run(0, 1), run(2, 2)}, "line 2: index 2 ran fast=2, and the sweep's plan has fast=3 at index 2"},
		{"a float for an int", []Result{{Index: 0, Params: Params{{"fast", 1.0}}, Status: RunPassed}},
			"line 1: index 0 ran fast=1.0, and the sweep's plan has fast=1 at index 0"},
		{"past the grid", []Result{run(3, 4)}, "line 1: index 3 (fast=4) is past the grid's 3 combinations"},
		{"left out by the constraint", []Result{run(1, 2)}, "line 1: index 1 (fast=2) is not in the sweep's plan (its constraint or sample leaves it out)"},
		{"a fold in a plain sweep", []Result{wfResult(0, PhaseTrain, 0, RunPassed, 1, 0.1)},
			"line 1: fold 0, phase train, index 0 is a walk-forward run, and the sweep has no walk-forward"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertUsage(t, check(plain, nil, tc.prior...), "--resume sw-1: "+path+" "+tc.want+hint)
		})
	}

	wf := mustSpec(t, Flags{Grid: []string{"fast=0,1"}, WalkForward: "train=2d,test=1d"}, manifest)
	folds, err := wf.WalkForward().Folds(week, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// Fold 0 ran both train runs (fast=1 ranks best) and its test run.
	fold0 := []Result{wfResult(0, PhaseTrain, 0, RunPassed, 1, 0.1), wfResult(0, PhaseTrain, 1, RunPassed, 2, 0.1),
		wfResult(0, PhaseTest, 1, RunPassed, 1, 0.1)}
	doc.WalkForward = &WalkForwardResult{}
	for _, f := range folds {
		doc.WalkForward.Folds = append(doc.WalkForward.Folds, FoldResult{Train: f.Train, Test: f.Test})
	}
	if err := check(wf, folds, fold0...); err != nil {
		t.Fatalf("the walk-forward's own runs: %v", err)
	}
	assertUsage(t, check(plain, nil, fold0...), "--resume sw-1: "+path+" line 1: fold 0, phase train, index 0 is a walk-forward run, and the sweep has no walk-forward"+hint)
	// The objective edited to total_return, on which fast=0 ranks first
	// (a tie, to the lower index).
	byReturn := mustSpec(t, Flags{Grid: []string{"fast=0,1"}, WalkForward: "train=2d,test=1d", Metric: "total_return", Minimize: true}, manifest)
	assertUsage(t, check(byReturn, folds, fold0...), "--resume sw-1: "+path+
		" line 3: fold 0's test run is of index 1 (fast=1), and the objective (total_return, minimized) ranks index 0 (fast=0) best"+hint)
	// The folds the results ran on are not the spec's now.
	longer := mustSpec(t, Flags{Grid: []string{"fast=0,1"}, WalkForward: "train=3d,test=1d"}, manifest)
	longerFolds, err := longer.WalkForward().Folds(week, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	assertUsage(t, check(longer, longerFolds, fold0...), "--resume sw-1: fold 0 ran on train [2026-01-05T00:00:00Z, 2026-01-07T00:00:00Z) "+
		"and test [2026-01-07T00:00:00Z, 2026-01-08T00:00:00Z) (sweep.json walk_forward.folds), and the sweep's walk-forward now makes "+
		"train [2026-01-05T00:00:00Z, 2026-01-08T00:00:00Z) and test [2026-01-08T00:00:00Z, 2026-01-09T00:00:00Z)"+hint)
}

// TestJobsAreBounded: --jobs (and a resumed document's spec.jobs) takes 0
// to MaxJobs, and a local pool runs no more slots than runs are left, nor
// than LocalSlotsPerCPU a CPU.
func TestJobsAreBounded(t *testing.T) {
	for _, jobs := range []int{0, 1, MaxJobs} {
		if err := CheckJobs(jobs); err != nil {
			t.Errorf("CheckJobs(%d): %v", jobs, err)
		}
	}
	for _, jobs := range []int{-1, MaxJobs + 1, 1_000_000, 1 << 62} {
		var ue *UsageError
		if err := CheckJobs(jobs); !errors.As(err, &ue) || ue.Field != FieldJobs || !strings.Contains(ue.Reason, "4096") {
			t.Errorf("CheckJobs(%d): %v, want a UsageError of the jobs naming the bound", jobs, err)
		}
	}
	for _, tc := range []struct {
		jobs int
		left int64
		cpus int
		want int
	}{{4096, 2, 2, 2}, {2, 100, 2, 2}, {8, 0, 2, 1}, {1, 1, 2, 1}, {MaxJobs, 1 << 40, 2, 128}, {200, 1000, 2, 128},
		{MaxJobs, 1 << 40, 64, MaxJobs}, {300, 1000, 0, 64}} {
		if got := Slots(tc.jobs, tc.left, tc.cpus); got != tc.want {
			t.Errorf("Slots(%d, %d, %d CPUs) = %d, want %d", tc.jobs, tc.left, tc.cpus, got, tc.want)
		}
	}
}

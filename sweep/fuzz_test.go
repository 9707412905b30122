package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"stratbench/contract"
)

// fuzzDeclared picks the MANIFEST a fuzzed --grid is checked against.
func fuzzDeclared(kind uint8) map[string]any {
	switch kind % 5 {
	case 0:
		return nil // typed by look
	case 1:
		return map[string]any{"p": int64(1)}
	case 2:
		return map[string]any{"p": 0.5}
	case 3:
		return map[string]any{"p": true}
	}
	return map[string]any{"p": "s"}
}

func FuzzParseGrid(f *testing.F) {
	for _, seed := range []string{"p=1,2,3", "p=0:1:0.1", "p=1:10:3", "p=-5:5:2.5", "p=a:b:c", "p=1e300:1e301:1e299",
		"p=0:1:1e-7", "p=true,no", "p=", "p=1,1.0", "p=0x10:0x20:0x1", "p=9223372036854775806:9223372036854775807:1",
		"q=1", "p=1:2", "p=.5:5.:.5", "p=1_0:20:1", "p=0:1:0.3333333333333333"} {
		for kind := range uint8(5) {
			f.Add(seed, kind)
		}
	}
	f.Fuzz(func(t *testing.T, arg string, kind uint8) {
		declared := fuzzDeclared(kind)
		ax, err := parseAxis(arg, declared)
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) || ue.Field != FieldGrid {
				t.Fatalf("%q: error %v (%T), want a *UsageError", arg, err, err)
			}
			return
		}
		if len(ax.Values) == 0 || len(ax.Values) > MaxAxisValues {
			t.Fatalf("%q: %d values", arg, len(ax.Values))
		}
		if _, _, dup := firstRepeat(ax.Values); dup {
			t.Fatalf("%q: a value repeats: %v", arg, ax.Values)
		}
		def := declared[ax.Name]
		for _, v := range ax.Values {
			if def != nil && typeName(v) != typeName(def) {
				t.Fatalf("%q: %#v for a %s param", arg, v, typeName(def))
			}
			if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
				t.Fatalf("%q: %v", arg, f)
			}
			// What the run is given types back to the value, as --param
			// types it.
			text := formatArg(v)
			back := contract.GuessParam(text)
			if def != nil {
				if back, err = contract.ParseParam(def, text); err != nil {
					t.Fatalf("%q: %#v written %q does not parse: %v", arg, v, text, err)
				}
			}
			if back != v {
				t.Fatalf("%q: %#v written %q reads back as %#v", arg, v, text, back)
			}
		}
		// A range is ascending, from LO, and never past HI.
		if lo, hi, step, ok := rangeParts(strings.SplitN(arg, "=", 2)[1]); ok && (def != nil || looksNumeric(lo, hi, step)) {
			if _, isStr := def.(string); !isStr {
				checkRange(t, arg, ax.Values, lo, hi)
			}
		}
		// The grid survives the document.
		g := roundTrip(t, Grid{ax})
		if len(g) != 1 || g[0].Name != ax.Name || !slices.Equal(g[0].Values, ax.Values) {
			t.Fatalf("%q: grid read back %#v, want %#v", arg, g, ax)
		}
	})
}

func checkRange(t *testing.T, arg string, values []any, loText, hiText string) {
	t.Helper()
	num := func(v any) float64 {
		switch v := v.(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		}
		t.Fatalf("%q: range value %#v", arg, v)
		return 0
	}
	lo, hi := contract.GuessParam(loText), contract.GuessParam(hiText)
	if values[0] != lo && num(values[0]) != num(lo) {
		t.Fatalf("%q: starts at %v", arg, values[0])
	}
	for i, v := range values {
		if num(v) > num(hi) {
			t.Fatalf("%q: value %v past HI", arg, v)
		}
		if i > 0 && !(num(v) > num(values[i-1])) {
			if a, b := values[i-1], v; a != b {
				// Distinct int64s beyond 2^53 may look equal as floats.
				if _, isInt := v.(int64); isInt && v.(int64) > a.(int64) {
					continue
				}
			}
			t.Fatalf("%q: not ascending at %d: %v", arg, i, values)
		}
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30m", "12h", "5d", "2w", "1d12h", "1.5h", ".5w", "1m0.5s", "250ms", "3µs", "1ns", "15250w", "0s",
		"1y", "-1d", "1.2.3d", "9223372036854775807ns", "1e3s", "5", "d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if d <= 0 {
			t.Fatalf("%q: %v", s, d)
		}
		text := FormatDuration(d)
		back, err := ParseDuration(text)
		if err != nil || back != d {
			t.Fatalf("%q = %v, written %q, reads back as %v (%v)", s, d, text, back, err)
		}
	})
}

func FuzzWalkForward(f *testing.F) {
	for _, s := range []string{"train=2d,test=1d", "train=2d,test=1d,anchored", "train=1d,test=12h,step=2d", "train=36h,test=1d,step=30h,anchored",
		"test=1d,train=6d23h", "train=7d,test=1d", "train=1h,test=1s", "train=2d,test=1d,step=12h", "anchored", "train=,test=1d"} {
		f.Add(s, int64(0), int64(0))
		f.Add(s, int64(36*time.Hour), int64(3*Day))
	}
	f.Fuzz(func(t *testing.T, arg string, fromOffset, toOffset int64) {
		wf, err := ParseWalkForward(arg)
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("%q: %v (%T)", arg, err, err)
			}
			return
		}
		if wf.Train <= 0 || wf.Test <= 0 || wf.Step < wf.Test {
			t.Fatalf("%q: %+v", arg, wf)
		}
		if again, err := ParseWalkForward(wf.String()); err != nil || again != wf {
			t.Fatalf("%q: %s reads back as %+v (%v)", arg, wf, again, err)
		}
		var from, to time.Time
		if fromOffset != 0 {
			from = week.First.Add(time.Duration(fromOffset % int64(10*Day)))
		}
		if toOffset != 0 {
			to = week.First.Add(time.Duration(toOffset % int64(10*Day)))
		}
		folds, err := wf.Folds(week, from, to)
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("%q: %v (%T)", arg, err, err)
			}
			return
		}
		checkTiling(t, wf.String(), week, from, to, folds)
	})
}

func FuzzReadResults(f *testing.F) {
	f.Add([]byte(line(passed(0, 1)) + "\n" + line(failed(1)) + "\n"))
	f.Add([]byte(line(wfResult(0, PhaseTrain, 3, RunPassed, 1, 0.1)) + "\n" + line(passed(0, 1))[:20]))
	f.Add([]byte(`{"index":1,"params":{"a":1.0,"b":"x","c":true},"status":"passed"}` + "\n"))
	f.Add([]byte("\n\n{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rb, err := scanResults(bytes.NewReader(data), "results.jsonl", -1)
		if err != nil {
			return
		}
		if rb.size+rb.Dropped != int64(len(data)) {
			t.Fatalf("%d bytes of lines and %d dropped of %d", rb.size, rb.Dropped, len(data))
		}
		seen := map[resultKey]bool{}
		for _, r := range rb.Results {
			if err := r.check(); err != nil {
				t.Fatalf("read back a bad result %+v: %v", r, err)
			}
			if seen[r.key()] {
				t.Fatalf("%s twice", r.key())
			}
			seen[r.key()] = true
			// What was read writes again as a line that reads the same.
			text, err := json.Marshal(r)
			if err != nil {
				t.Fatalf("%+v: %v", r, err)
			}
			var again Result
			if err := json.Unmarshal(text, &again); err != nil {
				t.Fatalf("%s: %v", text, err)
			}
			if text2, _ := json.Marshal(again); !bytes.Equal(text, text2) {
				t.Fatalf("%s\nbecame\n%s", text, text2)
			}
		}
	})
}

func FuzzConstraintPlan(f *testing.F) {
	for _, s := range []string{"fast < slow", "fast % 3 == 0", "stop * 10 > fast", "mode == 'sma' or trend", "fast / (slow - 60) > 0",
		"fast % (slow - 60) == 0", "len(mode) > 2", "fast", "1..10 | all(# > 0)"} {
		f.Add(s, int64(3), int64(1))
	}
	f.Fuzz(func(t *testing.T, constraint string, random, seed int64) {
		flags := Flags{Grid: []string{"fast=5:50:15", "slow=50,60", "stop=0.1,0.2", "mode=sma,ema"}, Constraint: constraint, Seed: seed}
		if random > 0 {
			r := random % 40
			flags.Random = &r
		}
		s, err := ParseSpec(flags, manifest)
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("%q: %v (%T)", constraint, err, err)
			}
			return
		}
		p, err := s.Plan(context.Background())
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("%q: %v (%T)", constraint, err, err)
			}
			return
		}
		n := int64(0)
		last := int64(-1)
		for c := range p.All(context.Background()) {
			if c.Index <= last {
				t.Fatalf("%q: index %d after %d", constraint, c.Index, last)
			}
			last = c.Index
			n++
		}
		if n != p.Len() {
			t.Fatalf("%q: %d combinations, Len %d", constraint, n, p.Len())
		}
	})
}

// FuzzLoadDocument: whatever a sweep folder's sweep.json holds, Load
// returns the document of the folder's sweep or a DocumentError, never a
// document of another id.
func FuzzLoadDocument(f *testing.F) {
	const id = "sw-20260105-093000.000-1a2b"
	f.Add([]byte(`{"sweep_id":"` + id + `","status":"passed","spec":{"grid":{"fast":[1,2]},"jobs":2}}`))
	f.Add([]byte(`{"sweep_id":"` + id + `","status":"running","spec":{"jobs":1e9}}`))
	f.Add([]byte(`{"sweep_id":"` + id + `","spec":{"jobs":-1}}`))
	f.Add([]byte(`{"sweep_id":"` + id + `","spec":{"jobs":1.5}}`))
	f.Add([]byte(`{"sweep_id":"` + id + `","spec":{"jobs":"x"}}`))
	f.Add([]byte(`{"sweep_id":"../../victim"}`))
	f.Add([]byte(`{"sweep_id":".."}`))
	f.Add([]byte(`{}`))
	store, err := OpenStore(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	dir := store.Dir(id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, DocumentFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		doc, err := store.Load(id)
		var de *DocumentError
		switch {
		case err == nil && doc.SweepID != id:
			t.Fatalf("loaded the document of %q from the folder of %s", doc.SweepID, id)
		case err != nil && !errors.As(err, &de):
			t.Fatalf("an error that is not a DocumentError: %v", err)
		}
	})
}

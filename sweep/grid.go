package sweep

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"stratbench/contract"
)

// MaxAxisValues is the most values one --grid param may take. It bounds
// the sweep document, which lists every value.
const MaxAxisValues = 1_000_000

// MaxCombinations is the most combinations a grid may have. Sampling and
// constraints look at every combination once before any run, and a sweep
// of more runs than this would not finish on any machine.
const MaxCombinations = 1_000_000_000

// rangeTolerance is how close, relative to the number of steps, HI must
// lie to a step of an inclusive range to be its last value.
const rangeTolerance = 1e-9

// Axis is one swept param: its name and its values, in the order given
// (a range's ascending).
type Axis struct {
	Name string
	// Values are int64, float64, bool or string values, each distinct.
	Values []any
}

// Grid is the swept params in the order of their --grid flags: the last
// varies fastest. In JSON it is an object of value arrays in that order.
type Grid []Axis

// MarshalJSON writes g as {"name": [values...], ...} in grid order.
func (g Grid) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, ax := range g {
		if i > 0 {
			b = append(b, ',')
		}
		name, err := json.Marshal(ax.Name)
		if err != nil {
			return nil, err
		}
		b = append(append(b, name...), ':', '[')
		for j, v := range ax.Values {
			if j > 0 {
				b = append(b, ',')
			}
			if b, err = appendValueJSON(b, v); err != nil {
				return nil, fmt.Errorf("grid %s: %w", ax.Name, err)
			}
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads a grid written by MarshalJSON, keeping its order.
func (g *Grid) UnmarshalJSON(data []byte) error {
	out := Grid{}
	err := decodeObject(data, func(name string, raw json.RawMessage) error {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("grid %s: %w", name, err)
		}
		ax := Axis{Name: name, Values: make([]any, len(items))}
		for i, item := range items {
			v, err := decodeValue(item)
			if err != nil {
				return fmt.Errorf("grid %s: %w", name, err)
			}
			ax.Values[i] = v
		}
		out = append(out, ax)
		return nil
	})
	if err != nil {
		return err
	}
	*g = out
	return nil
}

// gridForms is the usage of --grid, for messages.
const gridForms = "want NAME=V1,V2,... or NAME=LO:HI:STEP"

// parseAxis parses one --grid argument. declared holds the MANIFEST's
// defaults; when it is empty any name is taken and values are typed by
// their look.
func parseAxis(arg string, declared map[string]any) (Axis, error) {
	name, text, ok := strings.Cut(arg, "=")
	if !ok || name == "" {
		return Axis{}, usage(FieldGrid, arg, gridForms)
	}
	if !utf8.ValidString(arg) {
		// The sweep document could not keep it (nor could the run's JSON).
		return Axis{}, usage(FieldGrid, arg, "not valid UTF-8")
	}
	def, isDeclared := declared[name]
	if !isDeclared && len(declared) > 0 {
		return Axis{}, usage(FieldGrid, arg, undeclaredReason(name, declared))
	}
	fail := func(format string, a ...any) (Axis, error) {
		reason := fmt.Sprintf(format, a...)
		if isDeclared {
			reason += fmt.Sprintf(" (the default is %v)", formatArg(def))
		}
		return Axis{}, usage(FieldGrid, arg, reason)
	}
	if lo, hi, step, ok := rangeParts(text); ok && (isDeclared || looksNumeric(lo, hi, step)) {
		switch def.(type) {
		case int64, float64, nil:
			values, err := parseRange(def, lo, hi, step)
			if err != nil {
				return fail("%s", err.Error())
			}
			if j, dup := rangeRepeat(values); dup {
				return fail("the range repeats the value %s: its step is below the precision of a float of that size", formatArg(values[j]))
			}
			return Axis{Name: name, Values: values}, nil
		case bool:
			return fail("%s is a bool param: a range LO:HI:STEP needs an int or float param", name)
		}
		// A str param takes "a:b:c" as one value.
	}
	texts := strings.Split(text, ",")
	if len(texts) > MaxAxisValues {
		return fail("%d values, more than the %d one param may take", len(texts), MaxAxisValues)
	}
	values := make([]any, len(texts))
	for i, t := range texts {
		if !isDeclared {
			values[i] = contract.GuessParam(t)
			continue
		}
		v, err := contract.ParseParam(def, t)
		if err != nil {
			return fail("value %q: %v", t, err)
		}
		values[i] = v
	}
	if i, j, dup := firstRepeat(values); dup {
		if texts[i] == texts[j] {
			return fail("the value %q is given twice", texts[j])
		}
		return fail("the value %q is the same as %q", texts[j], texts[i])
	}
	return Axis{Name: name, Values: values}, nil
}

// undeclaredReason is the refusal of a param the MANIFEST does not declare
// (the wording of --param).
func undeclaredReason(name string, declared map[string]any) string {
	names := make([]string, 0, len(declared))
	for k := range declared {
		names = append(names, k)
	}
	slices.Sort(names)
	return fmt.Sprintf("the strategy's MANIFEST declares no param %q (declared: %s)", name, strings.Join(names, ", "))
}

// looksNumeric reports whether every text is a finite number: only then
// is a param typed by its look given a range ("10:30:xx" is a string).
func looksNumeric(texts ...string) bool {
	for _, t := range texts {
		switch contract.GuessParam(t).(type) {
		case int64, float64:
		default:
			return false
		}
	}
	return true
}

// rangeParts splits LO:HI:STEP; ok is false for any other form.
func rangeParts(text string) (lo, hi, step string, ok bool) {
	parts := strings.Split(text, ":")
	if len(parts) != 3 || strings.Contains(text, ",") {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// rangeRepeat finds a value of a range that repeats the one before it (j
// repeats j−1). A range's values never decrease (its step is above 0), so
// a repeat lies next to what it repeats: one pass and no set, which for a
// range of a million values took a second and 100 MiB (firstRepeat), a
// second in which nothing looked at a stop signal.
func rangeRepeat(values []any) (j int, found bool) {
	for j = 1; j < len(values); j++ {
		if values[j] == values[j-1] {
			return j, true
		}
	}
	return 0, false
}

// firstRepeat finds a value given twice (j repeats i): each combination
// of a sweep is a different run.
func firstRepeat(values []any) (i, j int, found bool) {
	seen := make(map[any]int, len(values))
	for j, v := range values {
		if i, dup := seen[v]; dup {
			return i, j, true
		}
		seen[v] = j
	}
	return 0, 0, false
}

// parseRange expands the inclusive range LO:HI:STEP for a param whose
// default is def (nil: typed by look, an int range when all three parts
// are ints, else a float range).
//
// An int range holds LO, LO+STEP, ... up to HI. A float range holds
// LO + i·STEP for i = 0, 1, ... while the value is at most HI; HI itself is
// the last value when (HI−LO)/STEP is within 1e-9 (relative) of a whole
// number of steps. Each value is rounded to the decimal places of the
// most precise of LO, HI and STEP as written, so 0:1:0.1 holds 0.3 and
// not 0.30000000000000004.
func parseRange(def any, loText, hiText, stepText string) ([]any, error) {
	isInt := false
	switch def.(type) {
	case int64:
		isInt = true
	case nil:
		_, e1 := strconv.ParseInt(loText, 10, 64)
		_, e2 := strconv.ParseInt(hiText, 10, 64)
		_, e3 := strconv.ParseInt(stepText, 10, 64)
		isInt = e1 == nil && e2 == nil && e3 == nil
	}
	if isInt {
		return intRange(loText, hiText, stepText)
	}
	return floatRange(loText, hiText, stepText)
}

func intRange(loText, hiText, stepText string) ([]any, error) {
	var ends [3]int64
	for i, t := range []string{loText, hiText, stepText} {
		v, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			if _, ferr := strconv.ParseFloat(t, 64); ferr == nil {
				return nil, fmt.Errorf("%s %q is not an int: an int param takes int ranges only", rangePartNames[i], t)
			}
			return nil, fmt.Errorf("%s %q: not an int", rangePartNames[i], t)
		}
		ends[i] = v
	}
	lo, hi, step := ends[0], ends[1], ends[2]
	if step <= 0 {
		return nil, fmt.Errorf("STEP %d: the step must be greater than 0", step)
	}
	if lo > hi {
		return nil, fmt.Errorf("empty range: LO %d is above HI %d", lo, hi)
	}
	// hi−lo fits in a uint64 whatever the ends.
	n := (uint64(hi)-uint64(lo))/uint64(step) + 1
	if n > MaxAxisValues {
		return nil, fmt.Errorf("%d values, more than the %d one param may take", n, MaxAxisValues)
	}
	values := make([]any, n)
	for i := range values {
		values[i] = lo + int64(i)*step
	}
	return values, nil
}

var rangePartNames = [3]string{"LO", "HI", "STEP"}

func floatRange(loText, hiText, stepText string) ([]any, error) {
	var ends [3]float64
	places := 0
	for i, t := range []string{loText, hiText, stepText} {
		v, err := strconv.ParseFloat(t, 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("%s %q: not a finite number", rangePartNames[i], t)
		}
		ends[i] = v
		if places >= 0 {
			if p, ok := decimalPlaces(t); ok {
				places = max(places, p)
			} else {
				places = -1 // no decimal rounding
			}
		}
	}
	lo, hi, step := ends[0], ends[1], ends[2]
	if step <= 0 {
		return nil, fmt.Errorf("STEP %s: the step must be greater than 0", stepText)
	}
	if lo > hi {
		return nil, fmt.Errorf("empty range: LO %s is above HI %s", loText, hiText)
	}
	q := (hi - lo) / step // the number of steps from LO to HI: finite or +Inf
	steps := math.Floor(q)
	k := math.Round(q)
	hiOnStep := k >= 1 && math.Abs(q-k) <= rangeTolerance*k
	if hiOnStep {
		steps = k
	}
	if steps+1 > MaxAxisValues {
		return nil, fmt.Errorf("%s values, more than the %d one param may take", countText(steps+1), MaxAxisValues)
	}
	values := make([]any, int(steps)+1)
	for i := range values {
		v := lo + float64(i)*step
		if places >= 0 {
			v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'f', places, 64), 64)
		}
		values[i] = v
	}
	if hiOnStep {
		values[len(values)-1] = hi
	}
	return values, nil
}

// countText writes a count of values that may be beyond any integer type.
func countText(n float64) string {
	if n > 1e18 {
		return "more than 10^18"
	}
	return strconv.FormatFloat(n, 'f', 0, 64)
}

// decimalPlaces returns the decimal places a number written as text
// needs (2 for "0.25", 4 for "2.5e-3", 0 for "1e3"); ok is false when
// they are not a plain count (hexadecimal floats, more than 15 places).
func decimalPlaces(t string) (int, bool) {
	t = strings.TrimLeft(t, "+-")
	if strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X") {
		return 0, false
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(t), "e")
	e := 0
	if hasExp {
		v, err := strconv.Atoi(exp)
		if err != nil || v < -400 || v > 400 {
			return 0, false
		}
		e = v
	}
	frac := 0
	if _, f, ok := strings.Cut(mant, "."); ok {
		frac = len(f)
	}
	if strings.Contains(mant, "_") {
		return 0, false
	}
	p := max(frac-e, 0)
	if p > 15 {
		return 0, false
	}
	return p, true
}

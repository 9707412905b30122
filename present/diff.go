package present

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"stratbench/contract"
	"stratbench/internal/termtext"
	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/job"
)

// DiffKind says what a row of a diff compares.
type DiffKind string

// The kinds of diff rows.
const (
	DiffRun    DiffKind = "run"    // how the job ended: status, failure
	DiffInput  DiffKind = "input"  // an input of the fingerprint (strategy, data, window, market, interpreter, version)
	DiffParam  DiffKind = "param"  // one param
	DiffHash   DiffKind = "hash"   // the fingerprint, the orders hash
	DiffMetric DiffKind = "metric" // one metric
	DiffSymbol DiffKind = "symbol" // one figure of one symbol (docs/report.md's "symbols")
)

// diffRow is one thing two jobs are compared on: one input, one param, one
// metric. A and B are the values as the reports hold them (null for one
// a report lacks); the texts are as the text outputs write them.
type diffRow struct {
	Field string   `json:"field"` // the report's key: "status", "params.fast", "metrics.sharpe"
	Kind  DiffKind `json:"kind"`
	A     any      `json:"a"`
	B     any      `json:"b"`
	Same  bool     `json:"same"`

	label        string // "param fast", "sharpe"
	aText, bText string
	symbol       string // the symbol of a DiffSymbol row
}

// jobDiff is what `status A --diff B --output json` prints.
type jobDiff struct {
	A, B string // the job ids
	// SameInputs: the fingerprints are equal; SameOrders: the orders
	// hashes are.
	SameInputs bool
	SameOrders bool
	// SameSymbols counts the symbols whose figures are the same in both:
	// Rows has a DiffSymbol row per figure of each symbol that differs.
	SameSymbols int
	Rows        []diffRow
}

// MarshalJSON writes the diff's fields in the order docs/report.md gives.
func (d jobDiff) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		A           string    `json:"a"`
		B           string    `json:"b"`
		SameInputs  bool      `json:"same_inputs"`
		SameOrders  bool      `json:"same_orders"`
		SameSymbols int       `json:"same_symbols"`
		Rows        []diffRow `json:"rows"`
	}{d.A, d.B, d.SameInputs, d.SameOrders, d.SameSymbols, d.Rows})
}

// WriteDiff writes what differs between two jobs, one row per input,
// param and metric: as text (what differs first, then what is the same),
// or as JSON (every row, with the values as the reports hold them).
func WriteDiff(w io.Writer, a, b *job.Report, format string) error {
	if format == "json" {
		return WriteJSON(w, diffJobs(a, b))
	}
	_, err := io.WriteString(w, termtext.Text(diffText(a, b)))
	return err
}

// diffJobs compares two reports row by row.
func diffJobs(a, b *job.Report) jobDiff {
	d := jobDiff{A: a.JobID, B: b.JobID, SameInputs: a.Fingerprint == b.Fingerprint,
		SameOrders: a.OrdersHash == b.OrdersHash}
	add := func(field string, kind DiffKind, label string, av, bv any, at, bt string) {
		d.Rows = append(d.Rows, diffRow{Field: field, Kind: kind, label: label, A: av, B: bv,
			Same: reflect.DeepEqual(av, bv), aText: at, bText: bt})
	}
	str := func(field string, kind DiffKind, label, av, bv string) { add(field, kind, label, av, bv, av, bv) }
	str("status", DiffRun, "status", string(a.Status), string(b.Status))
	d.Rows[len(d.Rows)-1].aText, d.Rows[len(d.Rows)-1].bText = words.JobStatus(a.Status), words.JobStatus(b.Status)
	add("failure", DiffRun, "failure", failureValue(a.Failure), failureValue(b.Failure), failureText(a.Failure), failureText(b.Failure))
	if r := &d.Rows[len(d.Rows)-1]; !r.Same && a.Failure != nil && b.Failure != nil {
		// Two failures of the same kind and hook: the messages tell them apart.
		r.aText, r.bText = r.A.(string), r.B.(string)
	}
	str("strategy.path", DiffInput, "strategy", a.Strategy.Path, b.Strategy.Path)
	add("strategy.sha256", DiffInput, "strategy sha256", a.Strategy.SHA256, b.Strategy.SHA256, short(a.Strategy.SHA256), short(b.Strategy.SHA256))
	names := slices.Sorted(maps.Keys(a.Strategy.Params))
	for k := range b.Strategy.Params {
		if _, ok := a.Strategy.Params[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		av, aok := a.Strategy.Params[k]
		bv, bok := b.Strategy.Params[k]
		at, bt := words.ParamValue(av), words.ParamValue(bv)
		if !aok {
			at = "(none)"
		}
		if !bok {
			bt = "(none)"
		}
		add("params."+k, DiffParam, "param "+k, av, bv, at, bt)
	}
	str("data.source", DiffInput, "data", a.Data.Source, b.Data.Source)
	add("data.window", DiffInput, "window", a.Data.Window, b.Data.Window, words.Window(a.Data.Window), words.Window(b.Data.Window))
	str("data.from", DiffInput, "first event", a.Data.From, b.Data.From)
	str("data.to", DiffInput, "last event", a.Data.To, b.Data.To)
	add("data.events", DiffInput, "event count", a.Data.Events, b.Data.Events, units.Count(a.Data.Events), units.Count(b.Data.Events))
	add("data.symbols", DiffInput, "symbols", a.Data.Symbols, b.Data.Symbols, strings.Join(a.Data.Symbols, ", "), strings.Join(b.Data.Symbols, ", "))
	add("market.cash", DiffInput, "cash", a.Market.Cash, b.Market.Cash, units.Money(a.Market.Cash), units.Money(b.Market.Cash))
	add("market.fee_bps", DiffInput, "fee bps", a.Market.FeeBps, b.Market.FeeBps, units.Number(a.Market.FeeBps), units.Number(b.Market.FeeBps))
	add("market.slippage_bps", DiffInput, "slippage bps", a.Market.SlippageBps, b.Market.SlippageBps,
		units.Number(a.Market.SlippageBps), units.Number(b.Market.SlippageBps))
	add("market.allow_short", DiffInput, "short selling", a.Market.AllowShort, b.Market.AllowShort, onOff(a.Market.AllowShort), onOff(b.Market.AllowShort))
	str("python.executable", DiffInput, "python", a.Python.Executable, b.Python.Executable)
	str("python.version", DiffInput, "python version", a.Python.Version, b.Python.Version)
	add("python.sandbox", DiffInput, "sandbox", a.Python.Sandbox, b.Python.Sandbox, onOff(a.Python.Sandbox), onOff(b.Python.Sandbox))
	add("stratbench_version", DiffInput, "stratbench", a.Version, b.Version, valueOr(a.Version, "-"), valueOr(b.Version, "-"))
	add("fingerprint", DiffHash, "fingerprint", a.Fingerprint, b.Fingerprint, short(a.Fingerprint), short(b.Fingerprint))
	add("orders_hash", DiffHash, "orders hash", a.OrdersHash, b.OrdersHash, short(a.OrdersHash), short(b.OrdersHash))
	if a.Metrics != nil || b.Metrics != nil {
		ma, mb := metricsByKey(a.Metrics), metricsByKey(b.Metrics)
		for _, mt := range (&contract.Metrics{}).List() {
			k := mt.Key
			x, xok := ma[k]
			y, yok := mb[k]
			var av, bv any
			at, bt := "-", "-"
			if xok {
				av, at = metricValue(a.Metrics, x), x.Text()
			}
			if yok {
				bv, bt = metricValue(b.Metrics, y), y.Text()
			}
			if xok && yok && at == bt && !reflect.DeepEqual(av, bv) {
				// Equal as printed, different as computed: say by how much.
				at += " (" + strconv.FormatFloat(x.Value, 'g', -1, 64) + ")"
				bt += " (" + strconv.FormatFloat(y.Value, 'g', -1, 64) + ")"
			}
			add("metrics."+k, DiffMetric, k, av, bv, at, bt)
		}
	}
	symbolRows(&d, a, b)
	return d
}

// metricsByKey returns m's metrics by key, or nil without metrics.
func metricsByKey(m *contract.Metrics) map[string]contract.Metric {
	if m == nil {
		return nil
	}
	out := map[string]contract.Metric{}
	for _, mt := range m.List() {
		out[mt.Key] = mt
	}
	return out
}

// metricValue is a metric's value as the report holds it: a number, or
// the positions by symbol.
func metricValue(m *contract.Metrics, mt contract.Metric) any {
	if mt.Unit == contract.UnitPositions {
		if m.Positions == nil {
			return map[string]float64{}
		}
		return m.Positions
	}
	return mt.Value
}

// diffWideValue is the widest value the text of a diff keeps in its
// column; a row with a wider one is written on lines of its own, whole.
const diffWideValue = 56

// diffText writes a diff as text: the two jobs, then a row per input,
// param and metric that differs (marked ≠), then those that are the same,
// each once; and says when identical inputs traded differently. No value
// is cut: a value too wide for the columns takes lines of its own.
func diffText(a, b *job.Report) string {
	d := diffJobs(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "A  %s  %s  %s\n", a.JobID, a.Strategy.Path, words.JobStatus(a.Status))
	fmt.Fprintf(&out, "B  %s  %s  %s\n", b.JobID, b.Strategy.Path, words.JobStatus(b.Status))
	var changed, same []diffRow
	labelW, valueW := 0, len("A")
	symbols, moreSymbols := 0, 0
	for i, r := range d.Rows {
		if r.Kind == DiffSymbol {
			// The symbols that differ, symbolsShown of them, each one's
			// figures that differ, the symbol's name clipped.
			if i == 0 || d.Rows[i-1].symbol != r.symbol {
				symbols++
			}
			if symbols > symbolsShown {
				if i == 0 || d.Rows[i-1].symbol != r.symbol {
					moreSymbols++
				}
				continue
			}
			if r.Same {
				continue
			}
			figure := strings.TrimPrefix(r.label, r.symbol+" ")
			r.label = clip(r.symbol, 19-len(figure)) + " " + figure
		}
		labelW = max(labelW, utf8.RuneCountInString(r.label))
		if r.Same {
			same = append(same, r)
			continue
		}
		changed = append(changed, r)
		if n := utf8.RuneCountInString(r.aText); n <= diffWideValue && utf8.RuneCountInString(r.bText) <= diffWideValue {
			valueW = max(valueW, n)
		}
	}
	if len(changed) > 0 {
		fmt.Fprintf(&out, "\n  %s  %s  %s\n", padRight("what differs", labelW), padRight("A", valueW), "B")
	}
	for _, r := range changed {
		if utf8.RuneCountInString(r.aText) > diffWideValue || utf8.RuneCountInString(r.bText) > diffWideValue {
			fmt.Fprintf(&out, "≠ %s\n    A  %s\n    B  %s\n", r.label, r.aText, r.bText)
			continue
		}
		fmt.Fprintf(&out, "≠ %s  %s  %s\n", padRight(r.label, labelW), padRight(r.aText, valueW), r.bText)
	}
	if moreSymbols > 0 {
		fmt.Fprintf(&out, "≠ … and %s more symbols that differ\n", units.Count(moreSymbols))
	}
	if d.SameSymbols > 0 {
		fmt.Fprintf(&out, "  %s symbols with the same fills, trades and P&L in both\n", units.Count(d.SameSymbols))
	}
	if len(same) > 0 {
		fmt.Fprintf(&out, "\n  %s\n", "the same in both")
	}
	for _, r := range same {
		fmt.Fprintf(&out, "  %s  %s\n", padRight(r.label, labelW), r.aText)
	}
	switch {
	case d.SameInputs && d.SameOrders:
		out.WriteString("\nsame inputs, same orders and fills\n")
	case d.SameInputs:
		out.WriteString("\nsame inputs, different orders or fills: the strategy is not deterministic\n")
	}
	return out.String()
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func valueOr(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

func failureText(f *contract.Failure) string {
	if f == nil {
		return "-"
	}
	return words.Where(f)
}

// failureValue is a failure as a diff's JSON compares it: its kind, hook
// and the line of its message that says most; nil for none.
func failureValue(f *contract.Failure) any {
	if f == nil {
		return nil
	}
	return words.Where(f) + ": " + words.Summary(f)
}

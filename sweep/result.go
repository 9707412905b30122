package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"stratbench/contract"
)

// RunStatus is how a run of a sweep ended: its job report's status. A
// stopped run has no result: a resumed sweep runs it again.
type RunStatus string

// Run statuses.
const (
	RunPassed RunStatus = "passed"
	RunFailed RunStatus = "failed"
)

// Phase is the part of a walk-forward fold a run belongs to: its train
// sweep or its test run. A plain sweep's runs have no phase.
type Phase string

// Phases. PhaseNone is null in JSON.
const (
	PhaseNone  Phase = ""
	PhaseTrain Phase = "train"
	PhaseTest  Phase = "test"
)

// order sorts phases: none, train, test.
func (p Phase) order() int {
	switch p {
	case PhaseTrain:
		return 1
	case PhaseTest:
		return 2
	}
	return 0
}

// Result is a finished run: one line of results.jsonl, and one entry of
// the sweep document's "runs".
type Result struct {
	// Index is the combination's number in grid order.
	Index int64

	// Fold is the walk-forward fold (from 0), nil in a plain sweep.
	Fold *int

	// Phase is the fold's phase, PhaseNone in a plain sweep.
	Phase Phase

	// Params are the combination's swept params, in grid order (the fixed
	// --param values are in the sweep's spec).
	Params Params

	// JobID is the run's job, whose folder holds its report and logs.
	JobID string

	// Status is the job report's status: RunPassed or RunFailed.
	Status RunStatus

	// FailureKind is the report's failure.kind ("timeout", "exception",
	// ...); empty for a run that passed.
	FailureKind string

	// Metrics is the report's "metrics" object, verbatim; nil is null.
	Metrics json.RawMessage

	// Fingerprint and OrdersHash are the report's, verbatim.
	Fingerprint string
	OrdersHash  string

	// DurationMS is the report's duration_ms.
	DurationMS int64
}

// resultJSON is a Result as results.jsonl writes it, in the order of the
// contract.
type resultJSON struct {
	Index       int64           `json:"index"`
	Fold        *int            `json:"fold"`
	Phase       *Phase          `json:"phase"`
	Params      Params          `json:"params"`
	JobID       string          `json:"job_id"`
	Status      RunStatus       `json:"status"`
	FailureKind *string         `json:"failure_kind"`
	Metrics     json.RawMessage `json:"metrics"`
	Fingerprint string          `json:"fingerprint"`
	OrdersHash  string          `json:"orders_hash"`
	DurationMS  int64           `json:"duration_ms"`
}

// MarshalJSON writes r as a results line (without the newline).
func (r Result) MarshalJSON() ([]byte, error) {
	w := resultJSON{Index: r.Index, Fold: r.Fold, Params: r.Params, JobID: r.JobID, Status: r.Status,
		Metrics: r.Metrics, Fingerprint: r.Fingerprint, OrdersHash: r.OrdersHash, DurationMS: r.DurationMS}
	if r.Phase != PhaseNone {
		w.Phase = &r.Phase
	}
	if r.FailureKind != "" {
		w.FailureKind = &r.FailureKind
	}
	if w.Params == nil {
		w.Params = Params{}
	}
	if len(w.Metrics) == 0 {
		w.Metrics = json.RawMessage("null")
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a results line and checks it.
func (r *Result) UnmarshalJSON(data []byte) error {
	var w resultJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	out := Result{Index: w.Index, Fold: w.Fold, Params: w.Params, JobID: w.JobID, Status: w.Status,
		Metrics: w.Metrics, Fingerprint: w.Fingerprint, OrdersHash: w.OrdersHash, DurationMS: w.DurationMS}
	if w.Phase != nil {
		out.Phase = *w.Phase
	}
	if w.FailureKind != nil {
		out.FailureKind = *w.FailureKind
	}
	if string(out.Metrics) == "null" {
		out.Metrics = nil
	}
	if out.Metrics != nil {
		m, err := canonicalMetrics(out.Metrics)
		if err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		out.Metrics = m
	}
	if err := out.check(); err != nil {
		return err
	}
	*r = out
	return nil
}

// check refuses a result that no sweep writes.
func (r *Result) check() error {
	switch {
	case r.Index < 0:
		return fmt.Errorf("index %d is negative", r.Index)
	case r.Status != RunPassed && r.Status != RunFailed:
		return fmt.Errorf("status %q: a result is %q or %q (a stopped run has no result)", r.Status, RunPassed, RunFailed)
	case r.Status == RunFailed && r.FailureKind == "":
		return errors.New("a failed run without its failure_kind")
	case r.Status == RunPassed && r.FailureKind != "":
		return fmt.Errorf("a passed run with failure_kind %q", r.FailureKind)
	case r.Fold == nil && r.Phase != PhaseNone:
		return fmt.Errorf("phase %q without a fold", r.Phase)
	case r.Fold != nil && r.Phase != PhaseTrain && r.Phase != PhaseTest:
		return fmt.Errorf("fold %d with phase %q: want %q or %q", *r.Fold, r.Phase, PhaseTrain, PhaseTest)
	case r.Fold != nil && *r.Fold < 0:
		return fmt.Errorf("fold %d is negative", *r.Fold)
	}
	return nil
}

// key identifies a result: (fold, phase, index) is unique in a sweep.
func (r *Result) key() resultKey {
	k := resultKey{fold: -1, phase: r.Phase, index: r.Index}
	if r.Fold != nil {
		k.fold = *r.Fold
	}
	return k
}

type resultKey struct {
	fold  int // -1: none
	phase Phase
	index int64
}

func (k resultKey) String() string {
	if k.fold < 0 {
		return fmt.Sprintf("index %d", k.index)
	}
	return fmt.Sprintf("fold %d, phase %s, index %d", k.fold, k.phase, k.index)
}

// metricNames are the names of the report's metrics (contract.Metrics).
var metricNames = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	t := reflect.TypeFor[contract.Metrics]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names[name] = true
		}
	}
	return names
})

// canonicalMetrics returns a result's metrics as a run writes them, from
// what a results line or a sweep document says: the report's metrics
// (contract.Metrics) in the order written, each number written again from
// its value, positions a map of numbers; anything else (a field no
// report has) left out. What is kept of a line is then about a KiB and
// a position per symbol, whatever the line held (a results.jsonl is the
// home's: hostile). A value of the wrong type is an error.
func canonicalMetrics(raw json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	names := metricNames()
	seen := map[string]bool{}
	var out bytes.Buffer
	out.WriteByte('{')
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name := tok.(string)
		var value any
		switch {
		case !names[name] || seen[name]:
			if err := dec.Decode(&ignored{}); err != nil {
				return nil, err
			}
			continue
		case name == "positions":
			var p map[string]float64
			err = dec.Decode(&p)
			value = p
		default:
			var f *float64
			err = dec.Decode(&f)
			value = f
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		seen[name] = true
		b, err := json.Marshal(value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		key, _ := json.Marshal(name)
		out.Write(key)
		out.WriteByte(':')
		out.Write(b)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// ignored is a JSON value decoded as nothing.
type ignored struct{}

func (*ignored) UnmarshalJSON([]byte) error { return nil }

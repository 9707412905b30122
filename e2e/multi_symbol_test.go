package e2e

// Several symbols in one strategy, end to end: the examples of
// python/example (a pairs trade and a momentum rotation over
// universe.csv, whose timestamps miss some symbols' bars) trade exactly as
// an independent computation in plain Python says (testdata/multi/
// reference.py), the same in the sandbox and in a warm sweep; on_bars sees
// every timestamp once, with ctx.history and ctx.panel as of it.

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"stratbench/contract"
	"stratbench/internal/e2etest"
	"stratbench/internal/testenv"
	"stratbench/job"
	"stratbench/sandbox"
)

var universe = filepath.Join("python", "example", "universe.csv")

// universeTimestamps returns the data's distinct timestamps and how many of
// them miss at least one symbol's bar.
func universeTimestamps(t *testing.T) (distinct, gappy int) {
	t.Helper()
	f, err := os.Open(universe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	symbols := map[string]bool{}
	perTime := map[string]int{}
	var order []string
	for _, r := range rows[1:] {
		symbols[r[1]] = true
		if perTime[r[0]] == 0 {
			order = append(order, r[0])
		}
		perTime[r[0]]++
	}
	for _, ts := range order {
		if perTime[ts] < len(symbols) {
			gappy++
		}
	}
	return len(order), gappy
}

// fill is one filled order: time, symbol, side, qty, price, fee.
type fill struct {
	Time, Symbol, Side string
	Qty, Price, Fee    float64
}

// jobFills reads the filled executions of a job's orders.csv.
func (e *env) jobFills(jobID string) []fill {
	e.T.Helper()
	f := e.openRecord(jobID, job.RecordOrders)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		e.T.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	num := func(r []string, name string) float64 {
		v, err := strconv.ParseFloat(r[col[name]], 64)
		if err != nil {
			e.T.Fatalf("orders.csv %s %q: %v", name, r[col[name]], err)
		}
		return v
	}
	var out []fill
	for _, r := range rows[1:] {
		if r[col["record"]] == "execution" && r[col["status"]] == "filled" {
			out = append(out, fill{r[col["time"]], r[col["symbol"]], r[col["side"]], num(r, "qty"), num(r, "price"), num(r, "fee")})
		}
	}
	return out
}

// reference is what testdata/multi/reference.py computes.
type reference struct {
	Fills       []fill
	FinalEquity float64
	Rejections  int
	Calls       int
}

func runReference(t *testing.T, py, example, feeBps string) reference {
	t.Helper()
	out, err := exec.Command(py, filepath.Join("testdata", "multi", "reference.py"), example, universe, feeBps).Output()
	if err != nil {
		t.Fatalf("reference.py %s: %v", example, err)
	}
	var raw struct {
		Fills       [][]any `json:"fills"`
		FinalEquity float64 `json:"final_equity"`
		Rejections  int     `json:"rejections"`
		Calls       int     `json:"calls"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	ref := reference{FinalEquity: raw.FinalEquity, Rejections: raw.Rejections, Calls: raw.Calls}
	for _, f := range raw.Fills {
		ref.Fills = append(ref.Fills, fill{f[0].(string), f[1].(string), f[2].(string), f[3].(float64), f[4].(float64), f[5].(float64)})
	}
	return ref
}

func TestMultiSymbolExamplesEqualAReference(t *testing.T) {
	py := testenv.Python(t, "numpy")
	distinct, gappy := universeTimestamps(t)
	if gappy < 50 {
		t.Fatalf("universe.csv has %d timestamps that miss a symbol: the test would not cover them", gappy)
	}
	for _, ex := range []struct {
		name  string
		flags []string
		grid  string
	}{
		{"pairs", []string{"--allow-short"}, "entry=2.0,2.5"},
		{"rotation", nil, "top=3,2"},
	} {
		t.Run(ex.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			strategy := filepath.Join("python", "example", ex.name+".py")
			flags := append([]string{"--python", py, "--data", universe, "--fee-bps", "2"}, ex.flags...)
			r := e.Run(append([]string{"--ci", "--output", "json", strategy}, flags...)...)
			if r.Code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
			}
			rep := e2etest.DecodeReport(t, r.Stdout)
			ref := runReference(t, py, ex.name, "2")
			got := e.jobFills(rep.JobID)
			if len(ref.Fills) < 30 {
				t.Fatalf("the reference fills %d orders: too few to tell anything", len(ref.Fills))
			}
			if !reflect.DeepEqual(got, ref.Fills) {
				for i := range min(len(got), len(ref.Fills)) {
					if got[i] != ref.Fills[i] {
						t.Fatalf("fill %d: stratbench %+v, reference %+v (%d and %d fills)", i, got[i], ref.Fills[i], len(got), len(ref.Fills))
					}
				}
				t.Fatalf("stratbench fills %d orders, the reference %d", len(got), len(ref.Fills))
			}
			m := rep.Metrics
			if m.FinalEquity != ref.FinalEquity || m.Fills != len(ref.Fills) || m.Rejections != ref.Rejections {
				t.Fatalf("final equity %v, fills %d, rejections %d; the reference's %v, %d, %d", m.FinalEquity, m.Fills,
					m.Rejections, ref.FinalEquity, len(ref.Fills), ref.Rejections)
			}
			if s := rep.Hooks[contract.HookOnBars]; s.Count != distinct || ref.Calls != distinct {
				t.Fatalf("on_bars called %d times (the reference %d), want once per timestamp: %d", s.Count, ref.Calls, distinct)
			}
			var pnl float64
			for _, f := range rep.Symbols {
				pnl += f.PnL
			}
			if len(rep.Symbols) < 2 || math.Abs(pnl-(m.FinalEquity-m.StartEquity)) > 1e-6 {
				t.Fatalf("symbols %+v: P&L adds up to %v, the run made %v", rep.Symbols, pnl, m.FinalEquity-m.StartEquity)
			}
			same := func(what string, other *struct {
				OrdersHash, Fingerprint string
				Metrics                 *contract.Metrics
			}) {
				t.Helper()
				a, _ := json.Marshal(rep.Metrics)
				b, _ := json.Marshal(other.Metrics)
				if other.OrdersHash != rep.OrdersHash || other.Fingerprint != rep.Fingerprint || !bytes.Equal(a, b) {
					t.Fatalf("%s differs from the --ci run:\n%s %s %s\n%s %s %s", what, other.OrdersHash, other.Fingerprint, b,
						rep.OrdersHash, rep.Fingerprint, a)
				}
			}
			if err := sandbox.Check(); err != nil {
				t.Log("no sandbox run:", err)
			} else {
				sb := e.Run(append([]string{"--ci", "--output", "json", "--sandbox", strategy}, flags...)...)
				if sb.Code != 0 {
					t.Fatalf("--sandbox: exit %d\n%s", sb.Code, sb.Stderr)
				}
				s := e2etest.DecodeReport(t, sb.Stdout)
				same("the sandboxed run", &struct {
					OrdersHash, Fingerprint string
					Metrics                 *contract.Metrics
				}{s.OrdersHash, s.Fingerprint, s.Metrics})
			}
			sw := e.Run(append([]string{"sweep", strategy, "--ci", "--output", "json", "--jobs", "2", "--grid", ex.grid}, flags...)...)
			if sw.Code != 0 {
				t.Fatalf("sweep: exit %d\n%s", sw.Code, sw.Stderr)
			}
			doc := e2etest.DecodeSweep(t, sw.Stdout)
			if doc.Counts.Passed != 2 {
				t.Fatalf("sweep counts %+v", doc.Counts)
			}
			for _, res := range doc.Runs {
				if res.Fingerprint != rep.Fingerprint {
					continue // the other combination
				}
				var metrics contract.Metrics
				if err := json.Unmarshal(res.Metrics, &metrics); err != nil {
					t.Fatal(err)
				}
				same(fmt.Sprintf("the sweep's run %d", res.Index), &struct {
					OrdersHash, Fingerprint string
					Metrics                 *contract.Metrics
				}{res.OrdersHash, res.Fingerprint, &metrics})
				return
			}
			t.Fatalf("no run of the sweep has the --ci run's fingerprint %s", rep.Fingerprint)
		})
	}
}

// TestOnBarsSeesEveryTimestamp: over universe.csv, with orders at most
// timestamps (fills cut the batches everywhere), on_bars is called once per
// distinct timestamp, in order, and what it sees is as of that timestamp
// (testdata/multi/checks.py lists the checks), with lists and with numpy,
// in and out of the sandbox.
func TestOnBarsSeesEveryTimestamp(t *testing.T) {
	py := testenv.Python(t, "numpy")
	distinct, _ := universeTimestamps(t)
	for _, name := range []string{"checks.py", "checks_numpy.py"} {
		for _, sandboxed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s sandbox=%v", name, sandboxed), func(t *testing.T) {
				args := []string{"--ci", "--output", "json", "--python", py, "--data", universe, filepath.Join("testdata", "multi", name)}
				if sandboxed {
					if err := sandbox.Check(); err != nil {
						t.Skip(err)
					}
					args = append(args, "--sandbox")
				}
				e := newEnv(t)
				r := e.Run(args...)
				rep := e2etest.DecodeReport(t, r.Stdout)
				if r.Code != 0 {
					t.Fatalf("exit %d, failure %+v\n%s", r.Code, rep.Failure, r.Stderr)
				}
				var meta struct {
					Calls  int      `json:"calls"`
					Errors []string `json:"errors"`
				}
				if err := json.Unmarshal(rep.Metadata, &meta); err != nil {
					t.Fatal(err)
				}
				if meta.Calls != distinct || rep.Hooks[contract.HookOnBars].Count != distinct || len(meta.Errors) > 0 {
					t.Fatalf("%d calls (report: %d), want %d; errors %q", meta.Calls, rep.Hooks[contract.HookOnBars].Count, distinct, meta.Errors)
				}
				if rep.Metrics.Fills < 500 {
					t.Fatalf("%d fills: the run cut few batches", rep.Metrics.Fills)
				}
			})
		}
	}
}

// TestUniverseIsGenerated: python/example/universe.csv is what
// make_universe.py writes.
func TestUniverseIsGenerated(t *testing.T) {
	out, err := exec.Command("python3", filepath.Join("python", "example", "make_universe.py")).Output()
	if err != nil {
		t.Skip("python3: ", err)
	}
	have, err := os.ReadFile(universe)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, have) {
		t.Fatal("python/example/universe.csv differs from what make_universe.py writes: run it again")
	}
}

// TestNumpyArraysCannotBeMadeWritable: a strategy that sets
// arr.flags.writeable = True on what ctx.panel and ctx.history(symbol) hand
// it is refused by numpy every time (the arrays are views of read-only
// buffers), so no write of its changes what a later call serves.
func TestNumpyArraysCannotBeMadeWritable(t *testing.T) {
	py := testenv.Python(t, "numpy")
	e := newEnv(t)
	r := e.Run("--ci", "--output", "json", "--python", py, "--data", universe, "--to", "2026-01-10", filepath.Join("testdata", "multi", "rewrite_numpy.py"))
	rep := e2etest.DecodeReport(t, r.Stdout)
	if r.Code != 0 {
		t.Fatalf("exit %d, failure %+v\n%s", r.Code, rep.Failure, r.Stderr)
	}
	var meta struct {
		Tried, Refused int
		Changed        []string
	}
	if err := json.Unmarshal(rep.Metadata, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Tried == 0 || meta.Refused != meta.Tried || len(meta.Changed) > 0 {
		t.Fatalf("of %d arrays numpy let %d be made writable again; changed: %q", meta.Tried, meta.Tried-meta.Refused, meta.Changed)
	}
}

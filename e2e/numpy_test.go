package e2e

// The numpy and pandas history (real numpy and pandas from the tests'
// environment, ./test.sh): columns are read-only float64 arrays that never
// change once handed out, time is datetime64[ns], df is a UTC-indexed frame,
// and the windows equal those of the list history of the same run; a
// strategy without numpy leaves numpy out of sys.modules. With and without
// the sandbox.

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"stratbench/internal/e2etest"
	"stratbench/internal/testenv"
)

func TestNumpyHistory(t *testing.T) {
	py := testenv.Python(t, "numpy", "pandas")
	sandboxModes(t, py, nil, func(t *testing.T, e *env, args []string, sandboxed bool) {
		arrays := e.Run(append(args, filepath.Join("testdata", "numpy", "columns.py"))...)
		lists := e.Run(append(args, filepath.Join("testdata", "numpy", "columns_lists.py"))...)
		for _, r := range []e2etest.Result{arrays, lists} {
			if r.Code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
			}
		}
		var a struct {
			Metadata struct {
				Checks  map[string]any `json:"checks"`
				Windows [][]any        `json:"windows"`
			} `json:"metadata"`
		}
		var l struct {
			Metadata struct {
				Windows     [][]any `json:"windows"`
				NumpyLoaded bool    `json:"numpy_loaded"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(arrays.Stdout), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(lists.Stdout), &l); err != nil {
			t.Fatal(err)
		}
		c := a.Metadata.Checks
		calls := c["calls"].(float64)
		if calls != 20160 || c["read_only"] != calls || c["means"].(float64) < calls-20 || c["kept_unchanged"] != true {
			t.Fatalf("checks %v", c)
		}
		if l.Metadata.NumpyLoaded {
			t.Fatal("a strategy without numpy has numpy in sys.modules")
		}
		if len(a.Metadata.Windows) != len(l.Metadata.Windows) {
			t.Fatalf("%d windows with numpy, %d with lists", len(a.Metadata.Windows), len(l.Metadata.Windows))
		}
		for i := range a.Metadata.Windows {
			x, y := a.Metadata.Windows[i], l.Metadata.Windows[i]
			for k := range x {
				if xf, ok := x[k].(float64); ok {
					// Sums may differ in the last bits: numpy sums pairwise.
					if yf := y[k].(float64); math.Abs(xf-yf) > 1e-9*math.Max(1, math.Abs(yf)) {
						t.Fatalf("window %d field %d: numpy %v, lists %v", i, k, x, y)
					}
				} else if x[k] != y[k] {
					t.Fatalf("window %d field %d: numpy %v, lists %v", i, k, x, y)
				}
			}
		}
	})
}

// TestListHistoryViews: the list history keeps a column as the batch sent
// it until the strategy reads its view, and a view read first in a later
// batch (high, low, volume; close from the first bar) holds exactly the
// window's values as ctx.bar gave them, as a list of floats the strategy
// may change: history_views.py compares every view it reads, on the
// bundled sample's 20,160 bars. Open, never read as a view, stays an
// array to the end; close is a list.
func TestListHistoryViews(t *testing.T) {
	sandboxModes(t, "python3", nil, func(t *testing.T, e *env, args []string, sandboxed bool) {
		r := e.Run(append(args, e2etest.Strategy("history_views.py"))...)
		if r.Code != 0 {
			t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
		var rep struct {
			Metadata struct {
				Checked map[string]int    `json:"checked"`
				Wrong   [][]any           `json:"wrong"`
				Kinds   map[string]string `json:"kinds"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
			t.Fatal(err)
		}
		m := rep.Metadata
		if len(m.Wrong) > 0 {
			t.Fatalf("views unlike the bars served: %v", m.Wrong)
		}
		if m.Checked["close"] != 20160 || m.Checked["high"] < 10000 || m.Checked["low"] < 2000 || m.Checked["volume"] < 20 {
			t.Fatalf("views compared: %v", m.Checked)
		}
		if m.Kinds["open"] != "array" || m.Kinds["close"] != "list" {
			t.Fatalf("columns kept as %v: open (never read as a view) should stay the batch's array, close a list", m.Kinds)
		}
	})
}

// TestHistoryDFWithoutPandas: history.df under an interpreter without pandas
// fails at the strategy's line with an error naming pandas and the
// interpreter.
func TestHistoryDFWithoutPandas(t *testing.T) {
	e := newEnv(t)
	r := e.Run("--ci", "--output", "json", "--python", "python3", filepath.Join("testdata", "numpy", "df_without_pandas.py"))
	rep := e2etest.DecodeReport(t, r.Stdout)
	if r.Code != 1 || rep.Failure == nil || rep.Failure.Kind != "exception" || rep.Failure.Hook != "on_data" {
		t.Fatalf("exit %d, failure %+v", r.Code, rep.Failure)
	}
	if !strings.Contains(rep.Failure.Message, "history.df needs pandas") || !strings.Contains(rep.Failure.Message, rep.Python.Executable) {
		t.Fatalf("message %q does not name pandas and %s", rep.Failure.Message, rep.Python.Executable)
	}
	if n := len(rep.Failure.Frames); n == 0 || !rep.Failure.Frames[n-1].User || rep.Failure.Frames[n-1].Line != 7 {
		t.Fatalf("frames %+v: the last should be the strategy's line 7", rep.Failure.Frames)
	}
}

// TestRelativePythonPath: --python with a relative path names a file of the
// current folder, also for the worker, which runs in the strategy's folder.
func TestRelativePythonPath(t *testing.T) {
	e := newEnv(t)
	// The real interpreter: a pyenv shim goes by the name it is called by.
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skip("python3 not found")
	}
	py := strings.TrimSpace(string(out))
	dir := t.TempDir()
	if err := os.Symlink(py, filepath.Join(dir, "mypython")); err != nil {
		t.Fatal(err)
	}
	strat, _ := filepath.Abs(e2etest.Strategy("noop.py"))
	cmd := e.Command("--ci", "--output", "json", "--python", "./mypython", strat)
	cmd.Dir = dir
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep := e2etest.DecodeReport(t, string(out)); rep.Status != "passed" || !filepath.IsAbs(rep.Python.Executable) {
		t.Fatalf("status %s, python %q", rep.Status, rep.Python.Executable)
	}
}

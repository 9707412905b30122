//go:build linux && amd64

package sandbox

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	pybridge "stratbench/python"
)

// BenchmarkStart measures a start of python -I -c pass, directly and
// through the launcher; the difference is the launcher's overhead.
func BenchmarkStart(b *testing.B) {
	py, p := pythonPolicy(b, nil, nil, nil)
	args := []string{"-I", "-c", "pass"}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(py, args...)
			cmd.Env = p.Env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
	b.Run("sandboxed", func(b *testing.B) {
		requireSandbox(b)
		path, execArgs, err := Command(p, py, args)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			cmd := exec.Command(path, execArgs...)
			cmd.Env = p.Env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
}

// BenchmarkExecFilterStart measures what putting the exec filter in force
// adds to a sandboxed start: pairs of sandboxed starts of a script that loads
// the bridge and calls its forbid_exec, once as the worker does (the
// launcher's variable present) and once with the variable removed first, so
// that forbid_exec returns at once. The order alternates within pairs;
// "filter-ms" is the median of the pairs' differences, "start-ms" the median
// start with the filter.
func BenchmarkExecFilterStart(b *testing.B) {
	requireSandbox(b)
	bridge, err := pybridge.InstallBridge(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	py, p := pythonPolicy(b, []string{filepath.Dir(bridge)}, nil, nil)
	script := func(drop bool) []string {
		src := "import importlib.util, os, sys\n"
		if drop {
			src += "os.environ.pop(" + pyQuote(ExecFilterEnv) + ")\n"
		}
		src += "spec = importlib.util.spec_from_file_location('bridge', " + pyQuote(bridge) + ")\n" +
			"bridge = importlib.util.module_from_spec(spec)\n" +
			"spec.loader.exec_module(bridge)\n" +
			"sys.exit(bridge.forbid_exec())\n"
		return []string{"-I", "-B", "-c", src}
	}
	start := func(args []string) time.Duration {
		path, execArgs, err := Command(p, py, args)
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(path, execArgs...)
		cmd.Env = p.Env
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		return time.Since(t0)
	}
	with, without := script(false), script(true)
	var diffs, starts []time.Duration
	i := 0
	for b.Loop() {
		var a, c time.Duration
		if i%2 == 0 {
			a = start(with)
			c = start(without)
		} else {
			c = start(without)
			a = start(with)
		}
		i++
		diffs = append(diffs, a-c)
		starts = append(starts, a)
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2]) / float64(time.Millisecond)
	}
	b.ReportMetric(median(diffs), "filter-ms")
	b.ReportMetric(median(starts), "start-ms")
}

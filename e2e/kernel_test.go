package e2e

// End-to-end tests of what the kernel enforces around a run (see
// docs/ARCHITECTURE.md, "The kernel's part"): the sandbox's system call
// filter against what the libraries need, the bound on the tree's tasks,
// its IPC namespace and private /dev/shm, and the cap on the strategy's
// files. The attacks themselves are in testdata/attacks (attack_test.go).

import (
	"encoding/json"
	"testing"

	"stratbench/internal/e2etest"
	"stratbench/internal/testenv"
)

// TestSandboxLibraries runs what a data-analysis strategy does with numpy,
// pandas, pyarrow, matplotlib and SQLite in the sandbox: the filter's
// allow-lists (fcntl, ioctl) and refusals (flock, fallocate) must leave all
// of it working, as it works without the sandbox.
func TestSandboxLibraries(t *testing.T) {
	py := testenv.Python(t, "numpy", "pandas", "pyarrow", "matplotlib")
	sandboxModes(t, py, []string{"--to", "2026-01-05 00:10:00"}, func(t *testing.T, e *env, args []string, sandboxed bool) {
		r := e.Run(append(args, e2etest.Strategy("sandbox_libraries.py"))...)
		rep := e2etest.DecodeReport(t, r.Stdout)
		if r.Code != 0 || rep.Python.Sandbox != sandboxed {
			t.Fatalf("exit %d, sandbox %v, failure %+v\n%s", r.Code, rep.Python.Sandbox, rep.Failure, r.Stderr)
		}
		var steps map[string]string
		if err := json.Unmarshal(rep.Metadata, &steps); err != nil {
			t.Fatalf("metadata %s: %v", rep.Metadata, err)
		}
		for _, s := range []string{"numpy", "pandas_csv", "pyarrow_parquet", "pandas_parquet", "matplotlib", "sqlite", "numpy_files", "pickle"} {
			if steps[s] != "ok" {
				t.Errorf("%s: %s", s, steps[s])
			}
		}
	})
}

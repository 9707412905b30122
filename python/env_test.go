package python

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestSandboxEnv (moved here from the sandbox with the environment policy):
// the fixed environment, sorted, with extra entries replacing fixed ones.
func TestSandboxEnv(t *testing.T) {
	got := SandboxEnv(map[string]string{"PYTHONHASHSEED": "0", "PATH": "/opt/bin"})
	want := []string{
		"LANG=C.UTF-8", "MKL_NUM_THREADS=1", "MPLBACKEND=Agg", "NUMEXPR_NUM_THREADS=1", "OMP_NUM_THREADS=1",
		"OPENBLAS_NUM_THREADS=1", "PATH=/opt/bin", "PYTHONDONTWRITEBYTECODE=1", "PYTHONHASHSEED=0",
		"PYTHONIOENCODING=utf-8", "PYTHONNOUSERSITE=1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("SandboxEnv = %q, want %q", got, want)
	}
}

// TestWorkerEnvKeepsNoSecrets: an unsandboxed worker gets the variables
// Python needs and none of the others.
func TestWorkerEnvKeepsNoSecrets(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "hunter2")
	t.Setenv("TZ", "Europe/Paris")
	env := WorkerEnv(map[string]string{"STRATBENCH_X": "1"})
	joined := strings.Join(env, "\n")
	for _, want := range []string{"TZ=Europe/Paris", "PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1", "STRATBENCH_X=1"} {
		if !slices.Contains(env, want) {
			t.Errorf("worker environment lacks %s:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "hunter2") {
		t.Errorf("the worker inherits a secret:\n%s", joined)
	}
}

// TestPlottingEnv: matplotlib is headless unless the user chose a backend;
// sandboxed, its configuration folder is in the job's temporary folder.
func TestPlottingEnv(t *testing.T) {
	t.Setenv("MPLBACKEND", "")
	os.Unsetenv("MPLBACKEND")
	t.Setenv("MPLCONFIGDIR", "")
	os.Unsetenv("MPLCONFIGDIR")
	if env := WorkerEnv(nil); !slices.Contains(env, "MPLBACKEND=Agg") || slices.ContainsFunc(env, hasKey("MPLCONFIGDIR")) {
		t.Errorf("unsandboxed, no backend chosen: %q, want MPLBACKEND=Agg and the user's own matplotlib folder", env)
	}
	t.Setenv("MPLBACKEND", "QtAgg")
	t.Setenv("MPLCONFIGDIR", "/home/u/mpl")
	if env := WorkerEnv(nil); !slices.Contains(env, "MPLBACKEND=QtAgg") || !slices.Contains(env, "MPLCONFIGDIR=/home/u/mpl") {
		t.Errorf("unsandboxed, the user's choice: %q, want it kept", env)
	}
	env := SandboxEnv(map[string]string{"TMPDIR": "/tmp"})
	for _, want := range []string{"MPLBACKEND=Agg", "MPLCONFIGDIR=/tmp/matplotlib", "TMPDIR=/tmp"} {
		if !slices.Contains(env, want) {
			t.Errorf("sandboxed: %q lacks %s (the user's own variables never reach it)", env, want)
		}
	}
}

func hasKey(k string) func(string) bool {
	return func(kv string) bool { return strings.HasPrefix(kv, k+"=") }
}

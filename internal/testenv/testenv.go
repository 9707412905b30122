// Package testenv finds what tests need outside Go: the virtual environment
// with the test packages (numpy, pandas, pyarrow, matplotlib, plotly, ray)
// that ./test.sh installs into .venv-test at the repository's root.
package testenv

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// requiredEnv, set by ./test.sh, makes a missing environment a failure
// instead of a skip.
const requiredEnv = "STRATBENCH_TEST_VENV_REQUIRED"

// Root returns the repository's root: the folder of go.mod above the
// test's working directory.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := RootDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// RootDir is Root for code that has no testing.TB (a TestMain).
func RootDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testenv: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Python returns the interpreter of the test environment, after checking
// that it imports modules. Without the environment the test is skipped
// (or fails, under ./test.sh), naming the command that installs it.
func Python(t testing.TB, modules ...string) string {
	t.Helper()
	py := filepath.Join(Root(t), ".venv-test", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		missing(t, "the test environment .venv-test is missing")
	}
	for _, m := range modules {
		if out, err := exec.Command(py, "-c", "import "+m).CombinedOutput(); err != nil {
			missing(t, "the test environment cannot import "+m+": "+string(out))
		}
	}
	return py
}

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(requiredEnv) != "" {
		t.Fatalf("%s; run ./test.sh to install it", why)
	}
	t.Skipf("%s; run ./test.sh to install it", why)
}

package local

import (
	"os"
	"testing"

	"stratbench/internal/leakcheck"
	"stratbench/sandbox"
	"stratbench/supervisor"
)

// TestMain makes the test binary the supervisor's init and the sandbox's
// launcher, as main does for stratbench (the tests start real jobs), and
// checks that no goroutine of the package outlives the tests.
func TestMain(m *testing.M) {
	supervisor.MaybeRunInit()
	sandbox.MaybeRunLauncher()
	os.Exit(leakcheck.Main(m, "stratbench/sweep/local"))
}

package session

import (
	"os"
	"testing"

	"stratbench/internal/leakcheck"
	"stratbench/sandbox"
	"stratbench/supervisor"
)

// TestMain makes the test binary the supervisor's init and the sandbox's
// launcher, as main does for stratbench (the warm session runs real
// jobs), and checks that no goroutine of the session outlives the tests.
func TestMain(m *testing.M) {
	supervisor.MaybeRunInit()
	sandbox.MaybeRunLauncher()
	os.Exit(leakcheck.Main(m, "stratbench/session"))
}

package sweep

import (
	"os"
	"testing"

	"stratbench/internal/leakcheck"
)

func TestMain(m *testing.M) {
	if helper := os.Getenv(helperEnv); helper != "" {
		os.Exit(runHelper(helper))
	}
	os.Exit(leakcheck.Main(m, "stratbench/sweep"))
}

package ray

import (
	"os"
	"testing"

	"stratbench/internal/e2etest"
)

// TestMain builds the binary once for the package (e2etest.Main).
func TestMain(m *testing.M) { os.Exit(e2etest.Main(m)) }

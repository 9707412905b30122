package watch

import (
	"os"
	"testing"

	"stratbench/internal/leakcheck"
)

// No goroutine of the package (a Run, fsnotify's reader is not ours, the
// second inotify instance's reader) outlives the tests.
func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, "stratbench/watch"))
}

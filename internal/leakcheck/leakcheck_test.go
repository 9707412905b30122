package leakcheck

import (
	"strings"
	"testing"
	"time"
)

// park is a goroutine of this package that runs until release is closed.
func park(started chan<- struct{}, release <-chan struct{}) {
	close(started)
	<-release
}

func TestLeakedFindsARunningGoroutineAndNotAnEndedOne(t *testing.T) {
	defer func(g time.Duration) { grace = g }(grace)
	grace = 100 * time.Millisecond
	started, release := make(chan struct{}), make(chan struct{})
	go park(started, release)
	<-started
	if got := Leaked("stratbench/internal/leakcheck"); !strings.Contains(got, "leakcheck.park(") {
		t.Fatalf("a running goroutine of the package was not reported: %q", got)
	}
	if got := Leaked("stratbench/nothing"); got != "" {
		t.Fatalf("a goroutine of another package was reported:\n%s", got)
	}
	close(release)
	if got := Leaked("stratbench/internal/leakcheck"); got != "" {
		t.Fatalf("an ended goroutine was reported:\n%s", got)
	}
}

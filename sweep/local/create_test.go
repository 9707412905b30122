package local

import (
	"context"
	"errors"
	"testing"
)

// TestStoppableAnswersTheContext: a setup step that does not look at its
// context (a sweep.json of 16 MB decoded) returns at once when the context
// ends, and its result otherwise.
func TestStoppableAnswersTheContext(t *testing.T) {
	if v, err := Stoppable(context.Background(), func() (int, error) { return 7, nil }); v != 7 || err != nil {
		t.Fatalf("stoppable = %d, %v", v, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	release, ended := make(chan struct{}), make(chan struct{})
	go func() {
		<-ended
		close(release) // the step ends after stoppable has returned
	}()
	cancel()
	v, err := Stoppable(ctx, func() (int, error) {
		<-release
		return 7, nil
	})
	close(ended)
	if v != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("stoppable after the context ended = %d, %v; want 0, context.Canceled", v, err)
	}
}

package watch_test

import (
	"context"
	"fmt"
	"log"

	"stratbench/watch"
)

// The owner runs the watcher in a goroutine, starts a run on every Changed
// (stopping the one in flight) and cancels the context to stop watching.
func Example() {
	w, err := watch.New("strategy.py", watch.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.Run(ctx)
	for c := range w.Changes() {
		switch c.Kind {
		case watch.Changed:
			fmt.Printf("run %x\n", c.Hash[:4]) // stop the run in flight, start a new one
		case watch.Missing:
			fmt.Println("waiting for strategy.py")
		case watch.Warning:
			fmt.Println("warning:", c.Err)
		}
	}
}

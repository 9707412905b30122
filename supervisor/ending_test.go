package supervisor

import (
	"io"
	"os"
	"testing"
	"time"
)

// TestEndingPrecedesTheKill: Ending is closed before the supervisor kills a
// tree over a limit, so that a caller that sees the tree's descriptors close
// knows the tree is ending and waits for its result (which, for a tree
// holding gigabytes on a loaded machine, comes seconds later) rather than
// taking the closed descriptors for the program's doing.
func TestEndingPrecedesTheKill(t *testing.T) {
	forEachTracking(t, func(t *testing.T, want TreeTracking) {
		h := newHost(t)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		spec := pySpec(t, newCollector(), "memory.py", "64")
		spec.ExtraFiles = []*os.File{w}
		spec.Limits = Limits{MemoryBytes: 32 << 20}
		p := startIn(t, h, spec, want)
		w.Close()
		// End of file once no process of the tree holds the pipe: they
		// were killed.
		if _, err := io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.Ending():
		default:
			t.Error("the tree's descriptors closed before Ending was")
		}
		if res := waitDone(t, p, 30*time.Second); res.Violation == nil || res.Violation.Kind != ViolationMemory {
			t.Errorf("result %+v, want a memory violation", res)
		}
	})
}

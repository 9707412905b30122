package backtest

import (
	"math/rand"
	"testing"

	"stratbench/contract"
)

// TestPendingQueueKeepsOrderAcrossChunks pushes, delivers and drops
// executions at random against a plain slice: the queue must hand them out
// oldest first, whole chunk by chunk, across chunks that grow from
// firstChunkExecutions to maxBatchExecutions and emptied chunks it reuses,
// and count their memory back to nothing.
func TestPendingQueueKeepsOrderAcrossChunks(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var q pendingQueue
	var want []contract.Execution
	next := int64(0)
	maxChunk := 0
	for step := 0; step < 400; step++ {
		// Floods as well as trickles: up to twice the largest chunk at once.
		for n := rng.Intn(3) * rng.Intn(2*maxBatchExecutions/3); n > 0; n-- {
			x := contract.Execution{OrderID: next, Reason: "r"}
			next++
			q.push(x)
			want = append(want, x)
		}
		for _, c := range q.chunks {
			maxChunk = max(maxChunk, cap(c))
			if cap(c) > maxBatchExecutions {
				t.Fatalf("a chunk of %d executions, over %d", cap(c), maxBatchExecutions)
			}
		}
		if q.len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", step, q.len(), len(want))
		}
		got := q.first(maxBatchExecutions)
		if len(want) > 0 && len(got) == 0 {
			t.Fatalf("step %d: %d waiting, none handed out", step, len(want))
		}
		for i, x := range got {
			if x.OrderID != want[i].OrderID {
				t.Fatalf("step %d: execution %d is order %d, want %d", step, i, x.OrderID, want[i].OrderID)
			}
		}
		k := 0
		if len(got) > 0 {
			k = rng.Intn(len(got) + 1)
		}
		q.drop(k)
		want = want[k:]
	}
	q.drop(q.len())
	if q.len() != 0 || q.bytes != 0 {
		t.Fatalf("after dropping everything: len %d, bytes %d", q.len(), q.bytes)
	}
	if maxChunk != maxBatchExecutions {
		t.Fatalf("the largest chunk held %d executions; a flood should grow chunks to %d", maxChunk, maxBatchExecutions)
	}
}

// TestPendingQueueStartsSmall: a run that waits on one execution does not
// allocate a chunk for a flood.
func TestPendingQueueStartsSmall(t *testing.T) {
	var q pendingQueue
	q.push(contract.Execution{OrderID: 1})
	if c := cap(q.chunks[0]); c != firstChunkExecutions {
		t.Fatalf("first chunk of %d executions, want %d", c, firstChunkExecutions)
	}
}

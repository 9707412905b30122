package backtest

import (
	"fmt"
	"unsafe"

	"stratbench/contract"
)

// The executions waiting to be delivered to the worker, and the failure of a
// replay they would hold at one event for ever.

// maxPendingBytes bounds the memory of the executions waiting to be
// delivered to the worker. One hook's commands fit in one protocol message
// (8 MiB: at most about 290,000 orders, whose rejections take some 45 MiB
// here); more wait only when on_execution places orders faster than their
// executions come back to it, and then they would grow without end.
const maxPendingBytes = 64 << 20

// stalled is the failure of a replay held at event by on_execution placing
// more orders than it is given executions: the executions waiting for it
// grow without end, and it would never reach the next bar.
func (d *Driver) stalled(event int) *contract.Failure {
	t := formatTime(d.timeAt(event))
	return &contract.Failure{
		Kind: contract.KindTimeout, Hook: contract.HookOnExecution, EventIndex: &event, EventTime: &t,
		Message: fmt.Sprintf("the replay is stuck at event %d: on_execution places orders faster than their executions come back to it "+
			"(%d executions waiting, over stratbench's limit of %d MiB of them)", event, d.queue.len(), maxPendingBytes>>20),
	}
}

// pendingQueue holds the executions waiting to be delivered to the worker,
// oldest first, in chunks: a flood of them grows chunk by chunk, never
// copying what it holds, and delivered chunks go. The first chunk holds
// firstChunkExecutions, each next one twice its predecessor, up to
// maxBatchExecutions (a batch delivers at most one chunk): most runs wait
// on a few executions at a time, and a chunk of the maximum is 512 kB
// (measured: a third of a sweep run's allocations in the host, each run
// allocating it afresh at its first order).
type pendingQueue struct {
	chunks [][]contract.Execution // chunks[0][head:] is the front
	head   int
	n      int
	bytes  int                  // memory of the waiting executions (see execBytes)
	spare  []contract.Execution // an emptied chunk, for the next push
	grown  int                  // the capacity of the last chunk made
}

// firstChunkExecutions is the capacity of a queue's first chunk.
const firstChunkExecutions = 64

// execBytes is the memory a waiting execution holds, its strings counted
// even when shared.
func execBytes(x *contract.Execution) int {
	return int(unsafe.Sizeof(*x)) + len(x.Symbol) + len(x.Reason)
}

func (q *pendingQueue) len() int { return q.n }

func (q *pendingQueue) push(x contract.Execution) {
	k := len(q.chunks)
	if k == 0 || len(q.chunks[k-1]) == cap(q.chunks[k-1]) {
		c := q.spare
		if c == nil {
			q.grown = min(maxBatchExecutions, max(firstChunkExecutions, 2*q.grown))
			c = make([]contract.Execution, 0, q.grown)
		}
		q.spare = nil
		q.chunks = append(q.chunks, c)
		k++
	}
	q.chunks[k-1] = append(q.chunks[k-1], x)
	q.n++
	q.bytes += execBytes(&x)
}

// first returns up to max of the oldest waiting executions, contiguous
// (those of the first chunk).
func (q *pendingQueue) first(max int) []contract.Execution {
	if q.n == 0 {
		return nil
	}
	c := q.chunks[0]
	return c[q.head:min(len(c), q.head+max)]
}

// drop forgets the k oldest, which were delivered.
func (q *pendingQueue) drop(k int) {
	for k > 0 {
		c := q.chunks[0]
		take := min(k, len(c)-q.head)
		for i := q.head; i < q.head+take; i++ {
			q.bytes -= execBytes(&c[i])
		}
		clear(c[q.head : q.head+take]) // their strings may go
		q.head += take
		q.n -= take
		k -= take
		if q.head < len(c) {
			return
		}
		q.head = 0
		if len(q.chunks) == 1 {
			q.chunks[0] = c[:0]
			return
		}
		q.spare = c[:0]
		q.chunks[0] = nil
		q.chunks = q.chunks[1:]
	}
}

package engine

import (
	"testing"

	"stratbench/contract"
)

// TestLedgerNamesAnyClaimedCall: the calls of a request whose worker may
// deliver fills itself run past its bars (an on_execution call per fill),
// and the clock and local word that name one are the worker's claims:
// whatever call and word it claims, within the request or not, the ledger
// names a hook and an event of the batch or none, and never faults.
func TestLedgerNamesAnyClaimedCall(t *testing.T) {
	b := &contract.Batch{FirstEvent: 40, Executions: []contract.Execution{{Event: 39, Time: 7}}}
	for i := range 5 {
		b.Bars.Time = append(b.Bars.Time, int64(1000+i))
	}
	for _, starts := range [][]int{nil, {0, 2, 5}} {
		var l callLedger
		l.next = 11
		l.startBatch(b, 1, 1+5, starts)
		l.last += uint64(b.Bars.Len()) // as worker.Run allows for local fills
		words := []uint64{0, 1, 2, 3, 4, 5, 9, 10, 11, 1 << 63, 1<<64 - 1}
		for call := uint64(0); call <= l.last+3; call++ {
			for _, local := range words {
				hook, event, at := l.locateClaimed(call, local)
				if event != -1 && (event < 39 || event >= b.FirstEvent+b.Bars.Len()) {
					t.Errorf("starts %v: call %d, local word %d: %s at event %d (%d)", starts, call, local, hook, event, at)
				}
			}
		}
		for _, clock := range words {
			call, _ := l.claimed(clock)
			l.locateClaimed(call, clock)
		}
	}
}

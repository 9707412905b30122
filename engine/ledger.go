package engine

import "stratbench/contract"

// callLedger numbers hook calls and says which hook and event a call number
// is. Calls are numbered from 1 in the order the worker makes them: the
// on_execution calls of a batch, then its bar calls (one on_data call per
// bar, or one on_bars call per timestamp); on_finish is the last. A copy of
// the ledger describes a request in flight completely: the watchdog works
// on such a copy, never on the worker's own.
type callLedger struct {
	next uint64 // number of the next hook call

	// The request in flight: a batch (calls first..last) or on_finish.
	batch     *contract.Batch // read-only while the request is in flight
	first     uint64
	last      uint64 // highest call the request allows
	execCalls int    // calls of the batch that are on_execution
	finish    uint64 // the on_finish call, once requested
	// starts are, for on_bars, the first bar of each bar call of the
	// batch, then the number of its bars: call j serves bars
	// [starts[j], starts[j+1]). nil for on_data, one call per bar.
	// Read-only while the request is in flight (the worker makes a new
	// slice per batch).
	starts []int
	// barHook is the strategy's bar hook, on_data or on_bars, once the
	// manifest named it.
	barHook contract.Hook

	recorded uint64 // the last call whose statistics are recorded
}

// startBatch makes b, with execCalls on_execution calls and calls calls in
// all, the request in flight; starts are its on_bars calls' bars (see
// callLedger.starts), nil for on_data.
func (l *callLedger) startBatch(b *contract.Batch, execCalls, calls int, starts []int) {
	l.batch, l.first, l.execCalls, l.starts = b, l.next, execCalls, starts
	l.last = l.next + uint64(calls) - 1
}

// barsOf returns how many bars the first calls bar calls of the batch serve.
func (l *callLedger) barsOf(calls int) int {
	if l.starts == nil {
		return calls
	}
	return l.starts[min(calls, len(l.starts)-1)]
}

// startFinish makes on_finish the request in flight and returns its call number.
func (l *callLedger) startFinish() uint64 {
	call := l.next
	l.next++
	l.finish, l.last, l.batch = call, call, nil
	return call
}

// completed records that the worker returned from every call up to through.
func (l *callLedger) completed(through uint64) {
	l.next = through + 1
	l.recorded = through
	l.batch = nil
}

// inFlight reports whether call belongs to the request in flight.
func (l *callLedger) inFlight(call uint64) bool {
	if l.finish != 0 && call == l.finish {
		return true
	}
	return l.batch != nil && call >= l.first && call <= l.last
}

// locate maps a call number to its hook and event (-1 and 0 when none, or
// when no bar of the batch is the call's).
func (l *callLedger) locate(call uint64) (hook contract.Hook, event int, at int64) {
	if l.finish != 0 && call == l.finish {
		return contract.HookOnFinish, -1, 0
	}
	if b := l.batch; b != nil && call >= l.first && call <= l.last {
		i := int(call - l.first)
		if i < l.execCalls {
			e := b.Executions[i]
			return contract.HookOnExecution, e.Event, e.Time
		}
		j := i - l.execCalls
		if l.starts != nil && j+1 < len(l.starts) && l.starts[j] < b.Bars.Len() {
			// An on_bars call: its timestamp's first bar names it.
			j = l.starts[j]
			return contract.HookOnBars, b.FirstEvent + j, b.Bars.Time[j]
		}
		if l.starts == nil && j < b.Bars.Len() {
			return contract.HookOnData, b.FirstEvent + j, b.Bars.Time[j]
		}
		// A call past the batch's bars: the request may make one more
		// on_execution call per bar when the worker delivers fills itself,
		// and which call is which only the worker can say
		// (locateClaimed).
	}
	if l.barHook != "" {
		return l.barHook, -1, 0
	}
	return contract.HookOnData, -1, 0
}

// locateClaimed is locate for the call in flight of a batch whose worker
// delivered fills itself (python.YieldMsg.Local), as its local word claims
// (python.StatePage.Local: 2m + e after m such fills, e = 1 while the m-th
// one's on_execution runs): the worker's calls of the batch are then its
// executions', then bars with an on_execution call after each bar whose
// order it filled, which locate alone cannot place. The word is the
// worker's claim, bounded to the batch: it names a call, and nothing else.
func (l *callLedger) locateClaimed(call, local uint64) (hook contract.Hook, event int, at int64) {
	b := l.batch
	m := local / 2
	if b == nil || m == 0 || call < l.first || call > l.last || call-l.first < uint64(l.execCalls) {
		return l.locate(call)
	}
	bars := call - l.first - uint64(l.execCalls) // calls of the batch's bars and fills before call
	hook = contract.HookOnData
	if local%2 == 1 {
		// The m-th fill's on_execution: its event is the bar after the
		// m-1 fills' and its own order's.
		hook, m = contract.HookOnExecution, m-1
	}
	if m > bars {
		return l.locate(call)
	}
	j := int(bars - m)
	if j >= b.Bars.Len() {
		return l.locate(call)
	}
	return hook, b.FirstEvent + j, b.Bars.Time[j]
}

// claimed interprets a clock value the worker published (2k-1 while call k
// runs, 2k after it returned) within the request in flight: the call it
// names, clamped to the request's calls, and whether that call is running.
// The clock is the worker's claim, good for showing progress and for
// naming a call in a message, never for a deadline.
func (l *callLedger) claimed(clock uint64) (call uint64, running bool) {
	running = clock%2 == 1
	call = clock/2 + 1 // the call in flight, or the next one
	if !running && call > l.last {
		call = l.last
	}
	if l.batch != nil {
		call = min(max(call, l.first), l.last)
	}
	return call, running
}

// doneBars returns how many bars of the batch in flight have returned, as
// clock claims it.
func (l *callLedger) doneBars(clock uint64) int {
	if l.batch == nil {
		return 0
	}
	returned := min(clock/2, l.last) // calls that returned
	if returned < l.first {
		return 0
	}
	return l.barsOf(max(0, int(returned-l.first+1)-l.execCalls))
}

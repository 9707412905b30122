package backtest

import (
	"iter"

	"stratbench/engine"
)

// Kinds of order log records.
const (
	recOrder     = iota + 1 // a buy or sell command
	recCancel               // a cancel command
	recUnknown              // a command with an unknown op
	recExecution            // a fill, rejection or cancel
)

// Codes of the strings a record would otherwise repeat for every order.
var (
	sideNames   = [...]string{"", engine.OpBuy, engine.OpSell}
	statusNames = [...]string{"", engine.ExecFilled, engine.ExecRejected, engine.ExecCanceled}
	hookNames   = [...]string{"", engine.HookOnData, engine.HookOnExecution, engine.HookOnFinish}
)

func code(names []string, s string) uint8 {
	for i, n := range names {
		if n == s {
			return uint8(i)
		}
	}
	return 0
}

// record is one line of orders.csv: a command as taken in, or an execution.
// It is kept compact (96 bytes) because a strategy may place an order on
// every bar.
type record struct {
	id       int64
	qty      float64
	price    float64 // an order's limit (when hasLimit), an execution's price
	fee      float64
	cash     float64
	position float64
	event    int32
	kind     uint8
	side     uint8 // index in sideNames
	status   uint8 // index in statusNames
	hook     uint8 // index in hookNames
	hasLimit bool
	symbol   string
	text     string // an execution's reason, an unknown command's op
}

// logChunk is the number of records per chunk: the log grows by chunks so
// that it never copies what it holds.
const logChunk = 1024

// orderLog is the sequence of records, stored in chunks.
type orderLog struct {
	chunks [][]record
}

func (l *orderLog) add(r record) {
	n := len(l.chunks)
	if n == 0 || len(l.chunks[n-1]) == logChunk {
		l.chunks = append(l.chunks, make([]record, 0, logChunk))
		n++
	}
	l.chunks[n-1] = append(l.chunks[n-1], r)
}

// all yields the records in sequence.
func (l *orderLog) all() iter.Seq[*record] {
	return func(yield func(*record) bool) {
		for _, c := range l.chunks {
			for i := range c {
				if !yield(&c[i]) {
					return
				}
			}
		}
	}
}

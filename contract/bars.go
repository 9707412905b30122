package contract

// Bars is a column-oriented slice of bar events. All columns have the same length.
type Bars struct {
	Time   []int64 // unix nanoseconds, UTC
	Symbol []int32 // index into Setup.Data.Symbols
	Open   []float64
	High   []float64
	Low    []float64
	Close  []float64
	Volume []float64
}

// Len returns the number of bars.
func (b Bars) Len() int { return len(b.Time) }

// Slice returns rows [i, j) without copying.
func (b Bars) Slice(i, j int) Bars {
	return Bars{b.Time[i:j], b.Symbol[i:j], b.Open[i:j], b.High[i:j], b.Low[i:j], b.Close[i:j], b.Volume[i:j]}
}

// Batch is a run of calls delivered to the worker in one message. Within a
// replay an event index always names the same bar: the engine relies on it to
// avoid sending a bar twice.
type Batch struct {
	Executions []Execution
	Bars       Bars
	FirstEvent int // event index of Bars row 0
	// Ahead, when set, are the bars that follow Bars, which the driver
	// holds: its next batch, should the worker run every bar of this one
	// and leave the market nothing to decide before it (no order open,
	// no execution waiting). It is set only when the market had nothing
	// to decide when the driver made the batch. A worker may then send
	// the strategy its next batch before the driver asks for it, while
	// the driver takes the answer in (Yield.Ahead): the rest of Bars
	// after an answer that ran only part of them, or Ahead after one
	// that ran them all.
	Ahead Bars
}

package engine

import (
	"context"
	"encoding/json"
	"errors"
	"io"
)

// A Driver produces a job's events and turns the strategy's commands into
// executions: the backtest simulator is one. The engine owns the worker, the
// limits and the job folder; the driver owns the market.
type Driver interface {
	// Setup describes the replay. It is called once, before the worker starts,
	// and must not fail: the driver has validated its input when it was built.
	Setup() Setup
	// Drive replays the events through w until they are exhausted, then
	// returns nil. When w.Run returns an error, Drive returns it unchanged
	// (possibly wrapped). A yield with Stopped set means a stop was requested:
	// Drive returns ErrStopped after it has taken in that yield's commands.
	// A strategy whose orders would hold the replay at one event for ever
	// (on_execution placing more orders than it is given executions) makes
	// Drive return a *Failure of its own. Drive streams its record files to
	// rec as the replay goes (nothing it records needs to stay in memory)
	// and has written all of it when it returns, whatever the result.
	Drive(ctx context.Context, w Worker, rec Records) error
	// Outcome summarises the replay for the report. It is called once, after
	// Drive returned whatever the result, or without Drive when the worker
	// never became ready.
	Outcome() Outcome
}

// Records is where a driver streams the record files of its replay (the
// backtest's equity.csv, trades.csv and orders.csv) while it runs. The
// engine's Records writes each into the job folder under a size cap, moves
// it into the artifacts folder when the job ends, and reports what it cut
// or could not write; a driver only writes lines.
type Records interface {
	// Create starts the record file name, a plain file name, and returns
	// its writer. Each Write must end at the end of a line ("\n"), so that
	// a file is only ever cut between lines. Once a Write returns an error
	// the file takes nothing more (it reached its cap, or the disk failed):
	// the engine has said why, the driver may stop formatting lines for
	// it, and the replay goes on. Create does not fail: a file that cannot
	// be created gives a writer whose writes fail.
	Create(name string) io.Writer
}

// ErrStopped is returned by Driver.Drive when a stop request ended the replay early.
var ErrStopped = errors.New("stopped")

// Setup is what the worker and the report need to know before the replay.
type Setup struct {
	Data     DataInfo
	DataHash string  // hash of the replayed data, for the fingerprint
	Cash     float64 // starting cash, for ctx.cash
	Flags    string  // canonical text of the market flags (cash, fees, ...), for the fingerprint
}

// Outcome is the driver's part of the report.
type Outcome struct {
	Metrics    any // JSON object; DESIGN §5 lists the keys it must carry
	OrdersHash string
	Equity     []float64 // downsampled equity curve for display
}

// Worker is the engine's side of a running strategy, as a driver sees it.
type Worker interface {
	Manifest() Manifest
	// Run delivers b to the strategy: first b.Executions (on_execution, when
	// the strategy defines it), then one on_data call per bar. It returns after
	// the last call, or early after the first call that issued commands, or
	// early when a stop was requested. A hook failure or limit violation is
	// returned as a *Failure error.
	Run(ctx context.Context, b *Batch) (Yield, error)
}

// Manifest is what the worker reported after importing the strategy.
type Manifest struct {
	Name    string
	Hooks   []string
	Params  map[string]any // effective params (defaults with --param overrides applied)
	History int
}

// HasHook reports whether the strategy defines hook.
func (m Manifest) HasHook(hook string) bool {
	for _, h := range m.Hooks {
		if h == hook {
			return true
		}
	}
	return false
}

// Batch is a run of calls delivered to the worker in one message. Within a
// replay an event index always names the same bar: the engine relies on it to
// avoid sending a bar twice.
type Batch struct {
	Executions []Execution
	Bars       Bars
	FirstEvent int // event index of Bars row 0
}

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

// Execution statuses.
const (
	ExecFilled   = "filled"
	ExecRejected = "rejected"
	ExecCanceled = "canceled"
)

// Execution is an order fill, rejection or cancel, delivered to on_execution.
// Cash and Position are the portfolio after it, so the worker's ctx.cash and
// ctx.position() stay exact without a round trip.
type Execution struct {
	OrderID  int64   `json:"order_id"`
	Symbol   string  `json:"symbol"`
	Side     string  `json:"side"` // "buy" or "sell"
	Qty      float64 `json:"qty"`
	Price    float64 `json:"price"`
	Fee      float64 `json:"fee"`
	Status   string  `json:"status"`
	Reason   string  `json:"reason"`
	Time     int64   `json:"time"` // unix nanoseconds
	Event    int     `json:"event"`
	Cash     float64 `json:"cash"`
	Position float64 `json:"position"`
}

// Command operations.
const (
	OpBuy    = "buy"
	OpSell   = "sell"
	OpCancel = "cancel"
)

// Command is an order or cancel issued by a hook, committed when the hook succeeded.
type Command struct {
	Op      string   `json:"op"`
	OrderID int64    `json:"id"` // the new order's id, or the order to cancel
	Symbol  string   `json:"symbol,omitempty"`
	Qty     float64  `json:"qty,omitempty"`
	Limit   *float64 `json:"limit,omitempty"`
	// Hook is the hook that issued the command; the driver knows the event
	// from the yield.
	Hook string `json:"hook"`
}

// Yield is how far a Run got.
type Yield struct {
	Executions int       // executions of the batch delivered (hooks returned)
	Bars       int       // bars of the batch whose on_data returned
	Commands   []Command // commands of the last completed hook, when it issued any
	Stopped    bool      // a stop request ended the batch early
}

// UsageError is a problem with what the user asked for (exit code 2), as
// opposed to a failure of the strategy.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Error implements error for *Failure so that it travels through Driver.Drive.
func (f *Failure) Error() string { return f.Kind + " in " + f.Hook + ": " + f.Message }

// jsonObject marshals v, mapping nil to JSON null.
func jsonObject(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage("null"), nil
	}
	return json.Marshal(v)
}

package contract

import (
	"context"
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
	DataHash string  // hash of the replayed data, for the fingerprint; "" when Outcome.DataHash has it
	Cash     float64 // starting cash, for ctx.cash
	Flags    string  // canonical text of the market flags (cash, fees, ...), for the fingerprint
	// Market is the market settings the replay runs with, for the report:
	// every input of the fingerprint is in the report.
	Market MarketInfo
	// LocalFills says that the driver's market is stratbench's
	// (docs/fills-and-metrics.md: a market order fills at the open of its
	// symbol's next bar, times the slippage, with the fee and the cash and
	// position checks), so that the worker of a run of one symbol may
	// deliver such a fill itself from the bar it holds, without a round
	// trip; the driver still makes every fill, and the host checks the
	// worker's against it.
	LocalFills bool
}

// MarketInfo is the market a job replayed against: the report's "market".
type MarketInfo struct {
	Cash        float64 `json:"cash"`
	FeeBps      float64 `json:"fee_bps"`
	SlippageBps float64 `json:"slippage_bps"`
	AllowShort  bool    `json:"allow_short"`
}

// DataInfo describes the events a job replayed: the report's "data".
type DataInfo struct {
	Source  string   `json:"source"`
	From    string   `json:"from"`
	To      string   `json:"to"`
	Events  int      `json:"events"`
	Symbols []string `json:"symbols"`
	// Window is the replay window the user asked for (--from, --to), as
	// "FROM..TO" in RFC 3339 with "-" for an open end; From and To are the
	// first and last events inside it. Empty in reports of older versions.
	Window string `json:"window,omitempty"`
}

// DisplayPoints is the most points of an equity curve drawn for display:
// the run's (Outcome.Equity) and a stored job's alike, so that the same
// job's curve reads the same (docs/fills-and-metrics.md).
const DisplayPoints = 400

// Outcome is the driver's part of the report.
type Outcome struct {
	Metrics    Metrics
	OrdersHash string
	Equity     []float64 // downsampled equity curve for display, at most DisplayPoints
	// DataHash is the hash of the replayed data, for the fingerprint, when
	// the driver computes it as the data streams (Setup.DataHash is then
	// empty). It covers the whole replay's data also when the replay ended
	// early.
	DataHash string
	// Symbols are the figures of each symbol the replay filled an order
	// of, by symbol.
	Symbols map[string]SymbolFigures
}

// Package backtest is stratbench's market simulator: it replays bar data
// (a data.Set) in time order through the strategy (a contract.Worker), fills
// the strategy's orders, keeps the portfolio and computes the metrics. It is
// pure Go, reads nothing but its data's stream, and depends on nothing of
// stratbench but the shared types of contract and the bar sources of data:
// its record files go to the contract.Records that Drive is given. Its
// memory does not grow with the number of orders, executions, trades or
// events replayed, nor with the number of bars: the driver holds only the
// bars from the one before the replay's position to the furthest its
// batches look ahead (at most two batches, 131,072 bars: a batch and the
// next, which the worker may be sent ahead), and the stream reads the rest as
// it goes.
//
// NewDriver returns the contract.Driver of one backtest over a set; its
// errors are bad input (exit code 2). Each driver replays through a stream
// of its own (data.Set.Stream), so one set serves many drivers, one after
// another (watch mode) or at once (a sweep's runs). A bad bar met while the
// data streams ends Drive with a failure of kind data naming the file, the
// row or line and the column.
//
// What users rely on is documented once, in docs/: the data formats and
// their checks (docs/data.md), the fill model and the metrics
// (docs/fills-and-metrics.md), the record files and their caps
// (docs/limits.md, "stratbench's own memory and disk"). This comment says
// how the package keeps those promises.
//
// # Replay
//
// The driver sends bars to the worker in batches of up to 65,536 bars (and
// 4,096 executions). A batch ends just before the first bar at which an open
// order could fill, so fills only happen at a batch's first bar: the driver
// matches them before it sends the batch and puts their executions first
// (driver.go). The worker runs hooks until one places or cancels orders,
// then returns; the driver takes the commands in (orders.go) and continues
// from the next hook. A strategy that trades rarely therefore costs one
// round trip per order, not one per bar.
//
// When no order is open and no execution waits but the batch's, the driver
// also offers the bars after the batch (contract.Batch.Ahead): its next
// batch should the worker run them all and place no order that stays open.
// A worker may send them on before the driver has taken its answer in;
// the yield then says so (contract.Yield.Ahead), and the driver's next
// batch is exactly those bars (checkAhead).
//
// Executions wait for delivery in a queue of at most 64 MiB (pending.go):
// one hook's orders (a protocol message holds about 290,000) fit easily.
// More wait only when on_execution answers executions with more orders than
// it is given, which would hold the replay at one event for ever: Drive then
// returns a timeout in on_execution.
//
// # Bounded memory
//
// Only open orders are kept (at most 262,144); a closed order leaves memory
// and the latest 65,536 closed ones are remembered for the answers to
// cancels (closed.go). The metrics are computed as the replay goes
// (metrics.go): Welford's variance, a streaming median of the bar interval,
// trade statistics per closed round trip. The record files are formatted
// into one buffer each and handed over in chunks of whole lines
// (records.go); the display curve is a bounded sketch of per-event extremes,
// downsampled at the end (outcome.go).
//
// # Reproducibility
//
// The same strategy, data and flags give the same executions and metrics on
// every run. Outcome.DataHash is the set's digest (data.Set.Digest: the
// files' content that the window uses, hashed as it streams, and the
// window); Setup.Flags is the canonical text of --cash, --fee-bps, --slippage-bps,
// --allow-short and the window. Outcome.OrdersHash is the SHA-256 of a
// canonical text of every command and execution in sequence, with numbers
// written exactly, so two runs that traded differently in any detail get
// different hashes.
package backtest

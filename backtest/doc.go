// Package backtest is stratbench's market simulator: it loads bar data,
// replays it in time order through the strategy (an contract.Worker), fills
// the strategy's orders, keeps the portfolio and computes the metrics. It is
// pure Go and does no I/O beyond reading the data file: its record files go
// to the contract.Records that Drive is given. Its memory does not grow with
// the number of orders, executions, trades or events replayed (see the
// sections below for the bounds).
//
// Load (or Cache.Load) reads a data file, Sample returns the bundled data
// set, and NewDriver returns the contract.Driver of one backtest. Every error of
// Load, Cache.Load, ParseTime, ParseWindow and NewDriver is bad input (exit
// code 2); Load's errors are *DataError values naming the file, line and
// field. The sections below are written to be copied into the README.
//
// # Bar data
//
// CSV files have a header row naming the columns timestamp, symbol, open,
// high, low, close and volume, in any order and any letter case; other
// columns are ignored. Fields may be quoted as in RFC 4180 (without line
// breaks inside quotes). JSON Lines files (.jsonl, .ndjson, .json) hold one
// object per line with the same keys; prices and volume may be JSON numbers
// or numeric strings, the timestamp a string or a number, and other keys are
// ignored. A file with another extension is read as JSON Lines when it starts
// with "{" and as CSV otherwise. Blank lines are skipped.
//
// Timestamps are RFC 3339 ("2026-09-30T12:00:00Z", "2026-09-30T14:00:00+02:00",
// with fractional seconds if you like), "2026-09-30 12:00:00" (UTC, or with a
// zone after it), a bare date "2026-09-30" (midnight UTC), or unix time as an
// integer or decimal: a number below 100,000,000,000 is seconds, anything
// larger is milliseconds (so millisecond times before March 1973 cannot be
// written). --from and --to take the same forms; both ends are inclusive.
//
// Every row is checked before anything runs: numbers must be finite, prices
// greater than 0, volume at least 0, high at least max(open, close) and low
// at most min(open, close). The first bad row stops the load with an error
// such as
//
//	read bars data.csv line 12 field "close": not a number: "abc"
//
// Each symbol's rows must be in strictly increasing time order: a row that
// repeats or goes back in time for its symbol is an error naming both lines
// (stratbench does not sort a symbol's rows silently). Different symbols may
// come interleaved or one block after another: they are merged into one
// stream ordered by time, and bars of several symbols with the same
// timestamp are replayed in the order in which the symbols first appear in
// the file. A loaded bar takes 52 bytes of memory (a million bars: 50 MiB),
// and in watch mode a data file is parsed again only when it changed.
//
// Without --data, stratbench replays a bundled sample: synthetic 1-minute
// bars of two made-up symbols, SYNA and SYNB, over the 7 days from
// 2026-01-05T00:00:00Z (20,160 bars, source "bundled:synthetic"). It is
// generated from a fixed seed and is the same on every machine; it is not
// market data.
//
// # Orders and fills
//
// Every bar is an event, numbered from 0 in replay order. on_data runs once
// per event; on_execution runs once per fill, rejection and cancel, always
// before the on_data of the event at which it happens. ctx.cash and
// ctx.position(symbol) change only with executions; ctx.equity is the cash
// plus every position valued at its symbol's latest close (the current bar's
// close for the current symbol).
//
//   - A market order placed during an event fills at the open of the next
//     bar of its symbol whose timestamp is later than that event's: buys at
//     open × (1 + slippage), sells at open × (1 − slippage), with
//     slippage = --slippage-bps / 10,000. An order placed at 12:00 for
//     another symbol never fills at that symbol's 12:00 bar, which opened
//     before the bar the strategy has just seen closed.
//   - A limit buy fills on the first such bar whose low is at or below the
//     limit, at min(open, limit); a limit sell on the first whose high is at
//     or above the limit, at max(open, limit). Limit orders get no slippage.
//   - The fee of a fill is |qty × price| × --fee-bps / 10,000, paid from the
//     cash.
//   - A buy whose qty × price + fee exceeds the cash when it would fill is
//     rejected ("insufficient cash: need X, have Y"). A sell of more than the
//     position is rejected unless --allow-short ("insufficient position:
//     selling X, holding Y"). Quantities may be fractional.
//   - An order is rejected when it is placed if its symbol is not in the data
//     ("unknown symbol"), its quantity is not a finite number greater than 0,
//     or its limit is not; such rejections, and the answers to ctx.cancel,
//     reach on_execution at the start of the next event, before its fills,
//     carrying the time of the event at which the order was placed.
//   - ctx.cancel(id) on an open order gives a "canceled" execution; on an
//     unknown, filled, rejected or already canceled order a "rejected" one
//     with the reason. Closed orders leave memory: the latest 65,536 are
//     remembered, so a cancel of one of them says what happened to it
//     ("cancel: order 12 already filled", with its symbol, side and
//     quantity); for an order that closed before them the reason is generic
//     ("cancel: no open order 12 (nor among the latest 65536 closed orders,
//     which are remembered)") and the execution has no symbol, side or
//     quantity.
//   - Order ids must be new and increase (the bridge numbers orders from 1):
//     a repeated id is rejected ("duplicate order id 7" while that order is
//     open or remembered), and so is one not above the last id placed
//     ("order id 7 is not new: order ids must increase (the last was 9)").
//   - At most 262,144 orders may be open at once; an order beyond is
//     rejected ("too many open orders").
//   - Several orders filling at the same bar fill in the order they were
//     placed, each checked against the cash the earlier ones left.
//   - An order placed in on_execution is placed at the event whose fills are
//     being delivered: it can fill at the next bar of its symbol after that
//     event's timestamp.
//   - Orders still open at the end stay unfilled (metrics: open_orders), and
//     orders placed in on_finish never fill. Open positions are valued at the
//     last close: final equity is cash plus every position at its symbol's
//     last close.
//
// # Metrics
//
// The report's "metrics" object. The equity is marked after every event at
// that bar's close; the metrics below that use an equity curve use one point
// per distinct timestamp (the equity after the last bar with that timestamp).
// A value that would be undefined is 0, never NaN or infinite. Every metric
// is computed as the replay goes, in constant memory; the variance behind
// sharpe and volatility is Welford's, which may differ from a second pass
// over the returns in the last digits (1.5e-14 relative on the sample).
//
//   - start_equity: the starting cash (--cash). final_equity: cash plus
//     positions at the last close; final_cash, and positions (the symbols
//     still held, with their signed quantities).
//   - total_return: final_equity / start_equity − 1.
//   - bar_interval_s: the median time between consecutive timestamps: exact
//     while there are at most 4,096 distinct gaps (bar data has a handful),
//     within 0.8% beyond.
//     periods_per_year: the number of returns divided by the span of the data
//     in years (365.25 days), so that nights and weekends without bars do not
//     inflate annualised figures.
//   - sharpe: mean / sample standard deviation of the per-period returns,
//     × √periods_per_year, with a risk-free rate of 0; 0 with fewer than two
//     returns or no variance. A return is (equity − previous) / |previous|.
//     volatility: the standard deviation × √periods_per_year.
//   - sortino: mean return / downside deviation × √periods_per_year, where
//     the downside deviation is √(Σ min(r, 0)² / n); 0 with no negative
//     return.
//   - cagr: (final_equity / start_equity)^(1 / years) − 1 over the span of
//     the data; −1 when the final equity is 0 or below, and 0 when the span
//     is zero or the result would overflow.
//   - max_drawdown: the largest fall from a running peak, as a fraction of
//     the peak (0.12 is 12%); the start equity is the first peak.
//     max_drawdown_duration_s: the longest time from a peak until the equity
//     is back at it, or until the end of the data when it never is.
//   - calmar: cagr / max_drawdown; 0 without a drawdown.
//   - fills: filled orders. rejections: rejected orders and cancel requests.
//     cancels: cancelled orders. open_orders: orders still open at the end.
//     fees: the fees paid.
//   - trades: closed round trips, matched first in first out per symbol: a
//     fill that reduces a position closes the oldest open quantity first, and
//     each closed piece is one trade, long or short. A trade's P&L is net of
//     its share of the opening and closing fees (pro rata to quantity). Open
//     positions are not trades.
//   - win_rate: the share of trades with a P&L above 0. profit_factor: the
//     sum of winning P&L over the sum of losing P&L (0 when no trade lost).
//     expectancy: the mean P&L per trade, in cash.
//   - exposure: the share of timestamps at which any position was held.
//   - buy_and_hold_return: the mean over the symbols of last close / first
//     close − 1 over the replayed bars.
//   - warmup_bars: the events before the first order was placed (all of them
//     when the strategy never ordered). events: the events replayed.
//
// The job's artifacts folder gets equity.csv (every event: event, time,
// equity, cash), trades.csv (every closed trade) and orders.csv (every
// command as it was taken in and every execution, in sequence), written as
// the replay goes (the engine caps each file). The results pane shows the
// equity curve downsampled to 400 points (largest triangle three buckets,
// which keeps peaks and troughs) from a sketch of at most 4,096 buckets of
// events, each keeping its lowest and highest equity.
//
// # Reproducibility
//
// The same strategy, data and flags give the same executions and metrics on
// every run. Setup.DataHash is the SHA-256 of the data file's content (for
// the sample, of its bars) and the range of events the window selects;
// Setup.Flags is the canonical text of --cash, --fee-bps, --slippage-bps,
// --allow-short and the window. Outcome.OrdersHash is the SHA-256 of a
// canonical text of every command and execution in sequence, with numbers
// written exactly, so two runs that traded differently in any detail get
// different hashes.
//
// # Replay
//
// The driver sends bars to the worker in batches of up to 65,536 bars (and
// 4,096 executions). A batch ends just before the first bar at which an open
// order could fill, so fills only happen at a batch's first bar: the driver
// matches them before it sends the batch and puts their executions first.
// The worker runs hooks until one places or cancels orders, then returns; the
// driver takes the commands in and continues from the next hook. A strategy
// that trades rarely therefore costs one round trip per order, not one per
// bar. The simulator itself replays a million bars in well under a second.
//
// Executions wait for delivery in a queue of at most 64 MiB: one hook's
// orders (a protocol message holds about 290,000) fit easily. More wait only
// when on_execution answers executions with more orders than it is given,
// which would hold the replay at one event for ever: Drive then returns a
// timeout in on_execution.
package backtest

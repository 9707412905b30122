// Package check looks for the biases that make a backtest look better
// than it can be traded (`stratbench check STRATEGY`, docs/robustness.md):
// it replays the strategy's run in ways that must not change its decisions
// and names the first event where they do. It starts ordinary jobs (from
// the warm templates of an engine.Pool, so that a replay costs its bars and
// not an interpreter's start) and reads their orders records; it never
// changes the strategy or the data.
//
// # Determinism
//
// The same run twice, once cold (an interpreter of its own) and once
// forked from a warm template, must give the same orders hash. When it
// does not, the first event whose commands differ is named: unseeded
// randomness, the wall clock, or state kept across runs (a file the
// strategy writes and reads back). The other two checks compare replays
// with the first run, so they are skipped: a difference would say nothing.
//
// # Look-ahead
//
// Replays whose data ends right after chosen events: up to MaxCutEvents
// events where the first run placed or cancelled an order, spread evenly
// over them, and as many where it did not, spread evenly over the run.
// A replay's data ends at its event's time (every event of that time
// included). Up to there it must do exactly what the first run did: the
// same commands, from the same hooks, at every event (on_finish left out,
// which runs at a different point); a difference, or a failure (an index
// past the end of what it read), means a decision used data from after
// its time. When the data is files (--data) and the strategy is not
// sandboxed, the replay's process tree has its own mount namespace in
// which copies of the files cut at the same time are bind-mounted over
// their paths (data.CutCopies: CSV and JSON Lines keep their bytes,
// Parquet is written again; Feather files are not cut, and a note says
// so), so that a strategy that reads a data file itself, at import or in
// a hook, sees it end there too.
//
// # Warm-up
//
// Replays from LaterStarts later starts (the first event at or after a
// quarter, a half and three quarters of the run). A replay starts flat,
// with the starting cash, and its decisions are compared with the first
// run's at the same events, when both hold positions of the same sign in
// every symbol and the same working orders (by side, symbol and the event
// they were placed at: a decision of a strategy that is long is not that
// of one that is flat, nor that of one whose order has waited five bars
// that of one whose order was just placed), by what they decide: the hook, buy, sell or cancel, the
// symbol and the limit, not the quantity (sized from a cash that differs).
// The decisions must agree once the strategy has had the history its
// MANIFEST asks for: a disagreement at an event where the replay had
// given the event's symbol more bars than the MANIFEST's history means
// state kept beyond the history window (a warm-up longer than declared);
// decisions that disagree to the end mean path dependence.
package check

// Package contract holds the few types that the market simulator (backtest)
// and the job runner (engine) share, so that neither imports the other: the
// bars and executions a driver hands the worker, the commands that come
// back, the Worker and Driver interfaces between them, what a driver tells
// the report (Setup, Outcome, the typed Metrics) and the failure record a
// run ends with; and the rules that type a param given as text
// (ParseParam), which --param for one run and a sweep's --grid share.
//
// It imports nothing of stratbench but internal/units, so that a leaf such
// as backtest stays a leaf: `go list -deps ./backtest` names no engine,
// supervisor, python or sandbox package. docs/ARCHITECTURE.md shows where
// it sits.
package contract

// Package sweep is the core of stratbench's parameter sweeps and
// walk-forward analysis: it checks a sweep's spec, numbers and samples
// its combinations, tiles the data into walk-forward folds, ranks the
// results, builds the sweep document, keeps the sweep folder, and drives
// the runs through an executor. It starts no process itself, and imports
// nothing that does: a Starter (sweep/local's, which starts ordinary
// engine jobs) or an executor of its own (sweep/ray's) runs each
// combination and hands its report's result back.
//
// # Specs
//
// ParseSpec checks the flags against the strategy's MANIFEST defaults.
// --grid NAME=V1,V2,... lists values, typed like the param's default
// (int, float, bool as true/false, 1/0, yes/no or on/off, str) exactly as
// --param types them; when the MANIFEST declares no params, any name is
// taken and each value is typed by its look (an int, a finite float,
// true or false, else a string). A value may not be given twice. --grid
// NAME=LO:HI:STEP is an inclusive range: an int param takes int ranges
// only; a float range holds LO + i·STEP while at most HI, and HI itself
// when (HI−LO)/STEP is within 1e-9 (relative) of a whole number, each
// value rounded to the decimal places written (0:1:0.1 holds 0.3, not
// 0.30000000000000004). A param takes at most MaxAxisValues values and a
// grid at most MaxCombinations combinations. A str param reads
// "a:b:c" as one value; a bool param takes no range.
//
// --constraint EXPR is an expr-lang expression (https://expr-lang.org)
// over the params (every param a run gets: the defaults, --param and the
// swept values), compiled once, that must give a bool: 'fast < slow',
// 'stop < 0.1 and (fast * 2 <= slow or not trend)'. now() is not
// available. --metric names a numeric key of the job report's metrics
// (MetricKeys), sharpe by default, maximised unless --minimize. Every
// refusal is a *UsageError naming the part of the spec at fault (its
// Field, which the command line names as its flag) and the argument,
// before any run.
//
// # Combinations
//
// Combinations are numbered in grid order, the last --grid varying
// fastest, before the constraint and sampling: --grid a=1,2 --grid
// b=x,y,z numbers (1,x)=0, (1,y)=1, (1,z)=2, (2,x)=3 and so on. That
// number is a run's index; it depends only on the grid, so a resumed
// sweep gives the same combination the same index. Spec.Plan looks at
// every combination once (so a constraint that fails on one is refused
// before any run) and keeps nothing per combination but the sampled
// indices; Plan.All makes combinations as they are iterated.
//
// --random N --seed S runs N of the combinations the constraint keeps
// (all of them when fewer): combination i gets the key
// SplitMix64(S + (i+1)·0x9E3779B97F4A7C15), and the N kept combinations
// with the smallest keys (ties to the lower index) run, in index order.
// Integer arithmetic only: the same sample on every machine.
//
// # Walk-forward
//
// --walk-forward train=DUR,test=DUR[,step=DUR][,anchored] takes durations
// such as 30m, 12h, 5d, 2w, or 1d12h (ParseDuration). The data window is
// half-open: from --from (default: the first bar) to the last bar's time
// plus one bar interval, or to just after --to when that comes first.
// Fold k trains on [start + k·step, start + k·step + train) (anchored:
// [start, start + k·step + train)) and tests on the test that follows; a
// fold exists while its test window starts before the window's end, and a
// last test window that runs past the end is cut there. step defaults to
// test and may not be shorter. The bundled week (1-minute bars from
// 2026-01-05T00:00:00Z for 7 days) with train=2d,test=1d has 5 folds,
// training on [01-05, 01-07) … [01-09, 01-11) and testing on 01-07 …
// 01-11, each a whole day.
//
// Each fold sweeps its train window and runs its best combination on its
// test window. The out-of-sample metrics stitch the test runs by
// compounding their total returns in order; the walk-forward efficiency is
// the mean over folds of (out-of-sample return per year) / (in-sample
// return per year), each the simple total_return divided by its window's
// length in Julian years. It is null unless every fold has both and every
// in-sample return is above 0: a ratio over a loss says nothing. An
// efficiency near 1 means the test windows earned at the rate the
// optimiser saw in training; well below 1, that the optimiser fit noise.
//
// # Running a sweep
//
// A Runner runs what has no result: a plain sweep's combinations, or a
// walk-forward's train combinations of every fold and then every fold's
// best on its test window. It hands the items to a RunExecutor, appends
// each result to results.jsonl as its run ends (then OnResult, the JSONL
// stream), and rewrites sweep.json at most once a second and at the end
// (then OnSave). Closing its stop channel stops the sweep gracefully: no
// item starts, the runs in flight are asked to stop (on_finish runs) and
// have no result; the document is saved as stopped, and a resumed sweep
// runs the rest. Cancelling its context kills the runs in flight.
//
// Pool is the local executor: Slots runs at once, each slot taking the
// next item when its run ends, every run started by a Starter
// (sweep/local's). The Ray executor (sweep/ray's) implements RunExecutor
// itself.
//
// # The sweep folder
//
// $STRATBENCH_HOME/sweeps/SWEEP_ID/ holds sweep.json, the Document,
// written atomically (a temporary file, fsync, rename, fsync of the
// folder), and results.jsonl, one Result per line, each appended with one
// write and synced before Append returns; a write that fails part-way is
// cut back off, and a (fold, phase, index) that has a result is refused.
// A crash can leave only an incomplete last line, which reading back
// leaves out (and notes) and OpenResults cuts off. While a sweep's
// results are open they hold a lock that the kernel drops with the
// process: Store.Running tells a running sweep from one a crash left
// "running". Sweep ids (sw-20260105-093000.123-1a2b) sort by start time,
// are safe in file names and never look like a job id.
package sweep

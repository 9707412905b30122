// Package sweepview is the sweep view: `stratbench sweep` without --ci. It
// shows a sweep as its runs end: progress, the best runs so far, a heatmap
// of the objective over two swept params (the others held at the best
// run's values), and the folds of a walk-forward; enter opens a run's job
// in the workbench's panes (workbench.Inspector). Like the workbench, it
// consumes what it is given (the sweep's results and documents) and never
// reaches into a job.
package sweepview

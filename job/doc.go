// Package job is the data model of a job that every consumer reads: the
// report (Report, its Status and its blocks; the failure kinds are
// contract's), the event stream's types (Event and the values a running
// job publishes), the limits a job runs under (Limits), and the job store
// under $STRATBENCH_HOME (Store: the job folders' reports, logs, equity
// curves and artifact listings, and the precheck records).
//
// It is plain data and the store's own files (reading them; removing a
// job, recording a precheck): it imports no process code (no supervisor,
// sandbox or python package; `go list -deps ./job` says so, and a test),
// so that the workbench, the --ci printer, the sweeps and the HTML reports
// depend on it and not on the engine that runs jobs. Writing a job and
// telling whether the stratbench running it is alive are the engine's
// (engine.Start, engine.Recover, engine.RunnerGone). docs/ARCHITECTURE.md
// shows where it sits.
package job

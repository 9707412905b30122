// Package engine runs one job: it starts the strategy's Python worker
// (under the supervisor, in the sandbox when asked), drives it through the
// replay a contract.Driver hands it, enforces the hooks' deadlines and the
// limits of job.Limits, and writes the job folder (the report, the logs,
// the records and the strategy's artifacts) under $STRATBENCH_HOME.
//
// Start starts a job and returns at once; the job publishes its events
// (package job's Event values) on Job.Events and ends with its report
// (Job.Wait). A Pool starts many jobs of one strategy from warm templates.
// Recover cleans up after a stratbench that was killed while running jobs;
// FindPython and FindPythonCached resolve the interpreter.
//
// What the consumers read, the report, the events and the job store, is
// package job, which imports no process code: the workbench, the --ci
// printer, the sweeps and the HTML reports read a job through it, never
// through the engine. docs/ARCHITECTURE.md traces a run through the files
// of this package.
package engine

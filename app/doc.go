// Package app is what each stratbench command does: the workbench, one
// --ci run, --ci --watch, precheck, the jobs, status and logs commands, and
// data info and data convert.
// main.go builds the command tree and hands each command's options to one
// function here; every function returns an error that ExitCode maps to the
// process's exit status (0 passed, 1 failed, 2 bad usage or input, 128 + n
// after signal n stopped a run), as gotestsum's run does.
//
// app owns the policies that are the same for every command: where the
// strategy and STRATBENCH_HOME are, when the sandbox is required, the one
// signal policy (the first SIGINT, SIGTERM or SIGHUP stops the run in
// flight, a second kills it), and the text and JSON printers. It starts jobs
// through the engine and consumes their event stream; it never reaches into
// a worker. docs/ARCHITECTURE.md draws the rooms.
package app

// Version is stratbench's version: in the fingerprint of every job and the
// key of every precheck pass.
const Version = "0.1.0"

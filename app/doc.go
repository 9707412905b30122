// Package app is what each stratbench command does, as glue: parse the
// options, call a library, print. main.go builds the command tree and
// hands each command's options to one function here; every function
// returns an error that ExitCode maps to the process's exit status (0
// passed, 1 failed, 2 bad usage or input, 128 + n after signal n stopped a
// run), as gotestsum's run does.
//
// app owns what a STRATEGY argument may be, the flags' checks, the exit
// of the one signal policy (internal/signals), and the names of the flags
// the libraries' refusals carry as fields (flags.go): a library's typed
// refusal (a *sweep.UsageError, a *shortid.RefusedError, a
// *session.PolicyError, a *local.PythonChangedError) is mapped here to
// its flag and exit code. A command's runs go through package session
// (session.OpenUnder applies the environment's policies, the sandbox's
// check and the supervisor's host), a sweep's setup and runs through
// sweep/local (OpenSession, Create, Claim, Resume, RunHeadless, Drive)
// and sweep/ray, a sweep in the sweep view through ui/sweepview
// (RunDriven), ids through internal/shortid, the home's budget through
// prune; the printers are present's, the terminal's streams
// ui/components'.
// docs/ARCHITECTURE.md draws the rooms.
package app

// Version is stratbench's version: in the fingerprint of every job and the
// key of every precheck pass.
const Version = "0.1.0"

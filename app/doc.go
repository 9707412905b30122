// Package app is what each stratbench command does, as glue: parse the
// options, call a library, print. main.go builds the command tree and
// hands each command's options to one function here; every function
// returns an error that ExitCode maps to the process's exit status (0
// passed, 1 failed, 2 bad usage or input, 128 + n after signal n stopped a
// run), as gotestsum's run does.
//
// app owns the policies that are the same for every command: where the
// strategy and STRATBENCH_HOME are, when the sandbox is required, the
// budgets read from the environment, the exit of the one signal policy
// (internal/signals), and the names of the flags the libraries' refusals
// carry as fields (flags.go). A command's runs go through package session,
// a sweep through sweep/local and sweep/ray, the home's budget through
// prune, the printers are present's. docs/ARCHITECTURE.md draws the rooms.
package app

// Version is stratbench's version: in the fingerprint of every job and the
// key of every precheck pass.
const Version = "0.1.0"

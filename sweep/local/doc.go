// Package local runs a sweep's items as ordinary jobs on this machine
// (docs/ARCHITECTURE.md, "One sweep" and "Warm starts"): the Starter that
// sweep.Pool starts each run with, from warm templates its slots share;
// the data the runs share (Data); the MANIFEST read without running the
// strategy (ReadManifest) and what a sweep starts ahead of the
// interpreter's probe (Ahead); and a sweep set up to run (Sweep), whose
// runner runs on the local pool or on another executor (sweep/ray's). The
// Ray shard starts its node's runs through the same Starter.
//
// The package names no command-line flag: bad input is an *InputError or
// the sweep package's *sweep.UsageError, and the command says which flag
// or document field it came from.
package local

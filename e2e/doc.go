// Package e2e holds the end-to-end tests of the stratbench binary; it has
// no code of its own. TestMain (e2e_test.go) builds the binary once and
// works from the repository's root, so the tests name testdata/, python/
// and bench/ as a user in a clone would. Under -short they skip.
//
// A command line, its exit code and what it prints (usage errors,
// refusals, text output) is a testscript script in testdata/script (run
// by TestScripts, script_test.go, which lists the commands a script has
// beside testscript's own). What needs Go (processes and their pids,
// signals, peak memory, a Ray cluster, Chromium) is a Go test in a
// *_test.go file named for its topic, with the helpers of
// internal/e2etest (shared with e2e/ray, the sweeps on a Ray cluster):
// newEnv (an installation of its own), env.Run, the waits for a run,
// e2etest.DecodeReport, e2etest.DecodeSweep.
//
//	go test ./e2e                                # all of them
//	go test ./e2e -run TestScripts/usage_errors  # one script
//	go test ./e2e -run TestScripts -update       # rewrite the scripts' expected output
package e2e

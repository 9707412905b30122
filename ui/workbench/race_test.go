//go:build race

package workbench

// raceEnabled reports a -race build, whose slowdown timing bounds ignore.
const raceEnabled = true

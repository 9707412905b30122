//go:build !race

package ui

// raceEnabled reports a -race build, whose slowdown timing bounds ignore.
const raceEnabled = false

package components

import (
	"os"

	"github.com/charmbracelet/x/term"
)

// HasTerminal reports whether a program can draw and read keys: stdout is
// a terminal, and so is stdin or the process's controlling terminal.
func HasTerminal() bool {
	if !term.IsTerminal(os.Stdout.Fd()) {
		return false
	}
	if term.IsTerminal(os.Stdin.Fd()) {
		return true
	}
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return false
	}
	tty.Close()
	return true
}

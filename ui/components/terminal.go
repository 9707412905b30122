package components

import (
	"io"
	"os"

	"github.com/charmbracelet/x/term"
	"golang.org/x/sys/unix"
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

// IsTerminal reports whether v (a command's stream) is a file on a
// terminal.
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// Interactive reports whether out, where a view draws, and stdin, where
// it reads keys, are both terminals.
func Interactive(out io.Writer) bool { return IsTerminal(out) && IsTerminal(os.Stdin) }

// StdOutput returns the process's output streams. stdout and stderr write
// through copies of descriptors 1 and 2 (the copies live as long as the
// process): a write to a pipe whose reader went away then fails with
// EPIPE, where on 1 and 2 themselves the Go runtime kills the process
// with SIGPIPE, mid-run, before anything is saved (see
// signals.Policy.WatchOutput). A copy that cannot be made leaves the
// descriptor itself. progress, where a --ci run's progress line goes, is
// stderr when stderr is a terminal, else nil: progress never goes to a
// pipe or a file.
func StdOutput() (stdout, stderr, progress io.Writer) {
	if IsTerminal(os.Stderr) {
		progress = os.Stderr
	}
	return dupFile(os.Stdout), dupFile(os.Stderr), progress
}

// dupFile returns a new *os.File on a copy of f's descriptor (close-on-exec),
// or f when the copy fails.
func dupFile(f *os.File) *os.File {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return f
	}
	return os.NewFile(uintptr(fd), f.Name())
}

//go:build !linux || !amd64

package sandbox

import (
	"fmt"
	"os"
	"runtime"
)

// Check reports that the sandbox needs Linux on x86-64: the filters are
// written against the x86-64 system call table and Landlock is Linux-only.
func Check() error {
	return fmt.Errorf("sandbox unavailable: it needs Linux on x86-64 (amd64), this is %s/%s", runtime.GOOS, runtime.GOARCH)
}

// MaybeRunLauncher refuses to launch: this platform has no sandbox. It
// returns at once when the process was not started as a launcher.
func MaybeRunLauncher() {
	if len(os.Args) < 2 || os.Args[1] != launcherArg {
		return
	}
	fmt.Fprintf(os.Stderr, "stratbench sandbox: refusing to run: %v\n", Check())
	os.Exit(ExitCode)
}

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"stratbench/internal/e2etest"
	"strings"
	"syscall"
	"testing"
	"time"
)

// launcherDir is the folder of the interpreter launcher
// TestSweepForksFromTheProbedInterpreter makes: the test binary, linked
// there as python3 and re-executed by that name, appends its arguments to
// the folder's "calls" file, one line a call, and executes the interpreter
// the folder's "target" file names, as a launcher that is a program and
// not a script does.
const launcherDir = "stratbench-test-launcher"

// TestMain builds the binary once for every test of the package
// (e2etest.Main), unless the test binary runs as TestSweepForksFromTheProbedInterpreter's
// launcher.
func TestMain(m *testing.M) {
	if dir := filepath.Dir(os.Args[0]); filepath.Base(dir) == launcherDir {
		target, err := os.ReadFile(filepath.Join(dir, "target"))
		calls, line := filepath.Join(dir, "calls"), strings.Join(os.Args[1:], " ")
		if err == nil {
			err = appendLine(calls, line)
		}
		if err == nil && !strings.Contains(line, templateArg) {
			// The probe (or the MANIFEST read) waits for the template
			// started ahead of it to reach the launcher: the probe's
			// answer closes that template (another interpreter), and
			// would otherwise race its start. 10 s at most: a sweep that
			// starts no template ahead fails the test, not hangs it.
			waitForCall(calls, templateArg, 10*time.Second)
		}
		if err == nil {
			err = syscall.Exec(string(target), append([]string{string(target)}, os.Args[1:]...), os.Environ())
		}
		fmt.Fprintln(os.Stderr, "launcher:", err)
		os.Exit(127)
	}
	os.Exit(e2etest.Main(m))
}

// templateArg is what a template's command line holds (the bridge's
// --template).
const templateArg = " --template "

// waitForCall waits until the calls file holds a line containing text, or
// for up to within.
func waitForCall(calls, text string, within time.Duration) {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if b, _ := os.ReadFile(calls); strings.Contains(string(b), text) {
			return
		}
	}
}

// appendLine appends line and a newline to the file at path, one write
// (O_APPEND: the lines of processes that call at once do not mix).
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(line + "\n"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"stratbench/internal/testenv"
)

// binary is the stratbench the tests run, built once by TestMain ("" under
// -short, where the tests skip).
var binary string

// launcherDir is the folder of the interpreter launcher
// TestSweepForksFromTheProbedInterpreter makes: the test binary, linked
// there as python3 and re-executed by that name, appends its arguments to
// the folder's "calls" file, one line a call, and executes the interpreter
// the folder's "target" file names, as a launcher that is a program and
// not a script does.
const launcherDir = "stratbench-test-launcher"

// TestMain builds the binary once for every test of the package, from the
// repository's root, which it then works in: the tests name testdata/,
// python/ and bench/ from there.
func TestMain(m *testing.M) {
	if dir := filepath.Dir(os.Args[0]); filepath.Base(dir) == launcherDir {
		target, err := os.ReadFile(filepath.Join(dir, "target"))
		if err == nil {
			err = appendLine(filepath.Join(dir, "calls"), strings.Join(os.Args[1:], " "))
		}
		if err == nil {
			err = syscall.Exec(string(target), append([]string{string(target)}, os.Args[1:]...), os.Environ())
		}
		fmt.Fprintln(os.Stderr, "launcher:", err)
		os.Exit(127)
	}
	flag.Parse()
	root, err := testenv.RootDir()
	if err == nil {
		err = os.Chdir(root)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if testing.Short() {
		// The binary is built without the race detector: under -short (the
		// race run of CI) these tests would only repeat themselves.
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "stratbench-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "stratbench")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
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

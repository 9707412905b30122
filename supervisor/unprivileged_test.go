package supervisor

import (
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// unprivilegedUID is the user the package's tests run as again: nobody.
const unprivilegedUID = "65534"

// systemPython is an interpreter every user may run (python3 on PATH may be
// a pyenv build under /root).
const systemPython = "/usr/bin/python3"

// TestUnprivileged runs this package's tests again as an unprivileged user,
// through setpriv: the PID namespace then needs a user namespace, and the
// program must not keep the init's capabilities. It re-executes a copy of
// the test binary, with a copy of testdata, from a folder that user can
// read. It is skipped when not root (the unprivileged run itself) or when
// setpriv or the system's python3 is missing.
func TestUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot run the tests as another user (this may be the unprivileged run)")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv (util-linux) to run the tests as another user")
	}
	if _, err := os.Stat(systemPython); err != nil {
		t.Skipf("no %s readable by other users: %v", systemPython, err)
	}
	dir, err := os.MkdirTemp("", "stratbench-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	home := filepath.Join(dir, "home")
	if err := os.Chmod(dir, 0o755); err != nil { // MkdirTemp made it 0700
		t.Fatal(err)
	}
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "supervisor.test")
	if err := copyFile(os.Args[0], bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyTree("testdata", filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	args := []string{"--reuid=" + unprivilegedUID, "--regid=" + unprivilegedUID, "--clear-groups", "--", bin,
		"-test.count=1", "-test.v", "-test.timeout=5m", "-test.skip=^TestUnprivileged$"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(setpriv, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "TMPDIR=" + home, "STRATBENCH_PYTHON=" + systemPython}
	// A process that outlived the run while holding its output (the
	// very thing the tests look for) must not hang this test.
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests as uid %s failed: %v\n%s", unprivilegedUID, err, failures(out))
	}
	// The run must have covered the PID namespace, not skipped it.
	for _, want := range []string{"--- PASS: TestAttacksAreContained/pidns/", "--- PASS: TestProgramCannotReachItsInit/pidns", "--- PASS: TestPrivateTmp/full",
		"--- PASS: TestWarmRunsStartFresh", "--- PASS: TestWarmRunLimitsAreTheirOwn", "--- PASS: TestKilledWarmRunLeavesNothing",
		"--- PASS: TestTemplateEndKillsItsRuns", "--- PASS: TestLyingTemplate", "--- PASS: TestWarmRunCannotReachTemplate",
		"--- PASS: TestSlowRunInit", "--- PASS: TestBindMounts/seen_in_the_tree", "--- PASS: TestBindMountsWarm"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the unprivileged run has no %q:\n%s", want, out)
		}
	}
	t.Logf("as uid %s: %d tests passed, %d skipped", unprivilegedUID,
		strings.Count(string(out), "--- PASS"), strings.Count(string(out), "--- SKIP"))
}

// failures returns what tells why a verbose test run failed: the lines of
// failed tests and their messages, and everything after a panic (a timeout
// prints every goroutine).
func failures(out []byte) string {
	var b strings.Builder
	lines := strings.Split(string(out), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "panic: ") {
			b.WriteString(strings.Join(lines[i:], "\n"))
			break
		}
		if strings.Contains(l, "--- FAIL") || failLine.MatchString(l) {
			b.WriteString(l + "\n")
		}
	}
	if b.Len() == 0 {
		return string(out)
	}
	return b.String()
}

var failLine = regexp.MustCompile(`^\s+\S+_test\.go:\d+: `)

func copyFile(from, to string, mode fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// copyTree copies a folder of plain files, readable by everyone.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if err := os.MkdirAll(filepath.Join(to, rel), 0o755); err != nil {
				return err
			}
			return os.Chmod(filepath.Join(to, rel), 0o755) // whatever the umask
		}
		return copyFile(path, filepath.Join(to, rel), 0o644)
	})
}

// Package e2etest is what the end-to-end tests of the stratbench binary
// share (the packages e2e and e2e/ray): building the binary once for a
// test package (Main), an isolated installation to run it in (Env), and
// reading what a run or a sweep left in its home. It is test support: only
// _test.go files import it.
package e2etest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"stratbench/internal/proctest"
	"stratbench/internal/testenv"
	"stratbench/job"
	"stratbench/sweep"
)

// binary is the stratbench the tests run, built once by Main ("" under
// -short, where the tests skip).
var binary string

// Binary is the path of the stratbench binary Main built: "" under -short.
func Binary() string { return binary }

// Main builds the binary once for every test of the package whose
// TestMain calls it, from the repository's root, which it then works in:
// the tests name testdata/, python/ and bench/ from there. It returns
// m.Run's exit code. Under -short (the race run of CI) it builds nothing,
// and NewEnv skips: the tests would only repeat themselves.
func Main(m *testing.M) int {
	flag.Parse()
	root, err := testenv.RootDir()
	if err == nil {
		err = os.Chdir(root)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if testing.Short() {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "stratbench-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "stratbench")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		return 1
	}
	return m.Run()
}

// SweepStrategy is the strategy the sweep tests sweep: a moving-average
// crossover with int params fast and slow, fail_at (the fast value whose
// run raises) and slow_ms (a pause a bar, to keep runs in flight).
const SweepStrategy = "testdata/sweep/sma.py"

// Strategy is the path of a strategy of testdata/strategies.
func Strategy(name string) string { return filepath.Join("testdata", "strategies", name) }

// Env is one isolated stratbench installation: its own STRATBENCH_HOME and
// a TMPDIR that every worker inherits, which marks the processes of its
// trees.
type Env struct {
	T    *testing.T
	Home string
	Tmp  string
}

// SkipShort skips t under -short, where Main built no binary.
func SkipShort(t testing.TB) {
	t.Helper()
	if binary == "" {
		t.Skip("end-to-end tests of the binary do not run with -short")
	}
}

// NewEnv makes an installation of its own for t (skipped under -short).
func NewEnv(t *testing.T) *Env {
	t.Helper()
	SkipShort(t)
	return &Env{T: t, Home: t.TempDir(), Tmp: t.TempDir()}
}

// Command is stratbench with args, in the installation (its home, its
// TMPDIR, no colour).
func (e *Env) Command(args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "STRATBENCH_HOME="+e.Home, "TMPDIR="+e.Tmp, "NO_COLOR=1")
	return cmd
}

// Launch starts cmd, and kills it when the test ends before it has been
// waited for: a test that fails midway leaves nothing running.
func (e *Env) Launch(cmd *exec.Cmd) {
	e.T.Helper()
	LaunchCmd(e.T, cmd)
}

// LaunchCmd is Env.Launch for a command of any environment.
func LaunchCmd(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
}

// Result is what a command printed and its exit code.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs stratbench with args in the installation to its end.
func (e *Env) Run(args ...string) Result {
	e.T.Helper()
	return RunCmd(e.T, e.Command(args...))
}

// RunCmd runs cmd to its end.
func RunCmd(t testing.TB, cmd *exec.Cmd) Result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	return Result{Code: ExitCodeOf(t, cmd.Run()), Stdout: out.String(), Stderr: errb.String()}
}

// ExitCode is the exit code of a finished command whose Run or Wait
// returned err; any other error fails the test.
func (e *Env) ExitCode(err error) int {
	e.T.Helper()
	return ExitCodeOf(e.T, err)
}

// ExitCodeOf is Env.ExitCode for any test.
func ExitCodeOf(t testing.TB, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// DecodeReport decodes a job report (--output json).
func DecodeReport(t *testing.T, out string) *job.Report {
	t.Helper()
	return decodeJSON[job.Report](t, "report", out)
}

// DecodeSweep decodes a sweep document.
func DecodeSweep(t *testing.T, out string) *sweep.Document {
	t.Helper()
	return decodeJSON[sweep.Document](t, "sweep document", out)
}

// decodeJSON decodes out, or fails the test naming what it should be.
func decodeJSON[T any](t *testing.T, what, out string) *T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", what, err, out)
	}
	return &v
}

// ReadSweep reads a sweep's sweep.json.
func (e *Env) ReadSweep(id string) *sweep.Document {
	e.T.Helper()
	raw, err := os.ReadFile(filepath.Join(e.Home, "sweeps", id, sweep.DocumentFile))
	if err != nil {
		e.T.Fatal(err)
	}
	return DecodeSweep(e.T, string(raw))
}

// ReadResults reads a sweep's results.jsonl.
func (e *Env) ReadResults(id string) []sweep.Result {
	e.T.Helper()
	rb, err := sweep.ReadResults(filepath.Join(e.Home, "sweeps", id, sweep.ResultsFile))
	if err != nil {
		e.T.Fatal(err)
	}
	if rb.Dropped != 0 {
		e.T.Fatalf("results.jsonl ends with an incomplete line: %s", rb.Note)
	}
	return rb.Results
}

// FolderEntries counts the entries of a folder of the env's home (0 when
// it does not exist).
func (e *Env) FolderEntries(name string) int {
	entries, _ := os.ReadDir(filepath.Join(e.Home, name))
	return len(entries)
}

// SweepProcess is a sweep started in the background with its JSONL output
// read line by line.
type SweepProcess struct {
	Cmd    *exec.Cmd
	Lines  chan string   // its output, line by line; closed at its end
	Ended  chan struct{} // closed at the end of its output
	Stderr *bytes.Buffer // read it after cmd.Wait
}

// StartSweep starts stratbench with args (a sweep whose output is JSONL)
// and reads its output as it comes.
func (e *Env) StartSweep(args ...string) *SweepProcess {
	e.T.Helper()
	cmd := e.Command(args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.T.Fatal(err)
	}
	p := &SweepProcess{Cmd: cmd, Lines: make(chan string, 1024), Ended: make(chan struct{}), Stderr: &bytes.Buffer{}}
	cmd.Stderr = p.Stderr
	// A test that fails before it waits for the sweep leaves no sweep
	// running.
	e.Launch(cmd)
	// The reader's owner is the test: it ends with the process's output.
	go func() {
		defer close(p.Lines)
		defer close(p.Ended)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.Lines <- sc.Text()
		}
		io.Copy(io.Discard, out)
	}()
	return p
}

// Next returns the next line of output, or fails after timeout.
func (p *SweepProcess) Next(t *testing.T, timeout time.Duration) (string, bool) {
	t.Helper()
	select {
	case l, ok := <-p.Lines:
		return l, ok
	case <-time.After(timeout):
		t.Fatalf("no output line after %s", timeout)
	}
	return "", false
}

// Wait reads the rest of the output and waits for the sweep to end; it
// returns the lines not read before and the exit code.
func (p *SweepProcess) Wait(t *testing.T) ([]string, int) {
	t.Helper()
	var lines []string
	for l := range p.Lines {
		lines = append(lines, l)
	}
	return lines, ExitCodeOf(t, p.Cmd.Wait())
}

// WaitForJobSaying waits until a job folder that pattern globs, none of
// except (job ids), has a report that says running and a log that holds
// text, and returns it. It fails after timeout, or at once when ended (if
// not nil) is closed first.
func WaitForJobSaying(t *testing.T, timeout time.Duration, pattern, text string, ended <-chan struct{}, except []string) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-ended:
			t.Fatalf("the sweep ended before a run in flight printed %q", text)
		default:
		}
		dirs, _ := filepath.Glob(pattern)
		for _, dir := range dirs {
			var rep job.Report
			logs, err1 := os.ReadFile(filepath.Join(dir, "logs.jsonl"))
			rj, err2 := os.ReadFile(filepath.Join(dir, "job.json"))
			if err1 != nil || err2 != nil || slices.Contains(except, filepath.Base(dir)) || !bytes.Contains(logs, []byte(text)) ||
				json.Unmarshal(rj, &rep) != nil {
				continue
			}
			if rep.Status == job.StatusRunning {
				return dir
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no run in flight that printed %q after %s", text, timeout)
	return ""
}

// CopyFileTo copies the file from to the path to.
func CopyFileTo(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// CopyStrategy copies the strategy src into a folder of its own as name,
// and returns its path as a warm template's command line names it (the
// folder's symbolic links resolved), so that the test tells its template
// apart from any other test's.
func CopyStrategy(t *testing.T, src, name string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	CopyFileTo(t, src, path)
	return path
}

// KillTemplateOf kills the one warm template of strategy: the path its
// command line names, or that path's file name (a strategy as a Ray node
// unpacked it, in a folder of Ray's).
func KillTemplateOf(t *testing.T, strategy string) {
	t.Helper()
	templates := proctest.WarmTemplates(func(p proctest.Proc) bool {
		last := p.Args[len(p.Args)-1]
		return last == strategy || filepath.Base(last) == strategy
	})
	if len(templates) != 1 {
		t.Fatalf("templates %v of %s, want the one its run was forked from", templates, strategy)
	}
	if err := syscall.Kill(templates[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// BreakpointWindow is six hours of the bundled data: each symbol reaches
// bar 100, where debug_breakpoint.py calls breakpoint().
var BreakpointWindow = []string{"--from", "2026-01-05", "--to", "2026-01-05 06:00:00"}

// BreakpointNotice is the notice debug_breakpoint.py's breakpoint() writes
// without a debugger.
const BreakpointNotice = "stratbench: breakpoint() at debug_breakpoint.py:9 goes on"

// LogLines returns the lines of a job's logs.jsonl that contain text.
func (e *Env) LogLines(jobID, text string) []string {
	e.T.Helper()
	b, err := os.ReadFile(filepath.Join(e.Home, "jobs", jobID, "logs.jsonl"))
	if err != nil {
		e.T.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, text) {
			out = append(out, l)
		}
	}
	return out
}

// Pids are the pids a job's strategy recorded in its artifact pids.txt.
func (e *Env) Pids(jobID string) []int {
	data, _ := os.ReadFile(filepath.Join(e.Home, "jobs", jobID, "artifacts", "pids.txt"))
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, _ := strconv.Atoi(f)
		pids = append(pids, pid)
	}
	return pids
}

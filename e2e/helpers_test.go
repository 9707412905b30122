package e2e

// The helpers every kind of test here shares: an isolated installation
// (env) and running the binary in it, reading what it left in its home,
// following the processes it started, and waiting for a run to get
// somewhere.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/internal/proctest"
	"stratbench/job"
	"stratbench/sweep"
)

// sweepStrategy is the strategy the sweep tests sweep: a moving-average
// crossover with int params fast and slow, fail_at (the fast value whose
// run raises) and slow_ms (a pause a bar, to keep runs in flight).
const sweepStrategy = "testdata/sweep/sma.py"

// strategy is the path of a strategy of testdata/strategies.
func strategy(name string) string { return filepath.Join("testdata", "strategies", name) }

// env is one isolated stratbench installation: its own STRATBENCH_HOME and
// a TMPDIR that every worker inherits, which marks the processes of its
// trees.
type env struct {
	t    *testing.T
	home string
	tmp  string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	if binary == "" {
		t.Skip("end-to-end tests of the binary do not run with -short")
	}
	return &env{t: t, home: t.TempDir(), tmp: t.TempDir()}
}

func (e *env) command(args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "STRATBENCH_HOME="+e.home, "TMPDIR="+e.tmp, "NO_COLOR=1")
	return cmd
}

// launch starts cmd, and kills it when the test ends before it has been
// waited for: a test that fails midway leaves nothing running.
func (e *env) launch(cmd *exec.Cmd) {
	e.t.Helper()
	launch(e.t, cmd)
}

func launch(t testing.TB, cmd *exec.Cmd) {
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

// result is what a command printed and its exit code.
type result struct {
	code           int
	stdout, stderr string
}

func (e *env) run(args ...string) result {
	e.t.Helper()
	return runCmd(e.t, e.command(args...))
}

// runCmd runs cmd to its end.
func runCmd(t testing.TB, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	return result{exitCodeOf(t, cmd.Run()), out.String(), errb.String()}
}

// exitCode is the exit code of a finished command whose Run or Wait
// returned err; any other error fails the test.
func (e *env) exitCode(err error) int {
	e.t.Helper()
	return exitCodeOf(e.t, err)
}

func exitCodeOf(t testing.TB, err error) int {
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

// runOutputGone runs stratbench with a stdout whose reader has gone
// away before it starts (`stratbench … | true`): its first write to
// stdout fails with EPIPE.
func (e *env) runOutputGone(args ...string) result {
	e.t.Helper()
	cmd := e.command(args...)
	r, w, err := os.Pipe()
	if err != nil {
		e.t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &errb
	return result{code: e.exitCode(cmd.Run()), stderr: errb.String()}
}

// watchRun runs cmd to its end, as runCmd does. While it runs, probe is
// called with its pid every interval (what probe gathers is the caller's
// to read once watchRun has returned), and during, when not nil, once it
// has started. A test that fails in during leaves nothing running.
func watchRun(t testing.TB, cmd *exec.Cmd, interval time.Duration, probe, during func(pid int)) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	launch(t, cmd)
	pid := cmd.Process.Pid
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	// The prober's owner is watchRun, which stops it and waits for it.
	go func() {
		defer wg.Done()
		for {
			probe(pid)
			select {
			case <-done:
				return
			case <-time.After(interval):
			}
		}
	}()
	stop := sync.OnceFunc(func() { close(done); wg.Wait() })
	defer stop()
	if during != nil {
		during(pid)
	}
	err := cmd.Wait()
	stop()
	return result{exitCodeOf(t, err), out.String(), errb.String()}
}

// peakRSS is the peak resident memory (VmHWM) of the process, in bytes;
// 0 once it has ended.
func peakRSS(pid int) int64 { return proctest.Status(pid, "VmHWM") << 10 }

// runWithPeakRSS runs stratbench and returns its result and the peak
// resident memory of the stratbench process itself (VmHWM, polled until
// it exits).
func (e *env) runWithPeakRSS(args ...string) (result, int64) {
	e.t.Helper()
	var peak int64
	r := watchRun(e.t, e.command(args...), 5*time.Millisecond, func(pid int) { peak = max(peak, peakRSS(pid)) }, nil)
	return r, peak
}

func decodeReport(t *testing.T, out string) *job.Report {
	t.Helper()
	var rep job.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out)
	}
	return &rep
}

// decodeSweep decodes a sweep document.
func decodeSweep(t *testing.T, out string) *sweep.Document {
	t.Helper()
	var doc sweep.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("sweep document is not JSON: %v\n%s", err, out)
	}
	return &doc
}

// readSweep reads a sweep's sweep.json.
func (e *env) readSweep(id string) *sweep.Document {
	e.t.Helper()
	raw, err := os.ReadFile(filepath.Join(e.home, "sweeps", id, sweep.DocumentFile))
	if err != nil {
		e.t.Fatal(err)
	}
	return decodeSweep(e.t, string(raw))
}

// readResults reads a sweep's results.jsonl.
func (e *env) readResults(id string) []sweep.Result {
	e.t.Helper()
	rb, err := sweep.ReadResults(filepath.Join(e.home, "sweeps", id, sweep.ResultsFile))
	if err != nil {
		e.t.Fatal(err)
	}
	if rb.Dropped != 0 {
		e.t.Fatalf("results.jsonl ends with an incomplete line: %s", rb.Note)
	}
	return rb.Results
}

// folderEntries counts the entries of a folder of the env's home (0 when
// it does not exist).
func (e *env) folderEntries(name string) int {
	entries, _ := os.ReadDir(filepath.Join(e.home, name))
	return len(entries)
}

// jobIDs are the ids of the job folders in the home, oldest first.
func (e *env) jobIDs() []string {
	entries, _ := os.ReadDir(filepath.Join(e.home, "jobs"))
	var ids []string
	for _, entry := range entries {
		ids = append(ids, entry.Name())
	}
	return ids
}

// editJSON rewrites the JSON object in the file at path through edit,
// which gets it as JSON values (numbers kept as written: a float param's
// 5.0 stays a float).
func editJSON(t *testing.T, path string, edit func(doc map[string]any)) {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	if body, err = json.MarshalIndent(doc, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
}

// treeProcesses are the live processes whose environment holds
// TMPDIR=tmp: an env's TMPDIR, which every process of its trees inherits
// (zombies cannot be read, and are not listed).
func treeProcesses(tmp string) []proctest.Proc {
	procs, _ := proctest.Processes(func(p proctest.Proc) bool { return p.HasEnv("TMPDIR=" + tmp) })
	return procs
}

// assertNoLeftovers checks, by pid and by the TMPDIR every worker inherits,
// that no process of the env's trees is alive. With the "pidns" tree
// tracking the pids a strategy records are its namespace's, not ours (and
// the kernel ended the namespace with the tree): only TMPDIR is checked.
func (e *env) assertNoLeftovers(pids []int, tracking string) {
	e.t.Helper()
	if tracking == "pidns" {
		pids = nil
	}
	for _, pid := range pids {
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !bytes.Contains(stat, []byte(") Z ")) {
			e.t.Errorf("process %d of the tree is still alive", pid)
		}
	}
	for _, p := range treeProcesses(e.tmp) {
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.PID)); exe != binary {
			e.t.Errorf("process %d (%s) of the tree is still alive", p.PID, exe)
		}
	}
}

// waitForLog waits until some job folder under home has a logs.jsonl
// containing text, and returns that job's id.
func waitForLog(t *testing.T, home, text string, timeout time.Duration) string {
	t.Helper()
	return waitForLogs(t, home, text, 1, timeout)[0]
}

// waitForLogs waits until n job folders under home have a logs.jsonl
// containing text, and returns their ids.
func waitForLogs(t *testing.T, home, text string, n int, timeout time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var found []string
		matches, _ := filepath.Glob(filepath.Join(home, "jobs", "*", "logs.jsonl"))
		for _, m := range matches {
			if data, err := os.ReadFile(m); err == nil && bytes.Contains(data, []byte(text)) {
				found = append(found, filepath.Base(filepath.Dir(m)))
			}
		}
		if len(found) >= n {
			return found
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d job logs with %q after %s", len(found), n, text, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sweepProcess is a sweep started in the background with its JSONL output
// read line by line.
type sweepProcess struct {
	cmd    *exec.Cmd
	lines  chan string
	ended  chan struct{} // closed at the end of its output
	stderr *bytes.Buffer // read it after cmd.Wait
}

func (e *env) startSweep(args ...string) *sweepProcess {
	e.t.Helper()
	cmd := e.command(args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	p := &sweepProcess{cmd: cmd, lines: make(chan string, 1024), ended: make(chan struct{}), stderr: &bytes.Buffer{}}
	cmd.Stderr = p.stderr
	// A test that fails before it waits for the sweep leaves no sweep
	// running.
	e.launch(cmd)
	// The reader's owner is the test: it ends with the process's output.
	go func() {
		defer close(p.lines)
		defer close(p.ended)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		io.Copy(io.Discard, out)
	}()
	return p
}

// next returns the next line of output, or fails after timeout.
func (p *sweepProcess) next(t *testing.T, timeout time.Duration) (string, bool) {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		return l, ok
	case <-time.After(timeout):
		t.Fatalf("no output line after %s", timeout)
	}
	return "", false
}

// wait reads the rest of the output and waits for the sweep to end; it
// returns the lines not read before and the exit code.
func (p *sweepProcess) wait(t *testing.T) ([]string, int) {
	t.Helper()
	var lines []string
	for l := range p.lines {
		lines = append(lines, l)
	}
	return lines, exitCodeOf(t, p.cmd.Wait())
}

// waitForRunInFlight waits until a job that is none of except (job ids) is
// running and its strategy has printed "first bar".
func (e *env) waitForRunInFlight(timeout time.Duration, except ...string) {
	e.t.Helper()
	e.waitForRunSaying(timeout, "first bar", nil, except...)
}

// waitForRunSaying waits until a job that is none of except (job ids) is
// running and its strategy has printed text, and returns its id. It fails
// at once when ended is closed first.
func (e *env) waitForRunSaying(timeout time.Duration, text string, ended <-chan struct{}, except ...string) string {
	e.t.Helper()
	return filepath.Base(waitForJobSaying(e.t, timeout, filepath.Join(e.home, "jobs", "*"), text, ended, except))
}

// waitForJobSaying waits until a job folder that pattern globs, none of
// except (job ids), has a report that says running and a log that holds
// text, and returns it. It fails after timeout, or at once when ended (if
// not nil) is closed first.
func waitForJobSaying(t *testing.T, timeout time.Duration, pattern, text string, ended <-chan struct{}, except []string) string {
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

func copyFileTo(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyStrategy copies the strategy src into a folder of its own as name,
// and returns its path as a warm template's command line names it (the
// folder's symbolic links resolved), so that the test tells its template
// apart from any other test's.
func copyStrategy(t *testing.T, src, name string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	copyFileTo(t, src, path)
	return path
}

// killTemplateOf kills the one warm template of strategy: the path its
// command line names, or that path's file name (a strategy as a Ray node
// unpacked it, in a folder of Ray's).
func killTemplateOf(t *testing.T, strategy string) {
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

// agree reports whether a and b agree to 1e-9 relative (absolute near 0).
func agree(a, b float64) bool {
	d := math.Abs(a - b)
	return d <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) || d < 1e-12
}

// snapshot lists the files under dirs with their mode, size,
// modification time and content hash (a link's target), sorted: two
// snapshots are equal when nothing there changed. A FIFO is not opened.
func snapshot(t *testing.T, dirs ...string) []string {
	t.Helper()
	var out []string
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				out = append(out, path+": "+err.Error())
				return nil
			}
			info, err := os.Lstat(path)
			if err != nil {
				return nil
			}
			line := fmt.Sprintf("%s %v %d %d", path, info.Mode(), info.Size(), info.ModTime().UnixNano())
			switch {
			case info.Mode().IsRegular():
				b, _ := os.ReadFile(path)
				line += fmt.Sprintf(" %x", sha256.Sum256(b))
			case info.Mode()&os.ModeSymlink != 0:
				target, _ := os.Readlink(path)
				line += " -> " + target
			}
			out = append(out, line)
			return nil
		})
	}
	sort.Strings(out)
	return out
}

// openPTY opens a pseudo-terminal: its terminal side, and the side that
// types into it and reads what was written to it. Both are closed when
// the test ends.
func openPTY(t *testing.T) (terminal, typist *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	terminal, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { terminal.Close() })
	return terminal, master
}

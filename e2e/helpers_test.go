package e2e

// The helpers every kind of test here shares: an isolated installation
// (env) and running the binary in it, reading what it left in its home,
// following the processes it started, and waiting for a run to get
// somewhere.

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/internal/e2etest"
	"stratbench/internal/proctest"
)

// env is an isolated installation (e2etest.Env) with the methods only
// this package's tests use.
type env struct{ *e2etest.Env }

func newEnv(t *testing.T) *env {
	t.Helper()
	return &env{e2etest.NewEnv(t)}
}

// sandboxModes runs f in two parallel subtests, "plain" and "sandbox",
// each with an env of its own and the --ci arguments --output json and
// --python py, then extra, and --sandbox in the second (sandboxed).
func sandboxModes(t *testing.T, py string, extra []string, f func(t *testing.T, e *env, args []string, sandboxed bool)) {
	for _, sandboxed := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "sandbox"}[sandboxed]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"--ci", "--output", "json", "--python", py}, extra...)
			if sandboxed {
				args = append(args, "--sandbox")
			}
			f(t, newEnv(t), args, sandboxed)
		})
	}
}

// runOutputGone runs stratbench with a stdout whose reader has gone
// away before it starts (`stratbench … | true`): its first write to
// stdout fails with EPIPE.
func (e *env) runOutputGone(args ...string) e2etest.Result {
	e.T.Helper()
	cmd := e.Command(args...)
	r, w, err := os.Pipe()
	if err != nil {
		e.T.Fatal(err)
	}
	r.Close()
	defer w.Close()
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &errb
	return e2etest.Result{Code: e.ExitCode(cmd.Run()), Stderr: errb.String()}
}

// watchRun runs cmd to its end, as runCmd does. While it runs, probe is
// called with its pid every interval (what probe gathers is the caller's
// to read once watchRun has returned), and during, when not nil, once it
// has started. A test that fails in during leaves nothing running.
func watchRun(t testing.TB, cmd *exec.Cmd, interval time.Duration, probe, during func(pid int)) e2etest.Result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	e2etest.LaunchCmd(t, cmd)
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
	return e2etest.Result{Code: e2etest.ExitCodeOf(t, err), Stdout: out.String(), Stderr: errb.String()}
}

// peakRSS is the peak resident memory (VmHWM) of the process, in bytes;
// 0 once it has ended.
func peakRSS(pid int) int64 { return proctest.Status(pid, "VmHWM") << 10 }

// runWithPeakRSS runs stratbench and returns its result and the peak
// resident memory of the stratbench process itself (VmHWM, polled until
// it exits).
func (e *env) runWithPeakRSS(args ...string) (e2etest.Result, int64) {
	e.T.Helper()
	var peak int64
	r := watchRun(e.T, e.Command(args...), 5*time.Millisecond, func(pid int) { peak = max(peak, peakRSS(pid)) }, nil)
	return r, peak
}

// jobIDs are the ids of the job folders in the home, oldest first.
func (e *env) jobIDs() []string {
	entries, _ := os.ReadDir(filepath.Join(e.Home, "jobs"))
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
	e.T.Helper()
	if tracking == "pidns" {
		pids = nil
	}
	for _, pid := range pids {
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !bytes.Contains(stat, []byte(") Z ")) {
			e.T.Errorf("process %d of the tree is still alive", pid)
		}
	}
	for _, p := range treeProcesses(e.Tmp) {
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.PID)); exe != e2etest.Binary() {
			e.T.Errorf("process %d (%s) of the tree is still alive", p.PID, exe)
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

// waitForRunInFlight waits until a job that is none of except (job ids) is
// running and its strategy has printed "first bar".
func (e *env) waitForRunInFlight(timeout time.Duration, except ...string) {
	e.T.Helper()
	e.waitForRunSaying(timeout, "first bar", nil, except...)
}

// waitForRunSaying waits until a job that is none of except (job ids) is
// running and its strategy has printed text, and returns its id. It fails
// at once when ended is closed first.
func (e *env) waitForRunSaying(timeout time.Duration, text string, ended <-chan struct{}, except ...string) string {
	e.T.Helper()
	return filepath.Base(e2etest.WaitForJobSaying(e.T, timeout, filepath.Join(e.Home, "jobs", "*"), text, ended, except))
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

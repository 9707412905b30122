package engine

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestStackDumpParse: of faulthandler's dump the current thread's frames
// are kept, most recent call last, the bridge's left out, the strategy's
// marked with their source; lines written before the ask are ignored.
func TestStackDumpParse(t *testing.T) {
	dir := t.TempDir()
	strategy := filepath.Join(dir, "strategy.py")
	helper := filepath.Join(dir, "helpers.py")
	if err := os.WriteFile(strategy, []byte("import helpers\n\ndef on_data(ctx, history):\n    helpers.spin()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(helper, []byte("def spin():\n    while True:\n        pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bridge := "/home/ana/.cache/stratbench/bridge-1/stratbench_bridge.py"
	s := &stackDump{}
	s.line(`  File "` + strategy + `", line 1 in forged_before_the_ask`)
	s.asked = true
	for _, l := range []string{
		"Fatal Python error: Aborted",
		"",
		"Thread 0x00007f0000000001 (most recent call first):",
		`  File "/usr/lib/python3.11/threading.py", line 320 in wait`,
		"",
		"Current thread 0x00007f0000000002 (most recent call first):",
		`  File "` + helper + `", line 3 in spin`,
		`  File "` + strategy + `", line 4 in on_data`,
		`  File "/usr/lib/python3/dist-packages/lib.py", line 9 in call`,
		`  File "` + bridge + `", line 810 in _run_bars`,
		"",
		"Extension modules: numpy.core._multiarray_umath (total: 1)",
	} {
		s.line(l)
	}
	tb, frames := s.stack(strategy, bridge)
	var got []string
	for _, fr := range frames {
		mark := " "
		if fr.User {
			mark = "▶"
		}
		got = append(got, mark+filepath.Base(fr.File)+":"+fr.Function+":"+fr.Source)
	}
	want := []string{" lib.py:call:", "▶strategy.py:on_data:helpers.spin()", "▶helpers.py:spin:pass"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("frames %q, want %q", got, want)
	}
	if !strings.HasSuffix(tb, "line 3, in spin\n    pass\n") || strings.Contains(tb, "forged") || strings.Contains(tb, "bridge") {
		t.Fatalf("traceback:\n%s", tb)
	}
	if !s.complete(s.last) {
		t.Fatal("a dump whose current thread block ended is not complete")
	}
	if tb, frames := (&stackDump{asked: true}).stack(strategy, bridge); tb != "" || frames != nil {
		t.Fatalf("no dump gave %q %v", tb, frames)
	}
}

// spinner starts a Python process that enables faulthandler (with
// blockAbort, it blocks SIGABRT first) and, in spin(), says "ready" and
// spins; its stderr lines go to s.line. The channel is closed once it has
// exited and its stderr is read.
func spinner(t *testing.T, s *stackDump, blockAbort bool) (*exec.Cmd, <-chan struct{}) {
	t.Helper()
	script := "import faulthandler, signal, sys\nfaulthandler.enable()\n"
	if blockAbort {
		script += "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGABRT})\n"
	}
	script += "def spin():\n    print('ready', flush=True)\n    while True:\n        pass\nspin()\n"
	return startSpinner(t, s, script)
}

// startSpinner runs script, which must print "ready" once it spins; see
// spinner.
func startSpinner(t *testing.T, s *stackDump, script string) (*exec.Cmd, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command(findPython(t).Executable, "-c", script)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("the spinner said %q, %v", line, err)
	}
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.line(sc.Text())
		}
		cmd.Wait()
	}()
	return cmd, gone
}

// TestStackWaitsForAWorkerThatCannotRun: a worker that has not run since
// the ask (here stopped; on a busy machine, not scheduled) gets more than
// one grace to write its stack, and its stack is kept.
func TestStackWaitsForAWorkerThatCannotRun(t *testing.T) {
	s := &stackDump{grace: 50 * time.Millisecond}
	cmd, gone := spinner(t, s, false)
	pid := cmd.Process.Pid
	if _, ok := processCPU(pid); !ok {
		t.Skip("the kernel counts no CPU time in /proc/PID/task/*/schedstat: the grace is never extended")
	}
	if err := unix.Kill(pid, unix.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Stopped before the ask: a SIGABRT that came first would be handled
	// first (the lower number), and the stop could catch the handler.
	waitStatus(t, pid, "State:", func(v string) bool { return strings.HasPrefix(v, "T") })
	asked := make(chan struct{})
	go func() {
		defer close(asked)
		s.ask(pid, gone)
	}()
	// The signal waits, pending, while the process is stopped.
	waitStatus(t, pid, "ShdPnd:", func(v string) bool {
		mask, err := strconv.ParseUint(v, 16, 64)
		return err == nil && mask&(1<<(unix.SIGABRT-1)) != 0
	})
	// Past the first grace (a worker that cannot run is not seen to run
	// later), then the worker may run. Only time shows that ask waits on:
	// one that gives up is caught the moment it does.
	select {
	case <-asked:
		t.Fatalf("ask gave up within %s on a worker that had not run since", 3*s.grace)
	case <-time.After(3 * s.grace):
	}
	if err := unix.Kill(pid, unix.SIGCONT); err != nil {
		t.Fatal(err)
	}
	<-asked
	<-gone
	if _, frames := s.stack("/nowhere/strategy.py", "/nowhere/bridge.py"); len(frames) == 0 || frames[len(frames)-1].Function != "spin" {
		t.Fatalf("frames %+v, want the spinner's stack ending in spin; lines %q", frames, s.lines)
	}
}

// TestStackGraceEndsForAWorkerThatRuns: a worker that runs but writes no
// stack (it blocks SIGABRT) is given one grace, not stackGraceMax.
func TestStackGraceEndsForAWorkerThatRuns(t *testing.T) {
	s := &stackDump{grace: 50 * time.Millisecond}
	cmd, gone := spinner(t, s, true)
	start := time.Now()
	s.ask(cmd.Process.Pid, gone)
	if took := time.Since(start); took >= stackGraceMax*4/5 {
		t.Fatalf("ask waited %s for a worker that runs and writes nothing, want well under %s", took, stackGraceMax)
	}
	if _, frames := s.stack("/nowhere/strategy.py", "/nowhere/bridge.py"); len(frames) != 0 {
		t.Fatalf("frames %+v from a worker that blocks SIGABRT", frames)
	}
}

// TestStackGraceEndsForAWorkerThatRunsElsewhere: a worker whose main
// thread sleeps with SIGABRT blocked while another thread spins has run
// too: it is given one grace, not stackGraceMax.
func TestStackGraceEndsForAWorkerThatRunsElsewhere(t *testing.T) {
	s := &stackDump{grace: 50 * time.Millisecond}
	cmd, gone := startSpinner(t, s, "import faulthandler, signal, threading, time\nfaulthandler.enable()\n"+
		"signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGABRT})\n"+
		"def spin():\n    print('ready', flush=True)\n    while True:\n        pass\n"+
		"threading.Thread(target=spin, daemon=True).start()\nwhile True:\n    time.sleep(1)\n")
	start := time.Now()
	s.ask(cmd.Process.Pid, gone)
	if took := time.Since(start); took >= stackGraceMax*4/5 {
		t.Fatalf("ask waited %s for a worker that spins in another thread, want well under %s", took, stackGraceMax)
	}
}

// waitStatus waits until the field of /proc/PID/status (its name with the
// colon) has a value ok accepts.
func waitStatus(t *testing.T, pid int, field string, ok func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, found := strings.CutPrefix(l, field); found && ok(strings.TrimSpace(v)) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d: %s never as wanted:\n%s", pid, field, b)
		}
		time.Sleep(time.Millisecond)
	}
}

package supervisor

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWatchRootWaitsOnThePoller: a run's root is watched through the
// runtime's poller (its pidfd accepts a deadline, which only a polled file
// does, and no thread of ours waits in poll(2) meanwhile), and its end is
// reported once the process has exited, not before.
func TestWatchRootWaitsOnThePoller(t *testing.T) {
	cmd := exec.Command(python(t), "-c", "import sys; sys.stdin.read()")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	fd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	if err != nil {
		t.Skipf("no pidfd: %v", err)
	}
	root := rootFile(fd)
	if err := root.SetReadDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Errorf("the root's pidfd is not waited on by the poller: %v", err)
	}
	root.SetReadDeadline(time.Time{})

	tr := &tree{rootExit: make(chan *os.ProcessState, 1)}
	go tr.watchRoot(root)
	// Only a wait can show that nothing comes early; the root runs until
	// its input ends.
	select {
	case <-tr.rootExit:
		t.Fatal("the root's end was reported while it runs")
	case <-time.After(200 * time.Millisecond):
	}
	if tids := threadsInPoll(t); len(tids) > 0 {
		t.Errorf("threads %v wait in poll(2): the root is not watched through the poller", tids)
	}
	stdin.Close() // the root reads to the end of its input, then exits
	select {
	case <-tr.rootExit:
	case <-time.After(10 * time.Second):
		t.Fatal("the root's end was not reported")
	}
	cmd.Wait()
}

// threadsInPoll lists the threads of this process blocked in poll(2) or
// ppoll(2), from /proc/self/task/*/syscall (the number of the system call
// a thread is blocked in). The Go runtime itself waits in epoll and
// futexes, never in poll.
func threadsInPoll(t *testing.T) []string {
	t.Helper()
	polls := map[string]bool{strconv.Itoa(unix.SYS_PPOLL): true}
	if runtime.GOARCH == "amd64" {
		polls["7"] = true // poll(2), which x/sys's Poll calls on amd64
	}
	tasks, err := filepath.Glob("/proc/self/task/*/syscall")
	if err != nil || len(tasks) == 0 {
		t.Skipf("no /proc/self/task: %v", err)
	}
	var in []string
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		if fields := strings.Fields(string(b)); len(fields) > 0 && polls[fields[0]] {
			in = append(in, filepath.Base(filepath.Dir(f)))
		}
	}
	return in
}

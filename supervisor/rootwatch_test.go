package supervisor

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWatchRootWaitsOnThePoller: a run's root is watched through the
// runtime's poller (its pidfd accepts a deadline, which only a polled file
// does), and its end is reported once the process has exited, not before.
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
	select {
	case <-tr.rootExit:
		t.Fatal("the root's end was reported while it runs")
	default:
	}
	stdin.Close() // the root reads to the end of its input, then exits
	select {
	case <-tr.rootExit:
	case <-time.After(10 * time.Second):
		t.Fatal("the root's end was not reported")
	}
	cmd.Wait()
}

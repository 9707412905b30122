package supervisor

import (
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestPidfdWait: the wait on a pidfd says false, with no error, when its
// process outlives the timeout, and true once the process has exited.
// The init and state tests rely on the first answer to fail.
func TestPidfdWait(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	fd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	if err != nil {
		t.Skipf("no pidfd: %v", err)
	}
	defer unix.Close(fd)
	if exited, err := pidfdWait(uintptr(fd), 50*time.Millisecond); exited || err != nil {
		t.Fatalf("a running process: exited %v, err %v; want false, nil", exited, err)
	}
	cmd.Process.Kill()
	if exited, err := pidfdWait(uintptr(fd), 10*time.Second); !exited || err != nil {
		t.Fatalf("a killed process: exited %v, err %v; want true, nil", exited, err)
	}
}

package proctest

import (
	"os"
	"os/exec"
	"testing"
)

// TestStatus reads this process's own status lines, and nothing of a
// process that has ended or of a key the file does not have.
func TestStatus(t *testing.T) {
	self := os.Getpid()
	if got := Status(self, "PPid"); got != int64(os.Getppid()) {
		t.Errorf("PPid %d, want %d", got, os.Getppid())
	}
	if got := Status(self, "Threads"); got < 1 {
		t.Errorf("Threads %d", got)
	}
	if got := Status(self, "VmHWM"); got < 1024 {
		t.Errorf("VmHWM %d KiB", got)
	}
	if got := Status(self, "NoSuchKey"); got != 0 {
		t.Errorf("a key the file does not have: %d", got)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	if got := Status(cmd.Process.Pid, "PPid"); got != 0 {
		t.Errorf("a process that has ended: PPid %d", got)
	}
}

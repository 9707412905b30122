package engine

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAnswersAreReadThroughThePoller: the host waits on the answers pipe
// for the whole of every batch, so its read end is non-blocking (parked on
// the runtime's poller, not holding a thread in read(2)), while the
// worker's ends stay blocking, as the bridge expects.
func TestAnswersAreReadThroughThePoller(t *testing.T) {
	c, workerEnds, err := openChannel(1<<20, &Debug{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	defer c.debug.close()
	defer func() {
		for _, f := range workerEnds {
			f.Close()
		}
	}()
	nonblocking := func(f *os.File) bool {
		raw, err := f.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var flags int
		var flagsErr error
		if err := raw.Control(func(fd uintptr) { flags, flagsErr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
			t.Fatal(err)
		}
		if flagsErr != nil {
			t.Fatal(flagsErr)
		}
		return flags&unix.O_NONBLOCK != 0
	}
	if !nonblocking(c.answers) {
		t.Error("the host's end of the answers pipe blocks")
	}
	for i, f := range workerEnds {
		if nonblocking(f) {
			t.Errorf("the worker's descriptor %d (%s) is non-blocking", i, f.Name())
		}
	}
}

package engine

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"stratbench/python"
)

// channel is the host's end of the protocol with one worker. It owns the
// host's ends of the descriptors python/fds.go numbers (requests, answers,
// the shared state page, the command pipe) and closes them, but the
// debugger's pipe pair, which its debugSession owns (debug.go); the
// worker's ends go to the supervisor for the start and are closed by
// openChannel's caller once the worker has them.
//
// The requests pipe is a plain blocking pipe: the watchdog goroutine
// enforces every deadline, and a write seldom waits (the pipe holds a
// MiB). The answers pipe is read through the runtime's poller instead: the
// host waits there for the whole of every batch, and a goroutine parked on
// the poller costs nothing, where one blocked in read(2) holds a thread in
// a system call that the runtime's monitor keeps checking, waking every
// 20 µs to a few ms. Measured on a 2-vCPU VM, a sweep of 30 runs (2,000
// bars each, --jobs 2): the host's own CPU 720-870 ms with a blocking
// read, 610-760 ms through the poller; a round trip per order
// (BenchmarkRoundTrip) did not get slower (102-108 µs against 110-112).
type channel struct {
	requests *os.File // host → worker frames (the worker's python.FDRequests)
	answers  *os.File // worker → host frames (python.FDAnswers)
	reader   *python.Reader
	state    *python.StatePage // python.FDState, mapped by both
	commands *commandPipe      // python.FDCommands, read after each answer
	debug    *debugPipes       // python.FDDebugIn and FDDebugOut; nil without a debugger (Config.Debug)
	buf      []byte            // the request being encoded
}

// openChannel creates the descriptors of one worker. It returns the host's
// end and the worker's ends, in the order exec.Cmd.ExtraFiles numbers them.
// With debug nil, the debugger's pipes lead nowhere (openDebugPipes).
func openChannel(maxMessage int, debug *Debug) (*channel, []*os.File, error) {
	var breaks []python.DebugBreak
	if debug != nil {
		var err error
		if breaks, err = debugBreaks(debug); err != nil {
			return nil, nil, err
		}
	}
	var opened []*os.File
	fail := func(err error) (*channel, []*os.File, error) {
		for _, f := range opened {
			f.Close()
		}
		return nil, nil, fmt.Errorf("start worker: %w", err)
	}
	toR, toW, err := framePipe("worker requests", false)
	if err != nil {
		return fail(err)
	}
	opened = append(opened, toR, toW)
	fromR, fromW, err := framePipe("worker answers", true)
	if err != nil {
		return fail(err)
	}
	opened = append(opened, fromR, fromW)
	// Batches are up to a few MiB, and an answer after a batch of fills the
	// worker delivered itself some 300 KiB (a duration per call, a record
	// per fill): a larger pipe means fewer wake-ups. Best effort: the
	// kernel caps it at fs.pipe-max-size.
	unix.FcntlInt(toW.Fd(), unix.F_SETPIPE_SZ, 1<<20)
	unix.FcntlInt(fromW.Fd(), unix.F_SETPIPE_SZ, 1<<20)
	state, err := python.NewStatePage()
	if err != nil {
		return fail(err)
	}
	cmds, cmdW, err := newCommandPipe()
	if err != nil {
		state.Close()
		return fail(err)
	}
	dbg, dbgR, dbgW, err := openDebugPipes(breaks)
	if err != nil {
		state.Close()
		cmds.close()
		cmdW.Close()
		return fail(err)
	}
	c := &channel{requests: toW, answers: fromR, reader: python.NewReader(fromR, maxMessage), state: state, commands: cmds, debug: dbg}
	return c, python.ExtraFiles(toR, fromW, state.File(), cmdW, dbgR, dbgW), nil
}

// close closes the host's ends.
func (c *channel) close() {
	c.requests.Close()
	c.answers.Close()
	c.state.Close()
	c.commands.close()
}

// framePipe returns a pipe's read and write ends. With polled, the read
// end (the host's) is non-blocking, so that os.NewFile registers it with
// the runtime's poller; the write end blocks as usual either way:
// O_NONBLOCK is a flag of the open file description, and each end of a
// pipe has its own.
func framePipe(name string, polled bool) (r, w *os.File, err error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	if polled {
		if err := unix.SetNonblock(fds[0], true); err != nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
			return nil, nil, err
		}
	}
	return os.NewFile(uintptr(fds[0]), name), os.NewFile(uintptr(fds[1]), name), nil
}

package supervisor

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"
)

// Process is a running tree.
type Process struct {
	pid     int // the program's
	initPID int // the tree's init
	// procMounted says that the program's /proc is its namespace's.
	procMounted bool
	marker      string // the tree's EnvMarker value
	tracking    TreeTracking
	samples     chan Sample
	done        chan struct{}
	gone        chan struct{} // closed when no process of the tree is left
	ending      chan struct{} // closed when the tree's end is decided, before it is killed

	killOnce sync.Once
	killReq  chan struct{}
	fsizeReq chan fsizeRequest
	checkReq chan chan struct{}

	capture *capture
	result  Result // final once done is closed
	// For measurements, final once gone (killTook) and done are closed: how
	// long the kill took, and the init's resource usage, whose ru_maxrss is
	// the largest of the init's and the program's peaks (the init reaps
	// the program), to compare with what sampling saw.
	killTook   time.Duration
	rootRusage *syscall.Rusage
}

// fsizeRequest asks the supervise goroutine to apply a file size limit.
type fsizeRequest struct {
	bytes int64
	done  chan error
}

// PID returns the pid of the program Spec named (not of the tree's init), as
// stratbench's /proc numbers it.
func (p *Process) PID() int { return p.pid }

// TreeTracking says how the tree's membership is known.
func (p *Process) TreeTracking() TreeTracking { return p.tracking }

// Samples delivers the newest sample; older unread samples are replaced. The
// channel is closed when the tree is gone.
func (p *Process) Samples() <-chan Sample { return p.samples }

// Done is closed when the tree is gone: the program exited (or was killed),
// every other process of the tree was killed and reaped, and output was
// drained.
func (p *Process) Done() <-chan struct{} { return p.done }

// Ending is closed once the tree's end is decided (a limit was broken, Kill
// was called, the program exited, the init ended), before the rest of the
// tree is killed: Done follows once the kill completes, which for a tree
// holding gigabytes takes as long as the kernel needs to free them. A
// caller that sees the program's descriptors close can tell from Ending
// whether the tree is ending (wait for Done and its Result) or the program
// merely closed them.
func (p *Process) Ending() <-chan struct{} { return p.ending }

// Kill kills every process of the tree and returns when none is left. It is
// safe to call more than once and after Done.
func (p *Process) Kill() {
	p.killOnce.Do(func() { close(p.killReq) })
	<-p.gone
}

// SetFileSizeLimit sets RLIMIT_FSIZE (soft and hard) to n bytes on every live
// process of the tree, and on every process found in it from then on: a
// write that would make a file larger than n fails (n = 0: no file may grow).
// A process that lacks the privilege cannot raise it again. It fails when n
// is negative, when the tree has ended, or with the processes it could not
// limit (limiting above a process's current hard limit needs privilege).
func (p *Process) SetFileSizeLimit(n int64) error {
	if n < 0 {
		return fmt.Errorf("supervisor: negative file size limit %d", n)
	}
	req := fsizeRequest{bytes: n, done: make(chan error, 1)}
	select {
	case p.fsizeReq <- req:
		return <-req.done
	case <-p.gone:
		return errors.New("supervisor: set file size limit: the tree has ended")
	}
}

// Check samples the tree now, as the periodic samples do, and enforces the
// limits on that sample: a tree over a limit is killed, and Wait's result
// has the violation. It returns once the sample is taken, or when the tree
// has ended. A caller that is about to let the program end (its work is
// done) checks once more what a leak left, which the next periodic sample
// would come too late to see.
func (p *Process) Check() {
	done := make(chan struct{})
	select {
	case p.checkReq <- done:
		<-done
	case <-p.gone:
	}
}

// Wait waits for Done and returns the result.
func (p *Process) Wait() Result {
	<-p.done
	return p.result
}

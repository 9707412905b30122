package engine

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/contract"
	"stratbench/job"
	"stratbench/python"
)

// This file is the host's half of the debugger (python/debug.go has the
// frames, python/bridge.py the worker's half). The debugger has its own
// pipe pair, passed like the protocol's descriptors, so it works in the
// sandbox too: nothing is opened there. Only a job of the workbench
// (Config.Debug) keeps its ends; every other job writes nothing and closes
// them before the worker starts, and breakpoint() in its worker writes a
// notice to the log and goes on.
//
// Who pauses the time limit: the host, never the worker. A prompt frame is
// the worker's claim that it waits; the pause starts only when the
// workbench says the prompt is on screen, waiting for a person
// (DebugWaiting with that prompt's number), and ends with the command sent,
// the run's stop or the worker's next frame. While it lasts the watchdog
// credits the request its time, and only the time during which the
// interpreter used (almost) no CPU: a worker that computes while it claims
// to wait gains nothing (watchdog.pauseTick). The memory and process limits
// are the supervisor's and never pause; a prompt left waiting longer than
// Limits.DebugIdle ends the run.

// Debug asks a job's worker to stop at breakpoint() and at Breakpoints, at
// a prompt answered through the Job's DebugWaiting and DebugSend.
type Debug struct {
	// Breakpoints are set before the strategy loads (at most
	// python.MaxBreakpoints, each checked by python.CheckBreak).
	Breakpoints []job.Breakpoint
}

// debugBreaks checks d's breakpoints and converts them for the hello.
func debugBreaks(d *Debug) ([]python.DebugBreak, error) {
	if len(d.Breakpoints) > python.MaxBreakpoints {
		return nil, &UsageError{fmt.Errorf("%d breakpoints: at most %d", len(d.Breakpoints), python.MaxBreakpoints)}
	}
	out := make([]python.DebugBreak, 0, len(d.Breakpoints))
	for _, b := range d.Breakpoints {
		db := python.DebugBreak{File: b.File, Line: b.Line, Cond: b.Cond}
		if err := python.CheckBreak(db); err != nil {
			return nil, &UsageError{err}
		}
		out = append(out, db)
	}
	return out, nil
}

// debugPipes are the host's ends of the debugger's pipe pair.
type debugPipes struct {
	in  int      // host → worker, non-blocking: a write that would wait is the worker's fault
	out *os.File // worker → host, read through the runtime's poller
}

// openDebugPipes creates the debugger's pipe pair and returns the worker's
// ends (python.FDDebugIn, python.FDDebugOut). With breaks nil (no
// debugger) the host's ends are closed at once: nothing the worker writes
// there reaches the host, and the worker reads an end of file where a
// hello would be. Otherwise the hello is written before the worker starts.
func openDebugPipes(breaks []python.DebugBreak) (*debugPipes, *os.File, *os.File, error) {
	// The input's host end stays a raw descriptor: os.File would park a
	// write that cannot complete on the poller instead of failing it.
	var in [2]int
	if err := unix.Pipe2(in[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, nil, fmt.Errorf("debugger: %w", err)
	}
	inR := os.NewFile(uintptr(in[0]), "debugger input")
	outR, outW, err := framePipe("debugger output", true)
	if err != nil {
		inR.Close()
		unix.Close(in[1])
		return nil, nil, nil, fmt.Errorf("debugger: %w", err)
	}
	if breaks == nil {
		unix.Close(in[1])
		outR.Close()
		return nil, inR, outW, nil
	}
	p := &debugPipes{in: in[1], out: outR}
	fail := func(err error) (*debugPipes, *os.File, *os.File, error) {
		p.close()
		inR.Close()
		outW.Close()
		return nil, nil, nil, fmt.Errorf("debugger: %w", err)
	}
	hello, err := python.AppendDebugHello(nil, breaks)
	if err != nil {
		return fail(err)
	}
	if err := unix.SetNonblock(p.in, true); err != nil {
		return fail(err)
	}
	// The hello is at most about 43 KiB (python.MaxBreakpoints bounded
	// breakpoints), into an empty pipe.
	if err := p.write(hello); err != nil {
		return fail(err)
	}
	return p, inR, outW, nil
}

// write writes a whole frame to the worker, or fails at once: frames of the
// prompt are written only when the worker said it reads them, and one at a
// time, so a pipe that is full belongs to a worker that does not read.
func (p *debugPipes) write(frame []byte) error {
	for len(frame) > 0 {
		n, err := unix.Write(p.in, frame)
		if err != nil {
			if errors.Is(err, unix.EAGAIN) {
				return &python.ProtocolError{Msg: "the worker does not read its debugger's commands"}
			}
			return err
		}
		frame = frame[n:]
	}
	return nil
}

func (p *debugPipes) close() {
	unix.Close(p.in)
	p.out.Close()
}

// debugState is where the worker is with its prompt, as the host sees it.
type debugState uint8

const (
	debugRunning   debugState = iota // the worker runs: a prompt may come
	debugPrompt                      // stopped at prompt seq: a command may be sent
	debugCommanded                   // a command was sent: the next prompt, or resumed
)

// debugSession is the host's side of one worker's debugger: it reads and
// checks the worker's frames on its own goroutine, publishes them, and
// sends the workbench's commands. It asks the watchdog to pause only
// between a prompt the workbench waits at and the command that answers it.
type debugSession struct {
	pipes *debugPipes
	dog   *watchdog
	kill  func()
	pub   *publisher // nil: nobody listens (tests)
	jobID string
	done  chan struct{}

	mu       sync.Mutex
	state    debugState
	seq      int  // the last prompt's number
	granted  bool // the pause runs
	detached bool // the run is stopping: no more prompts are answered
	closed   bool
}

func newDebugSession(p *debugPipes, dog *watchdog, kill func(), meter progressMeter) *debugSession {
	return &debugSession{pipes: p, dog: dog, kill: kill, pub: meter.pub, jobID: meter.job, done: make(chan struct{})}
}

// run reads the worker's debugger frames until the pipe ends or is closed.
// A bad frame fails the run (protocol) and kills the tree.
func (s *debugSession) run() {
	defer close(s.done)
	r := python.NewReader(s.pipes.out, python.MaxDebugMessage)
	for {
		f, err := r.Next()
		if err == nil {
			err = s.take(f)
		}
		var pe *python.ProtocolError
		if errors.As(err, &pe) {
			s.end()
			s.dog.fault(contract.KindProtocol, "debugger channel: "+pe.Msg)
			s.kill()
			return
		}
		if err != nil {
			s.end() // the worker is gone, or the host closed its end
			return
		}
	}
}

// take handles one frame of the worker's.
func (s *debugSession) take(f python.Frame) error {
	switch f.Type {
	case python.DebugPrompt:
		m, err := python.DecodeDebugPrompt(f.Payload)
		if err != nil {
			return err
		}
		s.mu.Lock()
		if s.state == debugPrompt {
			s.mu.Unlock()
			return &python.ProtocolError{Msg: "a debugger prompt before the last one was answered"}
		}
		s.state = debugPrompt
		s.seq++
		seq, detached := s.seq, s.detached
		var err2 error
		if detached {
			// The run is stopping: nobody answers, the worker goes on.
			err2 = s.sendLocked(python.AppendDebugDetach(nil))
		}
		s.mu.Unlock()
		if err2 != nil || detached {
			return err2
		}
		hook, event := s.dog.where()
		s.publish(stopEvent(s.jobID, seq, hook, event, m))
	case python.DebugResumed:
		m, err := python.DecodeDebugResumed(f.Payload)
		if err != nil {
			return err
		}
		s.mu.Lock()
		if s.state != debugCommanded {
			s.mu.Unlock()
			return &python.ProtocolError{Msg: "the debugger resumed without a command"}
		}
		s.state = debugRunning
		seq, detached := s.seq, s.detached
		s.mu.Unlock()
		if !detached {
			s.publish(job.DebugResumed{JobID: s.jobID, Seq: seq, Step: m.How == "step"})
		}
	default:
		return &python.ProtocolError{Msg: fmt.Sprintf("unknown debugger frame type %q", f.Type)}
	}
	return nil
}

func (s *debugSession) publish(e job.Event) {
	if s.pub != nil {
		s.pub.milestone(e)
	}
}

// waiting starts the pause: the prompt of stop seq is on screen and waits
// for a person.
func (s *debugSession) waiting(seq int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.detached || s.granted || s.state != debugPrompt || seq != s.seq {
		return
	}
	s.granted = true
	s.dog.pauseStart(time.Now())
}

// send sends a command typed at the prompt of stop seq; the pause ends.
func (s *debugSession) send(seq int, line string) error {
	if err := python.CheckDebugCommand(line); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return errors.New("the run has ended")
	case s.detached:
		return errors.New("the run is stopping")
	case s.state != debugPrompt || seq != s.seq:
		return errors.New("the worker is not at that prompt")
	}
	err := s.sendLocked(python.AppendDebugLine(nil, line))
	if err != nil {
		var pe *python.ProtocolError
		if errors.As(err, &pe) {
			s.dog.fault(contract.KindProtocol, "debugger channel: "+pe.Msg)
			s.kill()
		}
	}
	return err
}

// sendLocked ends the pause and writes frame, a command or the detach;
// s.mu is held.
func (s *debugSession) sendLocked(frame []byte) error {
	if s.granted {
		s.granted = false
		s.dog.pauseEnd(time.Now())
	}
	s.state = debugCommanded
	return s.pipes.write(frame)
}

// detach is the run's stop: the worker at a prompt is told to go on, and
// no later prompt is answered (the bridge's breakpoint() sees the stop
// request on the shared page too).
func (s *debugSession) detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.detached {
		return
	}
	s.detached = true
	if s.state == debugPrompt {
		if err := s.sendLocked(python.AppendDebugDetach(nil)); err != nil {
			s.dog.fault(contract.KindProtocol, "debugger channel: "+err.Error())
			s.kill()
		}
	}
}

// end ends the pause for good: the worker is gone, or broke the channel.
func (s *debugSession) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.granted {
		s.granted = false
		s.dog.pauseEnd(time.Now())
	}
	s.detached = true
}

// close closes the host's ends and waits for the reading goroutine.
func (s *debugSession) close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		s.pipes.close()
	}
	s.mu.Unlock()
	<-s.done
	s.end()
}

// stopEvent is the event of a prompt the worker sent.
func stopEvent(jobID string, seq int, hook contract.Hook, event int, m *python.DebugPromptMsg) job.DebugStop {
	e := job.DebugStop{JobID: jobID, Seq: seq, Hook: hook, EventIndex: event, File: m.File, Line: m.Line,
		Function: m.Function, Output: m.Output}
	for _, l := range m.Source {
		e.Source = append(e.Source, job.DebugSource{Line: l.Line, Text: l.Text, Break: l.Break})
	}
	for _, f := range m.Stack {
		e.Stack = append(e.Stack, job.DebugFrame{File: f.File, Line: f.Line, Function: f.Function, Current: f.Current, User: f.User})
	}
	for _, l := range m.Locals {
		e.Locals = append(e.Locals, job.DebugLocal{Name: l.Name, Value: l.Value})
	}
	return e
}

// DebugWaiting implements job.DebugConsole: the prompt of stop seq is on
// screen, waiting for a person; the hook's time limit pauses until the
// command (DebugSend), the run's stop, or the idle limit.
func (j *Job) DebugWaiting(seq int) {
	if w := j.runningWorker(); w != nil && w.debug != nil {
		w.debug.waiting(seq)
	}
}

// DebugSend implements job.DebugConsole: it sends a command typed at the
// prompt of stop seq to the worker.
func (j *Job) DebugSend(seq int, line string) error {
	w := j.runningWorker()
	if w == nil || w.debug == nil {
		return errors.New("no debugger: the run has ended")
	}
	return w.debug.send(seq, line)
}

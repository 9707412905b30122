package components

import (
	"context"
	"os/exec"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Handover runs the programs a model hands the terminal to (an artifact's
// or a report's opener, with tea.ExecProcess) so that a stop request from
// outside ends them. While one runs, the program's event loop waits for it
// and takes no message: an Interrupt (app's answer to SIGINT, SIGTERM,
// SIGHUP) or the end of RunProgram's context would wait for as long as the
// program does, and one that ignores the signals and never ends kept
// stratbench from every signal. RunProgram stops the Handover first: the
// program gets SIGTERM, then SIGKILL after HandoverGrace, and the event
// loop then takes the request.
type Handover struct {
	ctx  context.Context
	stop context.CancelFunc
}

// HandoverGrace is how long a handed-over program has to end after
// SIGTERM before it is killed: a stop request is answered within a second.
const HandoverGrace = 500 * time.Millisecond

// NewHandover returns a Handover for one program (RunProgram's).
func NewHandover() *Handover {
	ctx, stop := context.WithCancel(context.Background())
	return &Handover{ctx: ctx, stop: stop}
}

// Stop ends what runs and what is handed over from now on; further calls
// do nothing. RunProgram calls it on a stop request.
func (h *Handover) Stop() { h.stop() }

// ExecProcess runs name with args as tea.ExecProcess does, the terminal
// handed to it, until it ends or h is stopped; fn gets its error (the
// context's once stopped).
func (h *Handover) ExecProcess(name string, args []string, fn tea.ExecCallback) tea.Cmd {
	cmd := exec.CommandContext(h.ctx, name, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = HandoverGrace
	return tea.ExecProcess(cmd, fn)
}

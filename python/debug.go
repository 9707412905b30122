package python

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The debugger's frames, on its own pipe pair (FDDebugIn, FDDebugOut),
// framed as the protocol's (a 4-byte big-endian length, a type byte, the
// payload). The workbench is the only place a person can answer a prompt:
// there the host writes a hello before the worker starts, and breakpoint()
// in the worker stops at a pdb prompt whose input and output are these
// frames. Everywhere else the host writes nothing and closes its ends, and
// breakpoint() writes one notice to the log and goes on (bridge.py).
//
// The worker's frames are hostile input like every other: bounded, checked
// field by field, and the worker is killed at the first bad one. A prompt
// the worker sends pauses nothing by itself: the host decides (engine's
// debug session).
const (
	// From the host.
	DebugHello  = 'H' // JSON DebugHelloMsg: a person may answer; the breakpoints to set
	DebugLine   = 'L' // a command line typed at the prompt, UTF-8, without its newline
	DebugDetach = 'X' // no payload: go on, and stop no more in this run (the run is stopping)

	// From the worker.
	DebugPrompt  = 'P' // JSON DebugPromptMsg: stopped, waiting for a command
	DebugResumed = 'R' // JSON DebugResumedMsg: the worker runs again
)

// Bounds of the debugger's frames. The bridge cuts what it sends below
// them; the host refuses anything beyond.
const (
	// MaxDebugMessage is the largest debugger frame either side accepts.
	MaxDebugMessage = 1 << 20
	// MaxDebugCommand is the longest command line, in bytes.
	MaxDebugCommand = 4 << 10
	// MaxBreakpoints is how many breakpoints a run is given at startup.
	MaxBreakpoints = 32
	// MaxBreakpointCond is the longest condition of a breakpoint, in bytes.
	MaxBreakpointCond = 256
	// MaxBreakpointPath is the longest file of a breakpoint, in bytes.
	MaxBreakpointPath = 1024

	maxDebugPath     = 4096
	maxDebugName     = 256
	maxDebugText     = 512
	maxDebugSource   = 64
	maxDebugStack    = 64
	maxDebugLocals   = 64
	maxDebugOutput   = 64 << 10
	maxDebugLineNums = 1 << 30
)

// DebugBreak is one breakpoint the host sets for a run: a file and a line
// the debugger stops at, when Cond (a Python expression, evaluated in the
// frame) is true or empty.
type DebugBreak struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Cond string `json:"cond,omitempty"`
}

// DebugHelloMsg is the host's first debugger frame, written before the
// worker starts: it holds at most MaxBreakpoints breakpoints of bounded
// size, so that it fits the pipe without a reader.
type DebugHelloMsg struct {
	Breaks []DebugBreak `json:"breaks"`
}

// CheckBreak says what is wrong with a breakpoint the host is asked to
// set; nil when nothing is.
func CheckBreak(b DebugBreak) error {
	switch {
	case b.File == "" || len(b.File) > MaxBreakpointPath || !utf8.ValidString(b.File) || hasControl(b.File):
		return fmt.Errorf("breakpoint file %q: want a path of at most %d bytes of text", b.File, MaxBreakpointPath)
	case b.Line < 1 || b.Line > maxDebugLineNums:
		return fmt.Errorf("breakpoint line %d: want a line number", b.Line)
	case len(b.Cond) > MaxBreakpointCond || !utf8.ValidString(b.Cond) || hasControl(b.Cond):
		return fmt.Errorf("breakpoint condition: want at most %d bytes of text on one line", MaxBreakpointCond)
	}
	return nil
}

// AppendDebugHello appends the hello frame for breaks, which CheckBreak
// must accept (at most MaxBreakpoints).
func AppendDebugHello(dst []byte, breaks []DebugBreak) ([]byte, error) {
	if len(breaks) > MaxBreakpoints {
		return dst, fmt.Errorf("%d breakpoints, at most %d", len(breaks), MaxBreakpoints)
	}
	for _, b := range breaks {
		if err := CheckBreak(b); err != nil {
			return dst, err
		}
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false) // one byte per byte of text: the hello's size is bounded by the fields'
	if err := enc.Encode(DebugHelloMsg{Breaks: append([]DebugBreak{}, breaks...)}); err != nil {
		return dst, fmt.Errorf("encode debugger hello: %w", err)
	}
	p := bytes.TrimSuffix(body.Bytes(), []byte("\n"))
	dst = appendHeader(dst, DebugHello, len(p))
	return append(dst, p...), nil
}

// CheckDebugCommand says what is wrong with a command line for the
// prompt; nil when nothing is.
func CheckDebugCommand(line string) error {
	switch {
	case len(line) > MaxDebugCommand:
		return fmt.Errorf("a command of %d bytes; at most %d", len(line), MaxDebugCommand)
	case !utf8.ValidString(line) || hasControl(line):
		return fmt.Errorf("a command must be one line of text")
	}
	return nil
}

// AppendDebugLine appends a command line frame (CheckDebugCommand must
// accept line).
func AppendDebugLine(dst []byte, line string) []byte {
	dst = appendHeader(dst, DebugLine, len(line))
	return append(dst, line...)
}

// AppendDebugDetach appends the detach frame.
func AppendDebugDetach(dst []byte) []byte { return appendHeader(dst, DebugDetach, 0) }

// hasControl reports whether s holds a control character other than tab.
func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0) }) >= 0
}

// DebugPromptMsg is the worker's prompt: where it stopped (the frame pdb
// is looking at: up and down move it), the source around that line, the
// stack, the frame's locals, and what the debugger printed since the last
// command. The worker's own account: it is shown, and decides nothing.
type DebugPromptMsg struct {
	File     string            `json:"file"`
	Line     int               `json:"line"`
	Function string            `json:"function"`
	Source   []DebugSourceLine `json:"source"`
	Stack    []DebugFrame      `json:"stack"`
	Locals   []DebugLocal      `json:"locals"`
	Output   string            `json:"output"`
}

// DebugSourceLine is one line of the source around the current line.
type DebugSourceLine struct {
	Line  int    `json:"n"`
	Text  string `json:"text"`
	Break bool   `json:"break,omitempty"` // a breakpoint is set on it
}

// DebugFrame is one frame of the stack, outermost first.
type DebugFrame struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Function string `json:"function"`
	Current  bool   `json:"current,omitempty"` // the frame the prompt looks at
	User     bool   `json:"user,omitempty"`    // a frame of the strategy's own files
}

// DebugLocal is one local variable of the current frame, its value as
// repr() shows it, cut.
type DebugLocal struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// DebugResumedMsg says the worker runs again, and why: "continue" (c, or
// detached: it stops only at a breakpoint, or no more), or "step" (n, s,
// r, until, jump: it stops again soon).
type DebugResumedMsg struct {
	How string `json:"how"`
}

// DecodeDebugPrompt decodes and checks a prompt frame.
func DecodeDebugPrompt(p []byte) (*DebugPromptMsg, error) {
	var m DebugPromptMsg
	if err := strictJSON(p, &m); err != nil {
		return nil, malformed("debugger prompt: %v", err)
	}
	check := func(what, s string, max int) error {
		if len(s) > max {
			return malformed("debugger prompt: %s of %d bytes, at most %d", what, len(s), max)
		}
		return nil
	}
	line := func(what string, n int) error {
		if n < 0 || n > maxDebugLineNums {
			return malformed("debugger prompt: %s line %d", what, n)
		}
		return nil
	}
	errs := []error{check("file", m.File, maxDebugPath), check("function", m.Function, maxDebugName), line("current", m.Line),
		check("output", m.Output, maxDebugOutput)}
	if len(m.Source) > maxDebugSource || len(m.Stack) > maxDebugStack || len(m.Locals) > maxDebugLocals {
		return nil, malformed("debugger prompt: %d source lines, %d frames, %d locals: at most %d, %d, %d",
			len(m.Source), len(m.Stack), len(m.Locals), maxDebugSource, maxDebugStack, maxDebugLocals)
	}
	for _, s := range m.Source {
		errs = append(errs, line("source", s.Line), check("source line", s.Text, maxDebugText))
	}
	current := 0
	for _, f := range m.Stack {
		errs = append(errs, check("frame file", f.File, maxDebugPath), check("frame function", f.Function, maxDebugName), line("frame", f.Line))
		if f.Current {
			current++
		}
	}
	if current > 1 {
		errs = append(errs, malformed("debugger prompt: %d current frames", current))
	}
	for _, l := range m.Locals {
		errs = append(errs, check("local name", l.Name, maxDebugName), check("local value", l.Value, maxDebugText))
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return &m, nil
}

// DecodeDebugResumed decodes and checks a resumed frame.
func DecodeDebugResumed(p []byte) (*DebugResumedMsg, error) {
	var m DebugResumedMsg
	if err := strictJSON(p, &m); err != nil {
		return nil, malformed("debugger resumed: %v", err)
	}
	if m.How != "continue" && m.How != "step" {
		return nil, malformed("debugger resumed: how %q, want continue or step", m.How)
	}
	return &m, nil
}

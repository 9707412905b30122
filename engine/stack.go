package engine

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/contract"
)

// This file asks a worker that ran past a time limit where it was: just
// before the kill, the interpreter gets SIGABRT, on which Python's
// faulthandler (enabled for every worker, python/env.go) writes the stack
// of every thread to stderr. What it writes is the worker's own account:
// a worker may block the signal, replace the handler or print a stack of
// its choice, so the stack is informational, shown as the failure's
// traceback, and decides nothing.

// stackGrace is how long the kill waits for the stack, while the worker
// can run: faulthandler writes the stack as soon as a thread of the
// interpreter that takes the signal runs, so a process that has run for
// stackRan since the ask and written nothing will write nothing.
const stackGrace = 250 * time.Millisecond

// stackRan is the CPU time after which a process that got the signal has
// had its chance to write the stack.
const stackRan = 10 * time.Millisecond

// stackGraceMax bounds the wait in all: a machine too busy to run the
// worker within stackGrace (every core running other trees, a test suite
// beside a sweep), or a worker stopped by a signal, extends it one
// stackGrace at a time while the process has run less than stackRan since
// the ask. The tree dies at most this much later than its limit.
const stackGraceMax = time.Second

// stackQuiet is how long after the last line of a stack that has not ended
// the dump counts as complete.
const stackQuiet = 30 * time.Millisecond

// stackDump collects the stack a worker writes after SIGABRT. The log sink
// hands it every stderr line; it keeps them only once it was asked, and
// takes faulthandler's dump out of the log: the stack is the failure's
// traceback, the user's frames marked, where the log would show it raw,
// with the bridge's frames ("Fatal Python error: Aborted" and all).
type stackDump struct {
	grace time.Duration // stackGrace, unless a test shortens it

	mu     sync.Mutex
	asked  bool
	inDump bool // faulthandler's dump has begun and not ended
	lines  []string
	last   time.Time // when the last line came
}

// maxStackLines bounds what is kept of a dump (deep recursion).
const maxStackLines = 400

// line takes one line the worker wrote to stderr. It reports whether the
// line is part of faulthandler's dump after the ask, which the log leaves
// out: the dump's first line, "Fatal Python error: …", and the lines of
// its grammar that follow (blank ones, thread headers, indented frames,
// the list of extension modules), up to the first that is none of them.
// At most maxStackLines are taken: a worker cannot hide more of its
// output this way.
func (s *stackDump) line(text string) (dump bool) {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.asked || len(s.lines) >= maxStackLines {
		return false
	}
	s.lines = append(s.lines, text)
	s.last = time.Now()
	switch {
	case strings.HasPrefix(text, "Fatal Python error: "):
		s.inDump = true
	case s.inDump && !dumpLine(text):
		s.inDump = false
	}
	return s.inDump
}

// dumpLine reports whether text is a line of faulthandler's dump after its
// first.
func dumpLine(text string) bool {
	if text == "" || text[0] == ' ' || text[0] == '\t' {
		return true
	}
	for _, p := range []string{"Current thread", "Thread 0x", "Extension modules:", "Python runtime state:", "Stack (most recent call first)"} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// ask sends SIGABRT to the interpreter (pid, as stratbench's /proc numbers
// it) and waits, stackGrace while the interpreter can run (see
// stackGraceMax), until its stack is written or the tree is gone. Its core
// dump is turned off first: RLIMIT_CORE 1 stops a dump to a file (smaller
// than a page) and to a pipe (the kernel's value for "none" there), so
// nothing large is written while the tree dies.
func (s *stackDump) ask(pid int, gone <-chan struct{}) {
	if s == nil || pid <= 0 {
		return
	}
	select {
	case <-gone:
		return // the pid may name another process by now
	default:
	}
	s.mu.Lock()
	s.asked = true
	s.mu.Unlock()
	// Lowering a limit needs no privilege; a worker that raised nothing
	// cannot refuse. Failing that (a sandbox's lower hard limit), the
	// limit it has stays.
	_ = unix.Prlimit(pid, unix.RLIMIT_CORE, &unix.Rlimit{Cur: 1, Max: 1}, nil)
	grace := cmp.Or(s.grace, stackGrace)
	asked := time.Now()
	ran0, measured := processCPU(pid)
	if err := unix.Kill(pid, syscall.SIGABRT); err != nil {
		return
	}
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-gone:
			return
		case <-deadline.C:
			// What the kernel counts, not what the worker says: a
			// process that has not run yet gets more time.
			waited := time.Since(asked)
			ran, ok := processCPU(pid)
			if !measured || !ok || ran-ran0 >= stackRan || waited >= stackGraceMax {
				return
			}
			deadline.Reset(min(grace, stackGraceMax-waited))
		case now := <-tick.C:
			if s.complete(now) {
				return
			}
		}
	}
}

// processCPU returns the CPU time the kernel has counted for the threads
// of process pid: the first field of each /proc/PID/task/TID/schedstat is
// a thread's time on a CPU, in nanoseconds. All threads, since a signal to
// the process may go to any that does not block it, and a process that
// spins in one thread while another sleeps has run. False when it cannot
// be read: the process gone, a kernel without the file, or one that
// counts nothing there (it then reads zeros, and a process that runs has
// run for more than that).
func processCPU(pid int) (time.Duration, bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tids, err := os.ReadDir(dir)
	if err != nil {
		return 0, false
	}
	var total int64
	for _, tid := range tids {
		b, err := os.ReadFile(dir + "/" + tid.Name() + "/schedstat")
		if err != nil {
			continue // a thread that ended meanwhile
		}
		field, _, _ := strings.Cut(string(b), " ")
		if ns, err := strconv.ParseInt(field, 10, 64); err == nil {
			total += ns
		}
	}
	return time.Duration(total), total > 0
}

// complete reports whether the dump's current thread has been written.
func (s *stackDump) complete(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	inCurrent, frames := false, 0
	for _, l := range s.lines {
		switch {
		case strings.HasPrefix(l, "Current thread "):
			inCurrent = true
		case inCurrent && frameLine.MatchString(l):
			frames++
		case inCurrent && frames > 0:
			return true // the line after the block
		}
	}
	return frames > 0 && now.Sub(s.last) >= stackQuiet
}

// frameLine is one frame of faulthandler's dump: `  File "x.py", line 3 in f`.
var frameLine = regexp.MustCompile(`^\s+File "(.*)", line (\d+) in (.*)$`)

// stack returns the interpreter's stack as the dump gave it, most recent
// call last, as a traceback's text and as frames. The strategy's own frames
// (files in its folder, outside installed packages, not the bridge) are
// marked, and their source line is read from the file. Empty when no dump
// came.
func (s *stackDump) stack(strategy, bridge string) (string, []contract.Frame) {
	if s == nil {
		return "", nil
	}
	s.mu.Lock()
	lines := append([]string(nil), s.lines...)
	s.mu.Unlock()
	var block []contract.Frame
	var current, first []contract.Frame
	inBlock, isCurrent := false, false
	end := func() {
		if isCurrent && current == nil {
			current = block
		}
		if first == nil {
			first = block
		}
		block, inBlock, isCurrent = nil, false, false
	}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "Current thread ") || strings.HasPrefix(l, "Thread "):
			if inBlock {
				end()
			}
			inBlock, isCurrent = true, strings.HasPrefix(l, "Current thread ")
		case inBlock && frameLine.MatchString(l):
			m := frameLine.FindStringSubmatch(l)
			n, _ := strconv.Atoi(m[2])
			block = append(block, contract.Frame{File: m[1], Line: n, Function: m[3]})
		case inBlock:
			end()
		}
	}
	if inBlock {
		end()
	}
	frames := current
	if frames == nil {
		frames = first
	}
	if len(frames) == 0 {
		return "", nil
	}
	// faulthandler writes the most recent call first. The bridge's frames
	// are left out, as they are from an exception's traceback: they are
	// not the user's concern.
	out := make([]contract.Frame, 0, len(frames))
	for i := len(frames) - 1; i >= 0; i-- {
		if frames[i].File != bridge {
			out = append(out, frames[i])
		}
	}
	if len(out) == 0 {
		return "", nil
	}
	dir, err := filepath.Abs(filepath.Dir(strategy))
	if err != nil {
		dir = filepath.Dir(strategy)
	}
	sources := map[string][]string{}
	var tb strings.Builder
	tb.WriteString("Stack of the worker when it was stopped (written by the worker; most recent call last):\n")
	for i := range out {
		fr := &out[i]
		fr.User = userFile(fr.File, dir, bridge)
		if fr.User {
			if _, ok := sources[fr.File]; !ok {
				sources[fr.File] = readSource(fr.File)
			}
			if src := sources[fr.File]; fr.Line >= 1 && fr.Line <= len(src) {
				fr.Source = strings.TrimSpace(src[fr.Line-1])
			}
		}
		fmt.Fprintf(&tb, "  File %q, line %d, in %s\n", fr.File, fr.Line, fr.Function)
		if fr.Source != "" {
			fmt.Fprintf(&tb, "    %s\n", fr.Source)
		}
	}
	return tb.String(), out
}

// userFile reports whether a frame's file is the strategy's own code: in
// its folder, not an installed package, not the bridge (as the bridge
// itself decides for exceptions).
func userFile(file, dir, bridge string) bool {
	if !filepath.IsAbs(file) || file == bridge {
		return false
	}
	file = filepath.Clean(file)
	if !strings.HasPrefix(file, dir+string(filepath.Separator)) {
		return false
	}
	for _, part := range strings.Split(file, string(filepath.Separator)) {
		if part == "site-packages" || part == "dist-packages" {
			return false
		}
	}
	return true
}

// maxSourceBytes bounds the file read for a frame's source line.
const maxSourceBytes = 16 << 20

// readSource reads the lines of a regular file of the strategy's folder,
// never blocking on a FIFO put in its place; nil when it cannot.
func readSource(path string) []string {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() || info.Size() > maxSourceBytes {
		return nil
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxSourceBytes)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

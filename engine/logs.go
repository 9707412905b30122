package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"stratbench/internal/units"
	"stratbench/job"
	"stratbench/supervisor"
)

// logSink streams captured output into logs.jsonl and onto the event stream.
// It is called from the supervisor's reader goroutines and the job's own.
//
// logs.jsonl is capped: past its cap (less the room kept for stratbench's
// own notices) output lines are no longer written, and one system line says
// so. A write error (a full disk) ends the file the same way, at its last
// whole line; the error goes to the report. The event stream gets every
// line either way.
type logSink struct {
	mu      sync.Mutex
	f       *os.File
	path    string
	buf     []byte // whole lines not yet written
	flushed int64  // bytes in the file
	size    int64  // flushed + len(buf)
	limit   int64
	cut     bool  // output lines no longer go to the file
	off     bool  // nothing goes to the file any more
	err     error // why the file could not be written, for the report
	last    string
	stack   *stackDump // sees every stderr line, for the stack at a timeout
	dumped  bool       // the stack's lines were left out of the log, and the log says so
	pub     *publisher
	stop    chan struct{}
	done    chan struct{}
}

// logFlushInterval bounds how stale logs.jsonl is for `logs --follow`.
const logFlushInterval = 200 * time.Millisecond

// logBufferBytes is how much is written at once, between two flush ticks.
const logBufferBytes = 256 << 10

// systemRoom is the part of the log file's cap kept for stratbench's own
// notices after output lines stopped being written (the cut notice, notices
// about record files and artifacts, a failure).
const systemRoom = 64 << 10

func openLogSink(path string, limit int64, pub *publisher) (*logSink, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	l := &logSink{stack: &stackDump{}, f: f, path: path, limit: max(limit, 2*systemRoom), pub: pub, stop: make(chan struct{}), done: make(chan struct{})}
	go l.flushLoop()
	return l, nil
}

func (l *logSink) flushLoop() {
	defer close(l.done)
	t := time.NewTicker(logFlushInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			l.mu.Lock()
			notice := l.flushLocked()
			l.mu.Unlock()
			l.publishNotice(notice)
		case <-l.stop:
			return
		}
	}
}

func (l *logSink) write(line supervisor.Line) {
	l.add(job.LogLine{Time: line.Time, Stream: line.Stream.String(), Line: line.Text})
}

// system records a notice of stratbench's own.
func (l *logSink) system(text string) {
	l.add(job.LogLine{Time: time.Now(), Stream: "system", Line: text})
}

func (l *logSink) add(ll job.LogLine) {
	b, err := json.Marshal(ll)
	var notices []job.LogLine
	l.mu.Lock()
	if ll.Stream == "stderr" && l.stack.line(ll.Line) {
		// The stack at a timeout goes to the failure's traceback, not
		// here (the log stays as clean as the failure pane); one notice
		// says where it went.
		first := !l.dumped
		l.dumped = true
		l.mu.Unlock()
		if first {
			l.system("the worker's stack at the timeout is in the failure's traceback, its own frames marked")
		}
		return
	}
	if ll.Stream == "stderr" {
		l.last = ll.Line
	}
	if err == nil && !l.off {
		system := ll.Stream == "system"
		switch room := l.limit - l.size - int64(len(b)) - 1; {
		case !system && l.cut:
		case !system && room < systemRoom:
			l.cut = true
			text := fmt.Sprintf("logs.jsonl reached its %s cap: later output is not saved in it (it was still shown live and counted)", units.Bytes(l.limit))
			notice := job.LogLine{Time: time.Now(), Stream: "system", Line: text}
			nb, _ := json.Marshal(notice)
			l.appendLocked(nb)
			notices = append(notices, notice)
		case room < 0:
			// Notices beyond the room kept for them: not saved.
		default:
			l.appendLocked(b)
		}
		if len(l.buf) >= logBufferBytes {
			if n := l.flushLocked(); n != nil {
				notices = append(notices, *n)
			}
		}
	}
	l.mu.Unlock()
	l.pub.log(ll)
	for _, n := range notices {
		l.pub.log(n)
	}
}

func (l *logSink) appendLocked(b []byte) {
	l.buf = append(l.buf, b...)
	l.buf = append(l.buf, '\n')
	l.size += int64(len(b)) + 1
}

// flushLocked writes the buffered lines. After a write error it removes what
// the write left of a line, stops writing and returns a notice for the event
// stream (the file can take nothing more).
func (l *logSink) flushLocked() *job.LogLine {
	if l.off || len(l.buf) == 0 {
		return nil
	}
	_, err := l.f.Write(l.buf)
	if err == nil {
		l.flushed += int64(len(l.buf))
		l.buf = l.buf[:0]
		return nil
	}
	l.f.Truncate(l.flushed)
	l.off, l.buf = true, nil
	l.err = fmt.Errorf("%s cut at %s: %w", l.path, units.Bytes(l.flushed), err)
	return &job.LogLine{Time: time.Now(), Stream: "system", Line: "logs.jsonl could not be written in full: " + l.err.Error()}
}

func (l *logSink) publishNotice(n *job.LogLine) {
	if n != nil {
		l.pub.log(*n)
	}
}

// lastStderr returns the last line the worker wrote to stderr.
func (l *logSink) lastStderr() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// close writes what is buffered and closes the file. The error says what
// could not be written (with the path and the system's reason); the log
// holds every line up to there.
func (l *logSink) close() error {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	notice := l.flushLocked()
	if err := l.f.Close(); err != nil && l.err == nil {
		l.err = fmt.Errorf("%s: %w", l.path, err)
	}
	err := l.err
	l.mu.Unlock()
	l.publishNotice(notice)
	return err
}

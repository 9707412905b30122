package engine

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"stratbench/supervisor"
)

// logSink streams captured output into logs.jsonl and onto the event stream.
// It is called from the supervisor's reader goroutines.
type logSink struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	err  error
	last string // the last stderr line, for failures that have no traceback
	pub  *publisher
	stop chan struct{}
	done chan struct{}
}

// logFlushInterval bounds how stale logs.jsonl is for `logs --follow`.
const logFlushInterval = 200 * time.Millisecond

func openLogSink(path string, pub *publisher) (*logSink, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	l := &logSink{f: f, w: bufio.NewWriterSize(f, 256<<10), pub: pub, stop: make(chan struct{}), done: make(chan struct{})}
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
			if l.err == nil {
				l.err = l.w.Flush()
			}
			l.mu.Unlock()
		case <-l.stop:
			return
		}
	}
}

func (l *logSink) write(line supervisor.Line) {
	l.add(LogLine{Time: line.Time, Stream: line.Stream.String(), Line: line.Text})
}

// system records a notice of stratbench's own.
func (l *logSink) system(text string) {
	l.add(LogLine{Time: time.Now(), Stream: "system", Line: text})
}

func (l *logSink) add(ll LogLine) {
	b, err := json.Marshal(ll)
	l.mu.Lock()
	if ll.Stream == "stderr" {
		l.last = ll.Line
	}
	if err == nil && l.err == nil {
		l.w.Write(b)
		l.err = l.w.WriteByte('\n')
	}
	l.mu.Unlock()
	l.pub.log(ll)
}

// lastStderr returns the last line the worker wrote to stderr.
func (l *logSink) lastStderr() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

func (l *logSink) close() error {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = l.w.Flush()
	}
	if err := l.f.Close(); l.err == nil {
		l.err = err
	}
	return l.err
}

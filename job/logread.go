package job

import (
	"bufio"
	"fmt"

	"stratbench/internal/units"
)

// MaxLogRecord is the longest logs.jsonl line a reader takes. The engine
// cuts each line of output at 64 KiB (docs/limits.md, "Output") and
// stores it as a JSON object: up to 6 bytes for each escaped byte, its
// cut marker and about 70 bytes of time and stream, under 400 KiB; its own
// notices are shorter. A longer line is not one stratbench wrote: a reader
// skips it, without holding it, and says so (logLineSkipped).
const MaxLogRecord = 512 << 10

// logReader reads logs.jsonl a line at a time, holding at most
// MaxLogRecord bytes of one.
type logReader struct {
	r    *bufio.Reader
	line []byte // the line read so far (the unfinished line at the end)
	over int64  // bytes of a line over MaxLogRecord skipped so far; 0 when line holds it
}

// next returns the next complete line (without its newline), or, when the
// line is over MaxLogRecord, its length with skipped true. At the end of
// what is written so far it returns io.EOF and keeps what it has read of
// an unfinished line for the next call (a line being written).
func (lr *logReader) next() (line []byte, skipped int64, err error) {
	for {
		chunk, err := lr.r.ReadSlice('\n')
		switch {
		case lr.over > 0:
			lr.over += int64(len(chunk))
		case len(lr.line)+len(chunk) > MaxLogRecord+1: // +1: the newline
			lr.over = int64(len(lr.line) + len(chunk))
			lr.line = lr.line[:0]
		default:
			lr.line = append(lr.line, chunk...)
		}
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil:
			if lr.over > 0 {
				n := lr.over - 1
				lr.over = 0
				return nil, n, nil
			}
			line = lr.line[:len(lr.line)-1]
			lr.line = lr.line[:0]
			return line, 0, nil
		}
		return nil, 0, err
	}
}

// pending returns how many bytes of an unfinished line have been read.
func (lr *logReader) pending() int64 { return lr.over + int64(len(lr.line)) }

// logNotice is a system line of the reader's own, in the log's stream.
func logNotice(text string) LogLine { return LogLine{Stream: "system", Line: text} }

// logLineSkipped says that line lineNo of path was left out: n bytes, over
// MaxLogRecord.
func logLineSkipped(path string, lineNo int, n int64) LogLine {
	return logNotice(fmt.Sprintf("stratbench: %s line %d left out: %s, more than the %s a line stratbench writes takes",
		path, lineNo, units.Bytes(n), units.Bytes(MaxLogRecord)))
}

// logUnfinished says that path ends in a line without its newline, n
// bytes, left out.
func logUnfinished(path string, n int64) LogLine {
	return logNotice(fmt.Sprintf("stratbench: %s ends in an unfinished line (%s without its newline), left out",
		path, units.Bytes(n)))
}

package job

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"stratbench/data"
)

// Reading a job's records for the statistics of docs/robustness.md (a
// sweep's robustness block, `stratbench montecarlo`): the one place that
// knows where a finished job keeps its equity and trades records and how
// they are written, streamed a line at a time so that nothing is held per
// event. A move of the records, or a new format, changes this file.

// ErrRecordCut is the error of a record file that was cut at its cap: its
// last events are missing, and a statistic over it would take the curve
// for flat where it is not known.
var ErrRecordCut = errors.New("the record was cut at its cap: its last events are missing")

// maxRecordLine is the longest line of a record file read; a longer one is
// an error (the backtest writes lines of a few dozen bytes; the file is
// the strategy's neighbour).
const maxRecordLine = 64 << 10

// EquityPoints calls fn with each point of job id's equity record: the
// time (Unix nanoseconds) and the equity after every event, in the order
// of the events (times never go back; several events may share a time,
// the last of them then holds the equity at that time). It reads the
// record a line at a time, from records/ while the job runs and
// artifacts/ once it ended, never through a link. A job without the
// record returns an error wrapping os.ErrNotExist; a line that does not
// parse names the file and the line; a record cut at its cap is
// ErrRecordCut. fn's error ends the reading and is returned; so is ctx's.
func (s *Store) EquityPoints(ctx context.Context, id string, fn func(t int64, equity float64) error) error {
	return s.readRecord(ctx, id, RecordEquity, []string{"time", "equity"}, func(line int, f [][]byte) error {
		t, err := data.ParseTime(string(f[0]))
		if err != nil {
			return fmt.Errorf("line %d field time: %w", line, err)
		}
		v, err := strconv.ParseFloat(string(f[1]), 64)
		if err != nil {
			return fmt.Errorf("line %d field equity: %w", line, err)
		}
		return fn(t.UnixNano(), v)
	})
}

// TradePnLs calls fn with the exit time (Unix nanoseconds) and the net
// profit (after fees) of each closed trade of job id's trades record, in
// the order the trades closed. Its errors are EquityPoints'.
func (s *Store) TradePnLs(ctx context.Context, id string, fn func(exit int64, netPnL float64) error) error {
	return s.readRecord(ctx, id, RecordTrades, []string{"exit_time", "net_pnl"}, func(line int, f [][]byte) error {
		t, err := data.ParseTime(string(f[0]))
		if err != nil {
			return fmt.Errorf("line %d field exit_time: %w", line, err)
		}
		v, err := strconv.ParseFloat(string(f[1]), 64)
		if err != nil {
			return fmt.Errorf("line %d field net_pnl: %w", line, err)
		}
		return fn(t.UnixNano(), v)
	})
}

// readRecord reads record rec of job id: a header naming at least the
// columns cols, then one line per row, each handed to row with its line
// number and its fields of cols, in that order. A line with a quote goes
// through the CSV rules (the backtest quotes a symbol that needs it).
func (s *Store) readRecord(ctx context.Context, id string, rec Record, cols []string, row func(line int, fields [][]byte) error) error {
	f, err := s.OpenRecord(id, rec)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := scanRecord(ctx, f, cols, row); err != nil {
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	return nil
}

// scanRecord reads a record file: see readRecord.
func scanRecord(ctx context.Context, r io.Reader, cols []string, row func(line int, fields [][]byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxRecordLine)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return err
		}
		return errors.New("empty file: no header")
	}
	header := splitRecordLine(nil, bytes.TrimPrefix(sc.Bytes(), []byte("\ufeff")))
	at := make([]int, len(cols))
	need := 0
	for i, c := range cols {
		at[i] = -1
		for j, h := range header {
			if string(bytes.TrimSpace(h)) == c {
				at[i] = j
				need = max(need, j+1)
				break
			}
		}
		if at[i] < 0 {
			return fmt.Errorf("header %q has no %s column", sc.Text(), c)
		}
	}
	var fields [][]byte
	picked := make([][]byte, len(cols))
	for line := 2; sc.Scan(); line++ {
		if line%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		text := sc.Bytes()
		if len(text) > 0 && text[0] == '#' {
			return ErrRecordCut
		}
		fields = splitRecordLine(fields[:0], text)
		if len(fields) < need {
			return fmt.Errorf("line %d: %d fields, want %d at least", line, len(fields), need)
		}
		for i, j := range at {
			picked[i] = fields[j]
		}
		if err := row(line, picked); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return ctx.Err()
}

// splitRecordLine splits a CSV line into dst: by commas, or by the CSV
// rules when it holds a quote.
func splitRecordLine(dst [][]byte, line []byte) [][]byte {
	line = bytes.TrimSuffix(line, []byte("\r"))
	if bytes.IndexByte(line, '"') < 0 {
		for {
			i := bytes.IndexByte(line, ',')
			if i < 0 {
				return append(dst, line)
			}
			dst = append(dst, line[:i])
			line = line[i+1:]
		}
	}
	var field []byte
	quoted := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quoted && c == '"' && i+1 < len(line) && line[i+1] == '"':
			field = append(field, '"')
			i++
		case c == '"':
			quoted = !quoted
		case c == ',' && !quoted:
			dst = append(dst, field)
			field = nil
		default:
			field = append(field, c)
		}
	}
	return append(dst, field)
}

// OrderRecord is one line of a job's orders record (orders.csv): an order
// or a cancel a hook issued, or an execution (docs/report.md).
type OrderRecord struct {
	// Record is "order", "cancel" or "execution".
	Record string
	// Time is the event's time (Unix nanoseconds) and Event its number.
	Time  int64
	Event int
	// OrderID is the order's (or, for a cancel, the order cancelled).
	OrderID int64
	// Symbol, Side ("buy", "sell"), Qty and Limit (empty for a market
	// order) as written; Status ("filled", "rejected", "canceled") and the
	// Position after it, for an execution.
	Symbol, Side, Qty, Limit string
	Status                   string
	Position                 float64
	// Hook is the hook that issued an order or a cancel.
	Hook string
}

// Orders calls fn with each line of job id's orders record, in order. Its
// errors are EquityPoints'.
func (s *Store) Orders(ctx context.Context, id string, fn func(OrderRecord) error) error {
	cols := []string{"record", "time", "event", "order_id", "symbol", "side", "qty", "limit", "status", "position", "hook"}
	return s.readRecord(ctx, id, RecordOrders, cols, func(line int, f [][]byte) error {
		r := OrderRecord{Record: string(f[0]), Symbol: string(f[4]), Side: string(f[5]), Qty: string(f[6]), Limit: string(f[7]),
			Status: string(f[8]), Hook: string(f[10])}
		t, err := data.ParseTime(string(f[1]))
		if err != nil {
			return fmt.Errorf("line %d field time: %w", line, err)
		}
		r.Time = t.UnixNano()
		if r.Event, err = strconv.Atoi(string(f[2])); err != nil || r.Event < 0 {
			return fmt.Errorf("line %d field event: not an event number", line)
		}
		if r.OrderID, err = strconv.ParseInt(string(f[3]), 10, 64); err != nil {
			return fmt.Errorf("line %d field order_id: not a number", line)
		}
		if len(f[9]) > 0 {
			if r.Position, err = strconv.ParseFloat(string(f[9]), 64); err != nil {
				return fmt.Errorf("line %d field position: not a number", line)
			}
		}
		return fn(r)
	})
}

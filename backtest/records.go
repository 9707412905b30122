package backtest

import (
	"io"
	"strconv"
	"unicode"
	"unicode/utf8"

	"stratbench/contract"
)

// Record files: their names, and their headers.
const (
	equityFile = "equity.csv"
	tradesFile = "trades.csv"
	ordersFile = "orders.csv"

	equityHeader = "event,time,equity,cash,symbol,close\n"
	tradesHeader = "symbol,side,qty,entry_time,entry_price,exit_time,exit_price,entry_event,exit_event,fees,gross_pnl,net_pnl,return\n"
	ordersHeader = "record,time,event,order_id,symbol,side,qty,limit,price,fee,status,reason,cash,position,hook\n"
)

// recordChunk is how much of a record file is formatted before it is handed
// to the contract. recordSlack is the room a buffer keeps past what it
// expects to hold, for the line that crosses it; a buffer with less room
// left than a quarter of it doubles (up to recordChunk+recordSlack) at the
// end of a line. Buffers start at the size the run needs (the equity file:
// a line per event, equityLineBytes each; the trades and orders files, a
// few lines in most runs: recordSlack), not at the chunk: three chunks per
// run were two fifths of a sweep run's garbage in the host.
const (
	recordChunk     = 64 << 10
	recordSlack     = 4 << 10
	equityLineBytes = 64
)

// recordFile formats the lines of one record file into a buffer and hands
// them to the engine's writer in chunks of whole lines. Once the writer
// refuses more (the file reached its cap, or the disk failed: the engine
// reported it), the file is off and its lines are no longer formatted.
type recordFile struct {
	w   io.Writer
	buf []byte
	on  bool
	t   timeText
}

// open starts the file name in rec with its header line, in a buffer for
// about expect bytes (0 or more).
func (f *recordFile) open(rec contract.Records, name, header string, expect int) {
	f.w, f.on = rec.Create(name), true
	f.buf = append(make([]byte, 0, min(expect, recordChunk)+recordSlack), header...)
}

// endLine ends a line; the buffer goes to the engine when it is full, and
// doubles when the next line may not fit (append alone would grow a large
// buffer by a quarter at a time, copying it at each step).
func (f *recordFile) endLine() {
	f.buf = append(f.buf, '\n')
	switch {
	case len(f.buf) >= recordChunk:
		f.flush()
	case cap(f.buf)-len(f.buf) < recordSlack/4:
		f.buf = append(make([]byte, 0, min(2*cap(f.buf), recordChunk+recordSlack)), f.buf...)
	}
}

// flush hands the buffered lines to the contract.
func (f *recordFile) flush() {
	if f.on && len(f.buf) > 0 {
		if _, err := f.w.Write(f.buf); err != nil {
			f.on = false
		}
	}
	f.buf = f.buf[:0]
}

// appendCSV appends s as one CSV field, quoted exactly when encoding/csv
// would quote it (so that the files are what csv.Writer wrote before they
// were streamed).
func appendCSV(buf []byte, s string) []byte {
	if !csvNeedsQuotes(s) {
		return append(buf, s...)
	}
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			buf = append(buf, '"')
		}
		buf = append(buf, s[i])
	}
	return append(buf, '"')
}

// csvNeedsQuotes is encoding/csv's rule for a comma-separated field.
func csvNeedsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if s == `\.` {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ',', '"', '\r', '\n':
			return true
		}
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

func appendFloat(buf []byte, f float64) []byte { return strconv.AppendFloat(buf, f, 'f', -1, 64) }

// Codes of the strings an order record would otherwise repeat.
var (
	sideNames   = [...]contract.Side{"", contract.SideBuy, contract.SideSell}
	statusNames = [...]contract.ExecStatus{"", contract.ExecFilled, contract.ExecRejected, contract.ExecCanceled}
	hookNames   = [...]contract.Hook{"", contract.HookOnData, contract.HookOnExecution, contract.HookOnFinish, contract.HookOnBars}
)

func code[T ~string](names []T, s T) uint8 {
	for i, n := range names {
		if n == s {
			return uint8(i)
		}
	}
	return 0
}

// orderLine starts a line of orders.csv: record, time, event, order_id.
func (d *Driver) orderLine(kind string, event int, id int64) []byte {
	f := &d.ordersOut
	b := append(f.buf, kind...)
	b = append(b, ',')
	b = f.t.append(b, d.timeAt(event))
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(event), 10)
	b = append(b, ',')
	return strconv.AppendInt(b, id, 10)
}

// writeCommand writes a command as taken in during event to orders.csv.
func (d *Driver) writeCommand(c contract.Command, event int) {
	f := &d.ordersOut
	if !f.on {
		return
	}
	if c.Op == contract.OpCancel {
		b := d.orderLine("cancel", event, c.OrderID)
		b = append(b, ",,,,,,,,,,,"...)
		f.buf = append(b, string(hookNames[code(hookNames[:], c.Hook)])...)
		f.endLine()
		return
	}
	b := d.orderLine("order", event, c.OrderID)
	b = append(b, ',')
	b = appendCSV(b, d.intern(c.Symbol))
	b = append(b, ',')
	b = appendCSV(b, string(c.Op)) // buy, sell, or the unknown op as given
	b = append(b, ',')
	b = appendFloat(b, c.Qty)
	b = append(b, ',')
	if c.Limit != nil {
		b = appendFloat(b, *c.Limit)
	}
	b = append(b, ",,,,,,,"...)
	f.buf = append(b, string(hookNames[code(hookNames[:], c.Hook)])...)
	f.endLine()
}

// writeExecution writes an execution that happened during event to orders.csv.
func (d *Driver) writeExecution(x *contract.Execution, event int) {
	f := &d.ordersOut
	if !f.on {
		return
	}
	b := d.orderLine("execution", event, x.OrderID)
	b = append(b, ',')
	b = appendCSV(b, d.intern(x.Symbol))
	b = append(b, ',')
	b = append(b, string(sideNames[code(sideNames[:], x.Side)])...)
	b = append(b, ',')
	b = appendFloat(b, x.Qty)
	b = append(b, ',', ',')
	b = appendFloat(b, x.Price)
	b = append(b, ',')
	b = appendFloat(b, x.Fee)
	b = append(b, ',')
	b = append(b, string(statusNames[code(statusNames[:], x.Status)])...)
	b = append(b, ',')
	b = appendCSV(b, x.Reason)
	b = append(b, ',')
	b = appendFloat(b, x.Cash)
	b = append(b, ',')
	b = appendFloat(b, x.Position)
	f.buf = append(b, ',')
	f.endLine()
}

// writeTrade writes a closed trade to trades.csv.
func (d *Driver) writeTrade(t *trade) {
	f := &d.tradesOut
	if !f.on {
		return
	}
	side := "long"
	if !t.long {
		side = "short"
	}
	b := appendCSV(f.buf, d.symbols[t.symbol])
	b = append(b, ',')
	b = append(b, side...)
	b = append(b, ',')
	b = appendFloat(b, t.qty)
	b = append(b, ',')
	b = f.t.append(b, t.entryTime)
	b = append(b, ',')
	b = appendFloat(b, t.entryPrice)
	b = append(b, ',')
	b = f.t.append(b, t.exitTime)
	b = append(b, ',')
	b = appendFloat(b, t.exitPrice)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(t.entryEvent), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(t.exitEvent), 10)
	b = append(b, ',')
	b = appendFloat(b, t.fees)
	b = append(b, ',')
	b = appendFloat(b, t.grossPnL)
	b = append(b, ',')
	b = appendFloat(b, t.netPnL)
	b = append(b, ',')
	f.buf = appendFloat(b, t.netPnL/(t.entryPrice*t.qty))
	f.endLine()
}

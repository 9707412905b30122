package backtest

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"io"
	"iter"
	"math"
	"strconv"
	"time"

	"stratbench/engine"
)

// displayPoints is the size of the downsampled equity curve for the TUI.
const displayPoints = 400

// Outcome summarises the replay: metrics, the order-list hash, a
// downsampled equity curve and the artifacts equity.csv, trades.csv and
// orders.csv. It may be called after a failed or stopped Drive, and
// covers the events replayed until then.
func (d *Driver) Outcome() engine.Outcome {
	if d.outcomeDone != nil {
		return *d.outcomeDone
	}
	out := engine.Outcome{
		Metrics:    d.metrics(),
		OrdersHash: d.ordersHash(),
		Artifacts: []engine.Artifact{
			{Name: "equity.csv", Write: d.writeEquity},
			{Name: "trades.csv", Write: d.writeTrades},
			{Name: "orders.csv", Write: d.writeOrders},
		},
	}
	if d.marked > 0 {
		out.Equity = lttb(d.equity[:d.marked], displayPoints)
	}
	d.outcomeDone = &out
	return out
}

// lttb downsamples ys (at evenly spaced x) to at most n points with the
// largest-triangle-three-buckets algorithm, which keeps peaks and troughs.
func lttb(ys []float64, n int) []float64 {
	if len(ys) <= n || n < 3 {
		return append([]float64(nil), ys...)
	}
	out := make([]float64, 0, n)
	out = append(out, ys[0])
	bucket := float64(len(ys)-2) / float64(n-2)
	a := 0
	for i := 0; i < n-2; i++ {
		lo := int(float64(i)*bucket) + 1
		hi := int(float64(i+1)*bucket) + 1
		// Average of the next bucket (or the last point).
		nlo, nhi := hi, min(int(float64(i+2)*bucket)+1, len(ys))
		if i == n-3 {
			nlo, nhi = len(ys)-1, len(ys)
		}
		var ax, ay float64
		for j := nlo; j < nhi; j++ {
			ax += float64(j)
			ay += ys[j]
		}
		ax /= float64(nhi - nlo)
		ay /= float64(nhi - nlo)
		best, bestArea := lo, -1.0
		for j := lo; j < hi; j++ {
			area := math.Abs((float64(a)-ax)*(ys[j]-ys[a]) - (float64(a)-float64(j))*(ay-ys[a]))
			if area > bestArea {
				best, bestArea = j, area
			}
		}
		out = append(out, ys[best])
		a = best
	}
	return append(out, ys[len(ys)-1])
}

// writeEquity writes every replayed event: time, equity and cash.
func (d *Driver) writeEquity(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("event,time,equity,cash\n")
	// The cash changes only with fills, which happen before their event's mark.
	next, stop := iter.Pull(d.log.all())
	defer stop()
	fill, more := nextFill(next)
	cash := d.opts.Cash
	// A million rows: the cash text changes only with fills, and times are
	// formatted by a cache of the day (see timeText).
	cashText := strconv.AppendFloat(nil, cash, 'f', -1, 64)
	var times timeText
	var buf []byte
	for i := 0; i < d.marked; i++ {
		for more && int(fill.event) <= i {
			if fill.cash != cash {
				cash = fill.cash
				cashText = strconv.AppendFloat(cashText[:0], cash, 'f', -1, 64)
			}
			fill, more = nextFill(next)
		}
		buf = strconv.AppendInt(buf[:0], int64(i), 10)
		buf = append(buf, ',')
		buf = times.append(buf, d.bars.Time[i])
		buf = append(buf, ',')
		buf = strconv.AppendFloat(buf, d.equity[i], 'f', -1, 64)
		buf = append(buf, ',')
		buf = append(buf, cashText...)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// nextFill returns the next fill of the log.
func nextFill(next func() (*record, bool)) (*record, bool) {
	for {
		r, ok := next()
		if !ok || r.kind == recExecution && statusNames[r.status] == engine.ExecFilled {
			return r, ok
		}
	}
}

// writeTrades writes the closed round trips.
func (d *Driver) writeTrades(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"symbol", "side", "qty", "entry_time", "entry_price", "exit_time", "exit_price",
		"entry_event", "exit_event", "fees", "gross_pnl", "net_pnl", "return"})
	for _, t := range d.trades {
		side := "long"
		if !t.long {
			side = "short"
		}
		cw.Write([]string{
			d.data.symbols[t.symbol], side, csvFloat(t.qty),
			formatTime(t.entryTime), csvFloat(t.entryPrice), formatTime(t.exitTime), csvFloat(t.exitPrice),
			strconv.Itoa(t.entryEvent), strconv.Itoa(t.exitEvent),
			csvFloat(t.fees), csvFloat(t.grossPnL), csvFloat(t.netPnL), csvFloat(t.netPnL / (t.entryPrice * t.qty)),
		})
	}
	cw.Flush()
	return cw.Error()
}

// writeOrders writes every command as taken in and every execution, in sequence.
func (d *Driver) writeOrders(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"record", "time", "event", "order_id", "symbol", "side", "qty", "limit",
		"price", "fee", "status", "reason", "cash", "position", "hook"})
	for r := range d.log.all() {
		row := []string{"", formatTime(d.bars.Time[r.event]), strconv.Itoa(int(r.event)), strconv.FormatInt(r.id, 10),
			r.symbol, sideNames[r.side], "", "", "", "", "", "", "", "", ""}
		switch r.kind {
		case recOrder, recUnknown:
			row[0], row[6], row[14] = "order", csvFloat(r.qty), hookNames[r.hook]
			if r.kind == recUnknown {
				row[5] = r.text
			}
			if r.hasLimit {
				row[7] = csvFloat(r.price)
			}
		case recCancel:
			row[0], row[14] = "cancel", hookNames[r.hook]
		case recExecution:
			row[0], row[6], row[8], row[9] = "execution", csvFloat(r.qty), csvFloat(r.price), csvFloat(r.fee)
			row[10], row[11], row[12], row[13] = statusNames[r.status], r.text, csvFloat(r.cash), csvFloat(r.position)
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

func csvFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// timeText formats unix nanoseconds as time.RFC3339Nano in UTC, the way
// time.Time.AppendFormat does, but keeps the text of the current day so that
// consecutive bars of one day cost a few digit appends.
type timeText struct {
	day    int64  // unix day of prefix
	prefix []byte // "2006-01-02T"
	hasDay bool
}

func (t *timeText) append(buf []byte, ns int64) []byte {
	const nsPerDay = 24 * 60 * 60 * 1e9
	day := ns / nsPerDay
	if ns%nsPerDay < 0 {
		day--
	}
	if !t.hasDay || day != t.day {
		t.day, t.hasDay = day, true
		t.prefix = time.Unix(0, day*nsPerDay).UTC().AppendFormat(t.prefix[:0], "2006-01-02T")
	}
	rest := ns - day*nsPerDay
	secs, frac := rest/1e9, rest%1e9
	buf = append(buf, t.prefix...)
	buf = append2(buf, secs/3600)
	buf = append(buf, ':')
	buf = append2(buf, secs/60%60)
	buf = append(buf, ':')
	buf = append2(buf, secs%60)
	if frac != 0 {
		digits := strconv.AppendInt(nil, 1e9+frac, 10)[1:] // nine digits, zero padded
		buf = append(buf, '.')
		buf = append(buf, bytes.TrimRight(digits, "0")...)
	}
	return append(buf, 'Z')
}

func append2(buf []byte, v int64) []byte { return append(buf, byte('0'+v/10), byte('0'+v%10)) }

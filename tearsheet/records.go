package tearsheet

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"stratbench/metrics"
)

// The record files are the strategy's neighbours (its artifacts folder),
// so they are read as hostile: a line that does not parse ends the file's
// reading with a note, a file never sizes an allocation, and what is kept
// is capped.
const (
	// maxLine is the longest line read; a longer one ends the file.
	maxLine = 1 << 20
	// maxTradesKept bounds the trades read (the metrics need all of
	// them in memory: a median).
	maxTradesKept = 2_000_000
	// maxFillsKept bounds the fills kept to mark on the price charts.
	maxFillsKept = 50_000
	// maxSymbols bounds the symbols whose prices are kept.
	maxSymbols = 64
	// maxPointsHint bounds the room made ahead for an equity curve.
	maxPointsHint = 8 << 20
)

// Equity is what equity.csv gives: the curve the metrics use (one point
// per distinct timestamp), each symbol's closes, and the buy-and-hold
// curve at the curve's points.
type Equity struct {
	Curve metrics.Curve
	// BuyAndHold is, at each point of Curve, the start equity grown by
	// the mean over the symbols seen so far of close / first close − 1
	// (the report's buy_and_hold_return at the end). Nil for records
	// without closes (older versions).
	BuyAndHold []float64
	// Prices are the closes of each symbol, in the order symbols first
	// appear (at most maxSymbols).
	Prices []Price
	// Events is the number of lines read.
	Events int
	// Note says why the file was not read to its end, or that it was cut
	// at its cap; empty otherwise.
	Note string
}

// Price is one symbol's closes.
type Price struct {
	Symbol string
	Times  []int64
	Close  []float64
}

// recordError is a line of a record file that does not parse.
type recordError struct {
	file string
	line int
	msg  string
}

func (e *recordError) Error() string { return fmt.Sprintf("%s line %d: %s", e.file, e.line, e.msg) }

// ReadEquity reads an equity.csv (event,time,equity,cash[,symbol,close]).
// start is the run's start equity (the base of buy-and-hold). A bad line
// ends the reading: what came before it is kept, and Note says why.
func ReadEquity(r io.Reader, start float64) (*Equity, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("equity.csv: %w", err)
		}
		return nil, errors.New("equity.csv: empty file")
	}
	header := splitCSV(strings.TrimPrefix(sc.Text(), "\ufeff"))
	col := func(name string) int {
		for i, h := range header {
			if strings.TrimSpace(h) == name {
				return i
			}
		}
		return -1
	}
	cTime, cEq, cSym, cClose := col("time"), col("equity"), col("symbol"), col("close")
	if cTime < 0 || cEq < 0 {
		return nil, fmt.Errorf("equity.csv: header %q has no time or equity column", sc.Text())
	}
	withPrices := cSym >= 0 && cClose >= 0
	e := &Equity{}
	if f, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
		// A capacity from the file's size (a line is 40 bytes or more),
		// bounded: the file is the strategy's neighbour.
		if info, err := f.Stat(); err == nil {
			n := int(min(info.Size()/40, maxPointsHint))
			e.Curve.Times, e.Curve.Equity = make([]int64, 0, n), make([]float64, 0, n)
			if withPrices {
				e.BuyAndHold = make([]float64, 0, n)
			}
		}
	}
	bh := buyAndHold{start: start, index: map[string]int{}}
	var lastT int64
	var lastEq, lastBH float64
	have := false
	flush := func() {
		if have {
			e.Curve.Times = append(e.Curve.Times, lastT)
			e.Curve.Equity = append(e.Curve.Equity, lastEq)
			if withPrices {
				e.BuyAndHold = append(e.BuyAndHold, lastBH)
			}
		}
	}
	fields := make([]string, 0, 8)
	for line := 2; sc.Scan(); line++ {
		text := sc.Bytes()
		if len(text) > 0 && text[0] == '#' {
			e.Note = "equity.csv was cut at its cap: the charts end there"
			continue
		}
		fields = splitFields(fields[:0], text)
		bad := func(msg string) (*Equity, error) {
			e.Note = (&recordError{"equity.csv", line, msg}).Error() + ": the charts end before it"
			flush()
			return e, nil
		}
		if len(fields) <= max(cTime, cEq) || withPrices && len(fields) <= max(cSym, cClose) {
			return bad("too few fields")
		}
		t, err := parseTime(fields[cTime])
		if err != nil {
			return bad("time: " + err.Error())
		}
		eq, err := strconv.ParseFloat(fields[cEq], 64)
		if err != nil {
			return bad("equity: not a number")
		}
		if have && t < lastT {
			return bad("time goes back")
		}
		if have && t != lastT {
			flush()
		}
		if withPrices {
			c, err := strconv.ParseFloat(fields[cClose], 64)
			if err != nil {
				return bad("close: not a number")
			}
			s := bh.add(fields[cSym], c)
			if s < maxSymbols {
				if s == len(e.Prices) {
					e.Prices = append(e.Prices, Price{Symbol: strings.Clone(fields[cSym])})
				}
				p := &e.Prices[s]
				p.Times = append(p.Times, t)
				p.Close = append(p.Close, c)
			}
			lastBH = bh.value()
		}
		lastT, lastEq, have = t, eq, true
		e.Events++
	}
	if err := sc.Err(); err != nil {
		e.Note = "equity.csv: " + err.Error() + ": the charts end before it"
	}
	flush()
	return e, nil
}

// buyAndHold follows the mean return of the symbols from their first
// close, as the report's buy_and_hold_return.
type buyAndHold struct {
	start       float64
	index       map[string]int
	first, last []float64
	sum         float64 // Σ last/first over symbols with first > 0
	k           int     // those symbols
}

// add takes a close of symbol and returns the symbol's number.
func (b *buyAndHold) add(symbol string, c float64) int {
	s, ok := b.index[symbol]
	if !ok {
		s = len(b.first)
		b.index[strings.Clone(symbol)] = s
		b.first = append(b.first, c)
		b.last = append(b.last, c)
		if c > 0 {
			b.sum++
			b.k++
		}
		return s
	}
	if f := b.first[s]; f > 0 {
		b.sum += c/f - b.last[s]/f
	}
	b.last[s] = c
	return s
}

func (b *buyAndHold) value() float64 {
	if b.k == 0 {
		return b.start
	}
	return b.start * (b.sum / float64(b.k))
}

// Trades is what trades.csv gives.
type Trades struct {
	Trades []metrics.Trade
	Total  int    // lines read, kept or not
	Note   string // why the file was not read to its end, or a cut
}

// ReadTrades reads a trades.csv.
func ReadTrades(r io.Reader) (*Trades, error) {
	cr := csv.NewReader(bufio.NewReader(r))
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("trades.csv: header: %w", err)
	}
	idx := map[string]int{}
	for i, h := range header {
		idx[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	need := []string{"symbol", "side", "qty", "entry_time", "entry_price", "exit_time", "exit_price", "fees", "net_pnl", "return"}
	for _, n := range need {
		if _, ok := idx[n]; !ok {
			return nil, fmt.Errorf("trades.csv: header has no %s column", n)
		}
	}
	out := &Trades{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			out.Note = fmt.Sprintf("trades.csv line %d: %v: the trades end before it", line, err)
			break
		}
		t, msg := parseTrade(rec, idx)
		if msg != "" {
			out.Note = (&recordError{"trades.csv", line, msg}).Error() + ": the trades end before it"
			break
		}
		out.Total++
		if len(out.Trades) < maxTradesKept {
			out.Trades = append(out.Trades, t)
		}
	}
	if out.Total > len(out.Trades) {
		out.Note = fmt.Sprintf("only the first %d of %d trades were read", len(out.Trades), out.Total)
	}
	return out, nil
}

func parseTrade(rec []string, idx map[string]int) (metrics.Trade, string) {
	var t metrics.Trade
	get := func(name string) string {
		if i := idx[name]; i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	num := func(name string, dst *float64) string {
		v, err := strconv.ParseFloat(get(name), 64)
		if err != nil {
			return name + ": not a number"
		}
		*dst = v
		return ""
	}
	t.Symbol = strings.Clone(get("symbol"))
	t.Long = get("side") != "short"
	for _, f := range []struct {
		name string
		dst  *float64
	}{{"qty", &t.Qty}, {"entry_price", &t.EntryPrice}, {"exit_price", &t.ExitPrice}, {"fees", &t.Fees}, {"net_pnl", &t.NetPnL}, {"return", &t.Return}} {
		if msg := num(f.name, f.dst); msg != "" {
			return t, msg
		}
	}
	var err error
	if t.EntryTime, err = parseTime(get("entry_time")); err != nil {
		return t, "entry_time: " + err.Error()
	}
	if t.ExitTime, err = parseTime(get("exit_time")); err != nil {
		return t, "exit_time: " + err.Error()
	}
	return t, ""
}

// Fill is a filled order, from orders.csv.
type Fill struct {
	Time   int64
	Symbol string
	Buy    bool
	Qty    float64
	Price  float64
	Fee    float64
}

// Fills is what orders.csv gives: its fills.
type Fills struct {
	Fills []Fill // the first maxFillsKept
	Total int
	Note  string
}

// ReadFills reads the filled executions of an orders.csv.
func ReadFills(r io.Reader) (*Fills, error) {
	cr := csv.NewReader(bufio.NewReader(r))
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("orders.csv: header: %w", err)
	}
	idx := map[string]int{}
	for i, h := range header {
		idx[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, n := range []string{"record", "time", "symbol", "side", "qty", "price", "fee", "status"} {
		if _, ok := idx[n]; !ok {
			return nil, fmt.Errorf("orders.csv: header has no %s column", n)
		}
	}
	out := &Fills{}
	get := func(rec []string, name string) string {
		if i := idx[name]; i < len(rec) {
			return rec[i]
		}
		return ""
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			out.Note = fmt.Sprintf("orders.csv line %d: %v: the fills end before it", line, err)
			break
		}
		if get(rec, "record") != "execution" || get(rec, "status") != "filled" {
			continue
		}
		out.Total++
		if len(out.Fills) >= maxFillsKept {
			continue
		}
		f := Fill{Symbol: strings.Clone(get(rec, "symbol")), Buy: get(rec, "side") == "buy"}
		var e1, e2, e3, e4 error
		f.Time, e1 = parseTime(get(rec, "time"))
		f.Qty, e2 = strconv.ParseFloat(get(rec, "qty"), 64)
		f.Price, e3 = strconv.ParseFloat(get(rec, "price"), 64)
		f.Fee, e4 = strconv.ParseFloat(get(rec, "fee"), 64)
		if err := errors.Join(e1, e2, e3, e4); err != nil {
			out.Note = (&recordError{"orders.csv", line, "a fill that does not parse"}).Error() + ": the fills end before it"
			break
		}
		out.Fills = append(out.Fills, f)
	}
	if out.Total > len(out.Fills) && out.Note == "" {
		out.Note = fmt.Sprintf("the first %d of %d fills are marked", len(out.Fills), out.Total)
	}
	return out, nil
}

// splitFields splits a CSV line into dst; a line with a quote goes
// through encoding/csv (a symbol may be quoted).
func splitFields(dst []string, line []byte) []string {
	if bytes.IndexByte(line, '"') >= 0 {
		return append(dst, splitCSV(string(line))...)
	}
	s := string(line) // one allocation a line; fields share it
	for {
		i := strings.IndexByte(s, ',')
		if i < 0 {
			return append(dst, strings.TrimSuffix(s, "\r"))
		}
		dst = append(dst, s[:i])
		s = s[i+1:]
	}
}

func splitCSV(line string) []string {
	rec, err := csv.NewReader(strings.NewReader(line)).Read()
	if err != nil {
		return nil
	}
	return rec
}

// parseTime reads a record's time: RFC 3339 in UTC as the records write it
// (2026-01-05T09:30:00Z, with a fraction when there is one), quickly, and
// any other RFC 3339 time through the time package.
func parseTime(s string) (int64, error) {
	if len(s) >= 20 && s[len(s)-1] == 'Z' && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' {
		y, ok1 := digits(s[0:4])
		mo, ok2 := digits(s[5:7])
		d, ok3 := digits(s[8:10])
		h, ok4 := digits(s[11:13])
		mi, ok5 := digits(s[14:16])
		sec, ok6 := digits(s[17:19])
		frac, ok7 := int64(0), true
		if rest := s[19 : len(s)-1]; rest != "" {
			if rest[0] != '.' || len(rest) < 2 || len(rest) > 10 {
				ok7 = false
			} else {
				f, ok := digits(rest[1:])
				for i := len(rest) - 1; i < 9; i++ {
					f *= 10
				}
				frac, ok7 = int64(f), ok
			}
		}
		if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h < 24 && mi < 60 && sec < 60 {
			days := daysFromCivil(y, mo, d)
			return (days*86400+int64(h*3600+mi*60+sec))*1e9 + frac, nil
		}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, errors.New("not an RFC 3339 time")
	}
	return t.UnixNano(), nil
}

func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, len(s) > 0
}

// daysFromCivil is the unix day of a proleptic Gregorian date (Howard
// Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era*146097 + doe - 719468)
}

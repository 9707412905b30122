package python

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// The host's requests: the configuration (InitMsg), the batches of
// executions and bars (AppendBatch), on_finish.

// InitMsg configures the worker after its manifest was accepted.
type InitMsg struct {
	Params    map[string]any `json:"params"`
	Symbols   []string       `json:"symbols"`
	Cash      float64        `json:"cash"`
	Artifacts string         `json:"artifacts"`
	// BudgetMS is how long the worker may keep starting calls of one
	// batch: once that much time has passed since the batch arrived, it
	// yields after the call in flight. The host times every request on its
	// own clock (the hook limit plus a slack above this budget), so an
	// honest call is never killed before its limit and a worker that
	// ignores the budget gains nothing.
	BudgetMS float64 `json:"budget_ms"`
	// Local, when set, lets the worker of a one-symbol run deliver the
	// fill of a simple market order itself, from the next bar it holds,
	// instead of yielding for it (see YieldMsg.Local): the market's
	// settings it needs.
	Local *LocalMarket `json:"local,omitempty"`
}

// LocalMarket is what the worker needs to make a fill as the host's market
// does (backtest/doc.go): the fee, the slippage, whether shorts are allowed.
type LocalMarket struct {
	FeeBps      float64 `json:"fee_bps"`
	SlippageBps float64 `json:"slippage_bps"`
	AllowShort  bool    `json:"allow_short"`
	// MaxBytes bounds what the fills the worker delivers between two
	// yields take in frames (their command frames and the yield's
	// records): it yields instead of delivering one more past it, so
	// that an honest worker stays well within the protocol's message
	// limit however fast it goes.
	MaxBytes int `json:"max_bytes"`
}

// FinishMsg asks the worker to run on_finish as call Call.
type FinishMsg struct {
	Call uint64 `json:"call"`
}

// Columns are bars in event order; Symbol indexes the symbol table of InitMsg.
type Columns struct {
	Time   []int64
	Symbol []int32
	Open   []float64
	High   []float64
	Low    []float64
	Close  []float64
	Volume []float64
}

// Execution sides and statuses as the batch frame encodes them.
const (
	SideBuy  = 0
	SideSell = 1

	StatusFilled   = 0
	StatusRejected = 1
	StatusCanceled = 2
)

// ExecRecord is one execution delivered at the start of a batch, with the
// portfolio after it.
type ExecRecord struct {
	OrderID    int64
	Symbol     int32  // index into the symbol table, or -1
	SymbolName string // the order's symbol when it is not in the table
	Side       uint8
	Status     uint8
	Qty        float64
	Price      float64
	Fee        float64
	Cash       float64
	Position   float64
	Time       int64 // unix nanoseconds
	Event      int64
	Reason     string
}

// Sizes of the fixed parts of the binary records.
const (
	batchHeadSize = 8 + 4 + 4 + 4 + 4 + 4
	execSize      = 8 + 4 + 1 + 1 + 2 + 2 + 2 + 5*8 + 2*8
	yieldHeadSize = 8 + 1 + 4 + 4 + 4
	localFillSize = 8 + 8 + 4*8 + 8
	commandSize   = 1 + 1 + 2 + 8 + 8 + 8 + 8
	maxText       = 1<<16 - 1
)

// AppendBatch appends a batch frame of resumed+len(bars.Time) bars: the
// first resumed are bars the worker already holds (the unserved rest of the
// previous batch, which it left early to yield), then bars. Its payload is
// binary, little-endian:
//
//	uint64 first call, uint32 bars n, uint32 symbols, uint32 executions,
//	uint32 bars resumed, uint32 timestamp groups (0: one call per bar)
//	uint32 new bars per symbol, for each symbol
//	per execution: int64 order id, int32 symbol (-1: not in the table),
//	  uint8 side, uint8 status, uint16 len(reason), uint16 len(symbol name),
//	  2 bytes padding, float64 qty, price, fee, cash, position,
//	  int64 time, event, then the reason and the symbol name (UTF-8)
//	padding to a multiple of 8 bytes
//	the new bars' columns grouped by symbol (symbol 0's bars, then symbol
//	  1's, ...): time int64[m], open, high, low, close, volume float64[m]
//	with more than one symbol, the new bars' event order: int32[m] symbol indexes
//	the groups' sizes: uint32[groups] (AppendGroupedBatch)
//
// Grouping lets the worker extend each symbol's history with whole slices
// instead of per-bar appends; resuming spares it decoding bars twice when a
// strategy trades every few bars. symbols is the size of the symbol table.
func AppendBatch(dst []byte, firstCall uint64, resumed int, execs []ExecRecord, bars Columns, symbols int) ([]byte, error) {
	return appendBatch(dst, firstCall, resumed, execs, bars, symbols, nil)
}

// AppendGroupedBatch is AppendBatch for a strategy with on_bars, which
// the worker calls once per timestamp: groups are the sizes of the runs of
// bars with one time among the batch's resumed+len(bars.Time) bars, in
// order, each at least 1 (a batch never splits a timestamp: see
// backtest.Driver).
func AppendGroupedBatch(dst []byte, firstCall uint64, resumed int, execs []ExecRecord, bars Columns, symbols int, groups []uint32) ([]byte, error) {
	total := 0
	for _, g := range groups {
		if g == 0 {
			return dst, errors.New("encode batch: an empty timestamp group")
		}
		total += int(g)
	}
	if total != resumed+len(bars.Time) {
		return dst, fmt.Errorf("encode batch: timestamp groups of %d bars for a batch of %d", total, resumed+len(bars.Time))
	}
	if groups == nil {
		groups = []uint32{}
	}
	return appendBatch(dst, firstCall, resumed, execs, bars, symbols, groups)
}

// appendBatch encodes a batch; groups is nil for a strategy with on_data.
func appendBatch(dst []byte, firstCall uint64, resumed int, execs []ExecRecord, bars Columns, symbols int, groups []uint32) ([]byte, error) {
	n := len(bars.Time)
	size := batchHeadSize + 4*symbols
	for i := range execs {
		e := &execs[i]
		if len(e.Reason) > maxText || len(e.SymbolName) > maxText {
			return dst, fmt.Errorf("encode batch: execution %d: text too long", e.OrderID)
		}
		size += execSize + len(e.Reason) + len(e.SymbolName)
	}
	pad := (8 - size%8) % 8
	size += pad + 48*n + 4*len(groups)
	if symbols > 1 {
		size += 4 * n
	}
	dst = appendHeader(dst, TypeBatch, size)
	dst = binary.LittleEndian.AppendUint64(dst, firstCall)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(resumed+n))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(symbols))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(execs)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(resumed))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(groups)))
	counts := len(dst)
	dst = append(dst, make([]byte, 4*symbols)...)
	for _, s := range bars.Symbol {
		if s < 0 || int(s) >= symbols {
			return dst, fmt.Errorf("encode batch: symbol index %d out of range", s)
		}
		c := dst[counts+4*int(s):]
		binary.LittleEndian.PutUint32(c, binary.LittleEndian.Uint32(c)+1)
	}
	for i := range execs {
		e := &execs[i]
		name := e.SymbolName
		if e.Symbol >= 0 {
			name = ""
		}
		dst = binary.LittleEndian.AppendUint64(dst, uint64(e.OrderID))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(e.Symbol))
		dst = append(dst, e.Side, e.Status)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(e.Reason)))
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(name)))
		dst = append(dst, 0, 0)
		for _, f := range [...]float64{e.Qty, e.Price, e.Fee, e.Cash, e.Position} {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
		}
		dst = binary.LittleEndian.AppendUint64(dst, uint64(e.Time))
		dst = binary.LittleEndian.AppendUint64(dst, uint64(e.Event))
		dst = append(dst, e.Reason...)
		dst = append(dst, name...)
	}
	dst = append(dst, make([]byte, pad)...)
	cols := len(dst)
	dst = append(dst, make([]byte, 48*n)...)
	if symbols == 1 {
		// One symbol: the columns are the bars as they are.
		for i := 0; i < n; i++ {
			putBar(dst[cols:], n, i, i, bars)
		}
		return appendGroups(dst, groups), nil
	}
	starts := make([]int, symbols)
	for k := 1; k < symbols; k++ {
		starts[k] = starts[k-1] + int(binary.LittleEndian.Uint32(dst[counts+4*(k-1):]))
	}
	for i := 0; i < n; i++ {
		s := bars.Symbol[i]
		putBar(dst[cols:], n, starts[s], i, bars)
		starts[s]++
	}
	for _, s := range bars.Symbol {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(s))
	}
	return appendGroups(dst, groups), nil
}

func appendGroups(dst []byte, groups []uint32) []byte {
	for _, g := range groups {
		dst = binary.LittleEndian.AppendUint32(dst, g)
	}
	return dst
}

// putBar writes bar i of bars at row j of the n-row column block cols.
func putBar(cols []byte, n, j, i int, bars Columns) {
	binary.LittleEndian.PutUint64(cols[8*j:], uint64(bars.Time[i]))
	binary.LittleEndian.PutUint64(cols[8*(n+j):], math.Float64bits(bars.Open[i]))
	binary.LittleEndian.PutUint64(cols[8*(2*n+j):], math.Float64bits(bars.High[i]))
	binary.LittleEndian.PutUint64(cols[8*(3*n+j):], math.Float64bits(bars.Low[i]))
	binary.LittleEndian.PutUint64(cols[8*(4*n+j):], math.Float64bits(bars.Close[i]))
	binary.LittleEndian.PutUint64(cols[8*(5*n+j):], math.Float64bits(bars.Volume[i]))
}

// Float is a float64 that always encodes as a JSON float (1.0, not 1), so
// that the worker's json module decodes a float param as float, not int.
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil, fmt.Errorf("param value %v is not finite", v)
	}
	b := strconv.AppendFloat(nil, v, 'g', -1, 64)
	if !bytes.ContainsAny(b, ".e") {
		b = append(b, ".0"...)
	}
	return b, nil
}

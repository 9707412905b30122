package python

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"stratbench/contract"
	"stratbench/internal/units"
)

// Frame types. A frame is a 4-byte big-endian length n, then n bytes: one
// type byte and the payload.
const (
	// From the host.
	TypeInit   = 'I' // JSON InitMsg
	TypeBatch  = 'B' // batch header + columns, see AppendBatch
	TypeFinish = 'F' // JSON {"call": k}: run on_finish as call k
	TypeQuit   = 'Q' // no payload: exit

	// From the worker.
	TypeManifest = 'M' // JSON ManifestMsg
	TypeReady    = 'R' // JSON {}
	TypeCommand  = 'C' // binary CommandMsg, sent the moment a hook issues it
	TypeYield    = 'Y' // binary YieldMsg
	TypeError    = 'E' // JSON ErrorMsg
	TypeFinished = 'D' // JSON FinishedMsg
)

// ProtocolVersion is the version the bridge must report in its manifest.
const ProtocolVersion = 2

// Frame is one decoded frame.
type Frame struct {
	Type    byte
	Payload []byte
}

// Size returns the frame's length as announced on the wire.
func (f Frame) Size() int { return len(f.Payload) + 1 }

// ProtocolError is a frame the host refuses: the worker is killed for it.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return e.Msg }

func malformed(format string, args ...any) error {
	return &ProtocolError{Msg: fmt.Sprintf(format, args...)}
}

// Reader reads frames from the worker.
type Reader struct {
	r    io.Reader
	max  int
	hdr  [4]byte
	hdrN int    // header bytes read so far
	buf  []byte // the frame being read, once its length is known
	bufN int    // frame bytes read so far
}

// NewReader returns a Reader that refuses frames longer than max bytes.
func NewReader(r io.Reader, max int) *Reader { return &Reader{r: r, max: max} }

// Next reads one frame. The length is checked against the limit before
// anything is allocated. A clean end of stream between frames is io.EOF; a
// stream cut inside a frame is io.ErrUnexpectedEOF; a bad length is a
// *ProtocolError. Any other read error keeps the part of the frame read so
// far: the next call continues it.
func (r *Reader) Next() (Frame, error) {
	for r.buf == nil {
		n, err := r.r.Read(r.hdr[r.hdrN:])
		r.hdrN += n
		if r.hdrN == len(r.hdr) {
			size := binary.BigEndian.Uint32(r.hdr[:])
			if size == 0 {
				return Frame{}, malformed("empty frame")
			}
			if uint64(size) > uint64(r.max) {
				return Frame{}, malformed("message of %s exceeds the %s limit", units.Bytes(int64(size)), units.Bytes(int64(r.max)))
			}
			r.buf, r.bufN = make([]byte, size), 0
			break
		}
		if err != nil {
			if err == io.EOF && r.hdrN > 0 {
				err = io.ErrUnexpectedEOF
			}
			return Frame{}, err
		}
	}
	for r.bufN < len(r.buf) {
		n, err := r.r.Read(r.buf[r.bufN:])
		r.bufN += n
		if err != nil && r.bufN < len(r.buf) {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return Frame{}, err
		}
	}
	f := Frame{Type: r.buf[0], Payload: r.buf[1:]}
	r.buf, r.hdrN = nil, 0
	return f, nil
}

// appendHeader appends a frame header for a payload of n bytes and type t.
func appendHeader(dst []byte, t byte, n int) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(n+1))
	return append(dst, t)
}

// AppendJSON appends a frame of type t carrying v as JSON.
func AppendJSON(dst []byte, t byte, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return dst, fmt.Errorf("encode frame %q: %w", t, err)
	}
	dst = appendHeader(dst, t, len(body))
	return append(dst, body...), nil
}

// AppendQuit appends a quit frame.
func AppendQuit(dst []byte) []byte { return appendHeader(dst, TypeQuit, 0) }

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
	batchHeadSize = 8 + 4 + 4 + 4 + 4
	execSize      = 8 + 4 + 1 + 1 + 2 + 2 + 2 + 5*8 + 2*8
	yieldHeadSize = 8 + 1 + 4 + 4
	commandSize   = 1 + 1 + 2 + 8 + 8 + 8
	maxText       = 1<<16 - 1
)

// AppendBatch appends a batch frame of resumed+len(bars.Time) bars: the
// first resumed are bars the worker already holds (the unserved rest of the
// previous batch, which it left early to yield), then bars. Its payload is
// binary, little-endian:
//
//	uint64 first call, uint32 bars n, uint32 symbols, uint32 executions,
//	uint32 bars resumed
//	uint32 new bars per symbol, for each symbol
//	per execution: int64 order id, int32 symbol (-1: not in the table),
//	  uint8 side, uint8 status, uint16 len(reason), uint16 len(symbol name),
//	  2 bytes padding, float64 qty, price, fee, cash, position,
//	  int64 time, event, then the reason and the symbol name (UTF-8)
//	padding to a multiple of 8 bytes
//	the new bars' columns grouped by symbol (symbol 0's bars, then symbol
//	  1's, ...): time int64[m], open, high, low, close, volume float64[m]
//	with more than one symbol, the new bars' event order: int32[m] symbol indexes
//
// Grouping lets the worker extend each symbol's history with whole slices
// instead of per-bar appends; resuming spares it decoding bars twice when a
// strategy trades every few bars. symbols is the size of the symbol table.
func AppendBatch(dst []byte, firstCall uint64, resumed int, execs []ExecRecord, bars Columns, symbols int) ([]byte, error) {
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
	size += pad + 48*n
	if symbols > 1 {
		size += 4 * n
	}
	dst = appendHeader(dst, TypeBatch, size)
	dst = binary.LittleEndian.AppendUint64(dst, firstCall)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(resumed+n))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(symbols))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(execs)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(resumed))
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
		return dst, nil
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
	return dst, nil
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

// strategyHook reports whether h is a hook a strategy may define.
func strategyHook(h contract.Hook) bool { return h.Valid() && h != contract.HookStartup }

// ManifestMsg is the worker's first frame after importing the strategy.
type ManifestMsg struct {
	Protocol int             `json:"protocol"`
	Hooks    []contract.Hook `json:"hooks"`
	Name     *string         `json:"name"`
	Params   json.RawMessage `json:"params"`
	History  int             `json:"history"`
	Python   struct {
		Executable string `json:"executable"`
		Version    string `json:"version"`
	} `json:"python"`

	// ParamDefaults holds Params decoded: int64, float64, bool or string.
	ParamDefaults map[string]any `json:"-"`
}

// DecodeManifest decodes and validates a manifest frame.
func DecodeManifest(p []byte) (*ManifestMsg, error) {
	var m ManifestMsg
	if err := strictJSON(p, &m); err != nil {
		return nil, malformed("manifest: %v", err)
	}
	if m.Protocol != ProtocolVersion {
		return nil, malformed("manifest: protocol %d, want %d", m.Protocol, ProtocolVersion)
	}
	hasData := false
	for _, h := range m.Hooks {
		if !strategyHook(h) {
			return nil, malformed("manifest: unknown hook %q", h)
		}
		hasData = hasData || h == contract.HookOnData
	}
	if !hasData {
		return nil, malformed("manifest: no on_data hook")
	}
	if m.History < 1 || m.History > 1_000_000 {
		return nil, malformed("manifest: history %d out of range", m.History)
	}
	params, err := decodeParams(m.Params)
	if err != nil {
		return nil, err
	}
	m.ParamDefaults = params
	return &m, nil
}

// ParamError is a MANIFEST param default stratbench cannot represent (an
// int beyond 64 bits, a float that is not finite, a nested value). It is
// the strategy's mistake, not a broken protocol: the run fails with an
// exception at startup naming the param.
type ParamError struct {
	Name   string
	Reason string
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("MANIFEST['params'][%q]: %s", e.Name, e.Reason)
}

// decodeParams decodes a JSON object of scalar defaults, telling ints from
// floats the way Python's json module writes them (10 vs 10.0). A value Go
// cannot hold is a *ParamError; anything else that is wrong is malformed.
func decodeParams(raw json.RawMessage) (map[string]any, error) {
	out := map[string]any{}
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, malformed("manifest: params: %v", err)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch v := m[k].(type) {
		case bool, string:
			out[k] = v
		case json.Number:
			s := v.String()
			if strings.ContainsAny(s, ".eE") {
				f, err := strconv.ParseFloat(s, 64)
				if err != nil || math.IsInf(f, 0) {
					return nil, &ParamError{k, fmt.Sprintf("the default %s does not fit in a 64-bit float", cutText(s, 40))}
				}
				out[k] = f
			} else {
				i, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return nil, &ParamError{k, fmt.Sprintf("the default %s does not fit in a 64-bit integer (−2**63 to 2**63−1)", cutText(s, 40))}
				}
				out[k] = i
			}
		default:
			return nil, &ParamError{k, "the default must be an int, float, bool or str, not a nested value"}
		}
	}
	return out, nil
}

// cutText shortens s to at most n bytes for a message.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Command operations as command frames encode them.
const (
	OpBuy    = 0
	OpSell   = 1
	OpCancel = 2
)

// CommandMsg is one order or cancel, as a command frame carries it.
type CommandMsg struct {
	Op     uint8
	ID     int64
	Symbol string
	Qty    float64
	Limit  *float64
}

// DecodeCommand decodes and validates a command frame. The bridge sends
// one the moment a hook issues the command, so the host knows every command
// a call issued even when the call never returns. Its payload is binary,
// little-endian: uint8 op, uint8 has limit, uint16 len(symbol), int64 id,
// float64 qty, float64 limit, then the symbol (UTF-8).
func DecodeCommand(p []byte) (CommandMsg, error) {
	if len(p) < commandSize {
		return CommandMsg{}, malformed("command: %d bytes, want at least %d", len(p), commandSize)
	}
	c := CommandMsg{Op: p[0], ID: int64(binary.LittleEndian.Uint64(p[4:])),
		Qty: math.Float64frombits(binary.LittleEndian.Uint64(p[12:]))}
	switch p[1] {
	case 0:
	case 1:
		limit := math.Float64frombits(binary.LittleEndian.Uint64(p[20:]))
		c.Limit = &limit
	default:
		return CommandMsg{}, malformed("command: limit flag %d", p[1])
	}
	ns := int(binary.LittleEndian.Uint16(p[2:]))
	if rest := len(p) - commandSize; rest != ns {
		return CommandMsg{}, malformed("command: symbol of %d bytes, %d bytes follow", ns, rest)
	}
	c.Symbol = string(p[commandSize:])
	if err := c.validate(); err != nil {
		return CommandMsg{}, malformed("command: %v", err)
	}
	return c, nil
}

// YieldMsg reports the calls a batch completed. Durations are those of calls
// Through-len(Durations)+1 .. Through, in nanoseconds, as the worker measured
// them. Commands is the number of command frames the worker sent during the
// request; they belong to call Through, after which the worker yields.
type YieldMsg struct {
	Through   uint64
	Stopped   bool
	Durations []uint64
	Commands  int
}

// DecodeYield decodes and validates a yield frame. Its payload is binary,
// little-endian:
//
//	uint64 through, uint8 stopped, uint32 durations, uint32 commands
//	uint64 duration (ns), for each call
func DecodeYield(p []byte) (*YieldMsg, error) {
	if len(p) < yieldHeadSize {
		return nil, malformed("yield: %d bytes, want at least %d", len(p), yieldHeadSize)
	}
	y := &YieldMsg{Through: binary.LittleEndian.Uint64(p)}
	switch p[8] {
	case 0:
	case 1:
		y.Stopped = true
	default:
		return nil, malformed("yield: stopped flag %d", p[8])
	}
	nd := uint64(binary.LittleEndian.Uint32(p[9:]))
	y.Commands = int(binary.LittleEndian.Uint32(p[13:]))
	rest := p[yieldHeadSize:]
	if nd*8 != uint64(len(rest)) {
		return nil, malformed("yield: %d durations announced, %d bytes follow", nd, len(rest))
	}
	if nd > y.Through {
		return nil, malformed("yield: %d durations for %d calls", nd, y.Through)
	}
	y.Durations = make([]uint64, nd)
	for i := range y.Durations {
		y.Durations[i] = binary.LittleEndian.Uint64(rest[8*i:])
	}
	return y, nil
}

func (c CommandMsg) validate() error {
	if c.ID <= 0 {
		return fmt.Errorf("order id %d", c.ID)
	}
	switch c.Op {
	case OpBuy, OpSell:
		if c.Symbol == "" || len(c.Symbol) > 256 || !utf8.ValidString(c.Symbol) {
			return fmt.Errorf("symbol %q", c.Symbol)
		}
		if math.IsNaN(c.Qty) || math.IsInf(c.Qty, 0) || c.Limit != nil && (math.IsNaN(*c.Limit) || math.IsInf(*c.Limit, 0)) {
			return errors.New("quantity or limit not finite")
		}
	case OpCancel:
		if c.Symbol != "" || c.Qty != 0 || c.Limit != nil {
			return errors.New("cancel with order fields")
		}
	default:
		return fmt.Errorf("unknown op %d", c.Op)
	}
	return nil
}

// FrameMsg is one traceback frame.
type FrameMsg struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Function string `json:"function"`
	Source   string `json:"source"`
	User     bool   `json:"user"`
}

// ErrorMsg reports an exception in a hook (or at startup, call 0).
type ErrorMsg struct {
	Call      uint64        `json:"call"`
	Hook      contract.Hook `json:"hook"`
	Type      string        `json:"type"`
	Message   string        `json:"message"`
	Traceback string        `json:"traceback"`
	Frames    []FrameMsg    `json:"frames"`
	// Durations are those of the calls of the batch that completed before
	// the failed one, in nanoseconds.
	Durations []uint64 `json:"durations"`
}

// DecodeError decodes and validates an error frame.
func DecodeError(p []byte) (*ErrorMsg, error) {
	var e ErrorMsg
	if err := strictJSON(p, &e); err != nil {
		return nil, malformed("error: %v", err)
	}
	if !e.Hook.Valid() {
		return nil, malformed("error: unknown hook %q", e.Hook)
	}
	return &e, nil
}

// FinishedMsg reports that on_finish returned.
type FinishedMsg struct {
	Call       uint64          `json:"call"`
	DurationNS uint64          `json:"duration_ns"`
	Metadata   json.RawMessage `json:"metadata"`
}

// DecodeFinished decodes and validates a finished frame.
func DecodeFinished(p []byte) (*FinishedMsg, error) {
	var f FinishedMsg
	if err := strictJSON(p, &f); err != nil {
		return nil, malformed("finished: %v", err)
	}
	if m := bytes.TrimSpace(f.Metadata); len(m) > 0 && m[0] != '{' && string(m) != "null" {
		return nil, malformed("finished: metadata is not an object")
	}
	return &f, nil
}

// strictJSON decodes exactly one JSON value into v, refusing unknown fields
// and trailing data.
func strictJSON(p []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data")
	}
	return nil
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

package python

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
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
	TypeYield    = 'Y' // binary YieldMsg
	TypeError    = 'E' // JSON ErrorMsg
	TypeFinished = 'D' // JSON FinishedMsg
)

// ProtocolVersion is the version the bridge must report in its manifest.
const ProtocolVersion = 1

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
	r   io.Reader
	max int
	hdr [4]byte
}

// NewReader returns a Reader that refuses frames longer than max bytes.
func NewReader(r io.Reader, max int) *Reader { return &Reader{r: r, max: max} }

// Next reads one frame. The length is checked against the limit before
// anything is allocated. A clean end of stream between frames is io.EOF; a
// stream cut inside a frame is io.ErrUnexpectedEOF; a bad length is a
// *ProtocolError.
func (r *Reader) Next() (Frame, error) {
	if _, err := io.ReadFull(r.r, r.hdr[:]); err != nil {
		return Frame{}, err
	}
	n := binary.BigEndian.Uint32(r.hdr[:])
	if n == 0 {
		return Frame{}, malformed("empty frame")
	}
	if uint64(n) > uint64(r.max) {
		return Frame{}, malformed("message of %s exceeds the %s limit", formatBytes(int64(n)), formatBytes(int64(r.max)))
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r.r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Frame{}, err
	}
	return Frame{Type: buf[0], Payload: buf[1:]}, nil
}

// AppendFrame appends a frame header for a payload of n bytes and type t.
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

// BatchHeader is the JSON head of a batch frame.
type BatchHeader struct {
	FirstCall uint64 `json:"first_call"`
	N         int    `json:"n"`
	Counts    []int  `json:"counts"` // bars per symbol in this batch
	Execs     any    `json:"execs"`  // executions to deliver before the bars (a JSON array)
}

// AppendBatch appends a batch frame: a little-endian uint32 header length,
// the JSON header, padding to 8 bytes, then the columns grouped by symbol
// (time int64; open, high, low, close, volume float64) and, with more than
// one symbol, the event order as int32 symbol indexes. Grouping lets the
// worker extend each symbol's history with whole slices instead of per-bar
// appends. symbols is the size of the symbol table.
func AppendBatch(dst []byte, firstCall uint64, execs any, bars Columns, symbols int) ([]byte, error) {
	n := len(bars.Time)
	counts := make([]int, symbols)
	for _, s := range bars.Symbol {
		if s < 0 || int(s) >= symbols {
			return dst, fmt.Errorf("encode batch: symbol index %d out of range", s)
		}
		counts[s]++
	}
	if execs == nil {
		execs = []struct{}{}
	}
	head, err := json.Marshal(BatchHeader{FirstCall: firstCall, N: n, Counts: counts, Execs: execs})
	if err != nil {
		return dst, fmt.Errorf("encode batch header: %w", err)
	}
	bodyStart := 4 + len(head)
	pad := (8 - bodyStart%8) % 8
	size := bodyStart + pad + 48*n
	if symbols > 1 {
		size += 4 * n
	}
	dst = appendHeader(dst, TypeBatch, size)
	// The payload starts after the 5-byte frame header; alignment is relative
	// to the payload, which is what the worker slices.
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(head)))
	dst = append(dst, head...)
	dst = append(dst, make([]byte, pad)...)
	cols := len(dst)
	dst = append(dst, make([]byte, 48*n)...)
	starts := make([]int, symbols)
	for k := 1; k < symbols; k++ {
		starts[k] = starts[k-1] + counts[k-1]
	}
	for i := 0; i < n; i++ {
		j := i
		if symbols > 1 {
			j = starts[bars.Symbol[i]]
			starts[bars.Symbol[i]]++
		}
		binary.LittleEndian.PutUint64(dst[cols+8*j:], uint64(bars.Time[i]))
		binary.LittleEndian.PutUint64(dst[cols+8*(n+j):], math.Float64bits(bars.Open[i]))
		binary.LittleEndian.PutUint64(dst[cols+8*(2*n+j):], math.Float64bits(bars.High[i]))
		binary.LittleEndian.PutUint64(dst[cols+8*(3*n+j):], math.Float64bits(bars.Low[i]))
		binary.LittleEndian.PutUint64(dst[cols+8*(4*n+j):], math.Float64bits(bars.Close[i]))
		binary.LittleEndian.PutUint64(dst[cols+8*(5*n+j):], math.Float64bits(bars.Volume[i]))
	}
	if symbols > 1 {
		for _, s := range bars.Symbol {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(s))
		}
	}
	return dst, nil
}

// Hook names the bridge may report.
var knownHooks = map[string]bool{"on_data": true, "on_execution": true, "on_finish": true}

// ManifestMsg is the worker's first frame after importing the strategy.
type ManifestMsg struct {
	Protocol int             `json:"protocol"`
	Hooks    []string        `json:"hooks"`
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
		if !knownHooks[h] {
			return nil, malformed("manifest: unknown hook %q", h)
		}
		hasData = hasData || h == "on_data"
	}
	if !hasData {
		return nil, malformed("manifest: no on_data hook")
	}
	if m.History < 1 || m.History > 1_000_000 {
		return nil, malformed("manifest: history %d out of range", m.History)
	}
	params, err := decodeParams(m.Params)
	if err != nil {
		return nil, malformed("manifest: params: %v", err)
	}
	m.ParamDefaults = params
	return &m, nil
}

// decodeParams decodes a JSON object of scalar defaults, telling ints from
// floats the way Python's json module writes them (10 vs 10.0).
func decodeParams(raw json.RawMessage) (map[string]any, error) {
	out := map[string]any{}
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	for k, v := range m {
		switch v := v.(type) {
		case bool, string:
			out[k] = v
		case json.Number:
			s := v.String()
			if strings.ContainsAny(s, ".eE") {
				f, err := v.Float64()
				if err != nil {
					return nil, fmt.Errorf("%q: %v", k, err)
				}
				out[k] = f
			} else {
				i, err := v.Int64()
				if err != nil {
					return nil, fmt.Errorf("%q: %v", k, err)
				}
				out[k] = i
			}
		default:
			return nil, fmt.Errorf("%q: not a scalar", k)
		}
	}
	return out, nil
}

// CommandMsg is one order or cancel in a yield.
type CommandMsg struct {
	Op     string   `json:"op"`
	ID     int64    `json:"id"`
	Symbol string   `json:"symbol"`
	Qty    float64  `json:"qty"`
	Limit  *float64 `json:"limit"`
}

// YieldMsg reports the calls a batch completed. Durations are those of calls
// Through-len(Durations)+1 .. Through, in nanoseconds.
type YieldMsg struct {
	Through   uint64
	Stopped   bool
	Durations []uint64
	Commands  []CommandMsg
}

const yieldHead = 8 + 1 + 4

// DecodeYield decodes and validates a yield frame: little-endian uint64
// through, uint8 stopped, uint32 count, count uint64 durations, then an
// optional JSON array of commands.
func DecodeYield(p []byte) (*YieldMsg, error) {
	if len(p) < yieldHead {
		return nil, malformed("yield: %d bytes, want at least %d", len(p), yieldHead)
	}
	y := &YieldMsg{Through: binary.LittleEndian.Uint64(p)}
	switch p[8] {
	case 0:
	case 1:
		y.Stopped = true
	default:
		return nil, malformed("yield: stopped flag %d", p[8])
	}
	n := binary.LittleEndian.Uint32(p[9:])
	if uint64(n)*8 > uint64(len(p)-yieldHead) {
		return nil, malformed("yield: %d durations announced, %d bytes left", n, len(p)-yieldHead)
	}
	if uint64(n) > y.Through {
		return nil, malformed("yield: %d durations for %d calls", n, y.Through)
	}
	y.Durations = make([]uint64, n)
	for i := range y.Durations {
		y.Durations[i] = binary.LittleEndian.Uint64(p[yieldHead+8*i:])
	}
	tail := p[yieldHead+8*int(n):]
	if len(tail) == 0 {
		return y, nil
	}
	if err := strictJSON(tail, &y.Commands); err != nil {
		return nil, malformed("yield: commands: %v", err)
	}
	if len(y.Commands) == 0 {
		return nil, malformed("yield: empty command list")
	}
	for i, c := range y.Commands {
		if err := c.validate(); err != nil {
			return nil, malformed("yield: command %d: %v", i, err)
		}
	}
	return y, nil
}

func (c CommandMsg) validate() error {
	if c.ID <= 0 {
		return fmt.Errorf("order id %d", c.ID)
	}
	switch c.Op {
	case "buy", "sell":
		if c.Symbol == "" || len(c.Symbol) > 256 {
			return fmt.Errorf("symbol of %d bytes", len(c.Symbol))
		}
	case "cancel":
		if c.Symbol != "" || c.Qty != 0 || c.Limit != nil {
			return errors.New("cancel with order fields")
		}
	default:
		return fmt.Errorf("unknown op %q", c.Op)
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
	Call      uint64     `json:"call"`
	Hook      string     `json:"hook"`
	Type      string     `json:"type"`
	Message   string     `json:"message"`
	Traceback string     `json:"traceback"`
	Frames    []FrameMsg `json:"frames"`
	Commands  int        `json:"commands"` // commands the failed hook had issued
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
	if e.Hook != "startup" && !knownHooks[e.Hook] {
		return nil, malformed("error: unknown hook %q", e.Hook)
	}
	if e.Commands < 0 {
		return nil, malformed("error: %d commands", e.Commands)
	}
	return &e, nil
}

// FinishedMsg reports that on_finish returned.
type FinishedMsg struct {
	Call       uint64          `json:"call"`
	DurationNS uint64          `json:"duration_ns"`
	Metadata   json.RawMessage `json:"metadata"`
	Commands   int             `json:"commands"`
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
	if f.Commands < 0 {
		return nil, malformed("finished: %d commands", f.Commands)
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

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
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

package python

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"stratbench/contract"
)

// The worker's messages, decoded and validated: a worker is hostile, so
// every field is checked before the host uses it (docs/ARCHITECTURE.md,
// "The trust boundary").

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
	bar := 0 // on_data and on_bars: the bridge refuses a strategy with both
	for _, h := range m.Hooks {
		if !strategyHook(h) {
			return nil, malformed("manifest: unknown hook %q", h)
		}
		if h == contract.HookOnData || h == contract.HookOnBars {
			bar++
		}
	}
	if bar != 1 {
		return nil, malformed("manifest: %d of on_data and on_bars, want one", bar)
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
	// Call is the hook call that issued it, as the worker says: the call
	// its yield ends with, or one whose fill it delivered itself
	// (YieldMsg.Local).
	Call uint64
}

// DecodeCommand decodes and validates a command frame. The bridge sends
// one the moment a hook issues the command, so the host knows every command
// a call issued even when the call never returns. Its payload is binary,
// little-endian: uint8 op, uint8 has limit, uint16 len(symbol), int64 id,
// float64 qty, float64 limit, uint64 call, then the symbol (UTF-8).
func DecodeCommand(p []byte) (CommandMsg, error) {
	if len(p) < commandSize {
		return CommandMsg{}, malformed("command: %d bytes, want at least %d", len(p), commandSize)
	}
	c := CommandMsg{Op: p[0], ID: int64(binary.LittleEndian.Uint64(p[4:])),
		Qty: math.Float64frombits(binary.LittleEndian.Uint64(p[12:])), Call: binary.LittleEndian.Uint64(p[28:])}
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
// request: one for each of Local, then those of call Through, after which
// the worker yields.
type YieldMsg struct {
	Through   uint64
	Stopped   bool
	Durations []uint64
	Commands  int
	// Local are the fills the worker delivered itself during the batch, in
	// order (InitMsg.Local): the host makes each from the order and checks
	// it is the one the worker delivered.
	Local []LocalFill
}

// LocalFill is a fill the worker delivered itself: of the order call Call
// placed (its only command), at the next bar, with the portfolio after it.
type LocalFill struct {
	Call     uint64
	OrderID  int64
	Price    float64
	Fee      float64
	Cash     float64
	Position float64
	Time     int64
}

// DecodeYield decodes and validates a yield frame. Its payload is binary,
// little-endian:
//
//	uint64 through, uint8 stopped, uint32 durations, uint32 commands,
//	uint32 local fills
//	uint64 duration (ns), for each call
//	per local fill: uint64 call, int64 order id, float64 price, fee,
//	  cash, position, int64 time
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
	nl := uint64(binary.LittleEndian.Uint32(p[17:]))
	rest := p[yieldHeadSize:]
	if nd*8+nl*localFillSize != uint64(len(rest)) {
		return nil, malformed("yield: %d durations and %d local fills announced, %d bytes follow", nd, nl, len(rest))
	}
	if nd > y.Through {
		return nil, malformed("yield: %d durations for %d calls", nd, y.Through)
	}
	if nl > nd || nl > uint64(y.Commands) {
		return nil, malformed("yield: %d local fills for %d calls and %d commands", nl, nd, y.Commands)
	}
	y.Durations = make([]uint64, nd)
	for i := range y.Durations {
		y.Durations[i] = binary.LittleEndian.Uint64(rest[8*i:])
	}
	rest = rest[8*nd:]
	if nl > 0 {
		y.Local = make([]LocalFill, nl)
	}
	for i := range y.Local {
		r := rest[localFillSize*i:]
		f := func(k int) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(r[k:])) }
		y.Local[i] = LocalFill{Call: binary.LittleEndian.Uint64(r), OrderID: int64(binary.LittleEndian.Uint64(r[8:])),
			Price: f(16), Fee: f(24), Cash: f(32), Position: f(40), Time: int64(binary.LittleEndian.Uint64(r[48:]))}
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

package python

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

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
const ProtocolVersion = 4

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

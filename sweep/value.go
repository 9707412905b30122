package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Param values are int64, float64, bool or string, typed from text by
// contract.ParseParam and contract.GuessParam: the rules of --param for one
// run, so that a sweep's run gets exactly the params (and so the
// fingerprint) of the same run with --param.

// typeName names a value's type as a strategy author writes it.
func typeName(v any) string {
	switch v.(type) {
	case int64:
		return "int"
	case float64:
		return "float"
	case bool:
		return "bool"
	case string:
		return "str"
	}
	return fmt.Sprintf("%T", v)
}

// formatArg writes v as the text of a --param argument that --param types
// back to exactly v, whether the MANIFEST declares the param or not: a float
// always looks like one (5.0, not 5), with the shortest digits that parse
// back to the same float64.
func formatArg(v any) string {
	switch v := v.(type) {
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	case bool:
		return strconv.FormatBool(v)
	case string:
		return v
	}
	return fmt.Sprint(v)
}

// appendValueJSON appends v as JSON. A float is written so that it reads
// back as a float (5.0, as Python's json writes it), an int without a
// point: sweep.json and results.jsonl keep each param's type.
func appendValueJSON(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("param value %v is not finite", v)
		}
		num, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		b = append(b, num...)
		if !bytes.ContainsAny(num, ".eE") {
			b = append(b, ".0"...)
		}
		return b, nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case string:
		s, err := json.Marshal(v)
		return append(b, s...), err
	}
	return nil, fmt.Errorf("param value of type %T", v)
}

// decodeValue reads a param value written by appendValueJSON: a number
// with a point or an exponent is a float, one without an int (the rule the
// MANIFEST's defaults follow).
func decodeValue(raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, errors.New("no value")
	}
	switch c := raw[0]; {
	case c == '"' || c == 't' || c == 'f':
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		return v, nil
	case c == '-' || c >= '0' && c <= '9':
		if !json.Valid(raw) {
			return nil, fmt.Errorf("%s is not a number", cutText(string(raw), 40))
		}
		s := string(raw)
		if strings.ContainsAny(s, ".eE") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsInf(f, 0) {
				return nil, fmt.Errorf("%s does not fit in a 64-bit float", cutText(s, 40))
			}
			return f, nil
		}
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s does not fit in a 64-bit integer", cutText(s, 40))
		}
		return i, nil
	}
	return nil, fmt.Errorf("a param value must be an int, float, bool or string, not %s", cutText(string(raw), 40))
}

// Param is one param's name and value.
type Param struct {
	Name string
	// Value is an int64, float64, bool or string.
	Value any
}

// Params are param values in a fixed order: a combination's in the order
// of the --grid flags, the fixed ones in the order of the --param flags.
// In JSON they are an object in that order whose floats always carry a
// point or an exponent, so that a value reads back with its type.
type Params []Param

// Get returns the value of the param name.
func (p Params) Get(name string) (any, bool) {
	for _, kv := range p {
		if kv.Name == name {
			return kv.Value, true
		}
	}
	return nil, false
}

// String writes p as name=value pairs, as --param takes them.
func (p Params) String() string {
	parts := make([]string, len(p))
	for i, kv := range p {
		parts[i] = kv.Name + "=" + formatArg(kv.Value)
	}
	return strings.Join(parts, ", ")
}

// MarshalJSON writes p as an object in its order; nil Params are null
// (the best params of a fold where no run passed), empty ones {}.
func (p Params) MarshalJSON() ([]byte, error) {
	if p == nil {
		return []byte("null"), nil
	}
	b := []byte{'{'}
	for i, kv := range p {
		if i > 0 {
			b = append(b, ',')
		}
		name, err := json.Marshal(kv.Name)
		if err != nil {
			return nil, err
		}
		b = append(append(b, name...), ':')
		if b, err = appendValueJSON(b, kv.Value); err != nil {
			return nil, fmt.Errorf("param %s: %w", kv.Name, err)
		}
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads an object written by MarshalJSON, keeping its order.
func (p *Params) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		*p = nil
		return nil
	}
	out := Params{}
	err := decodeObject(data, func(name string, raw json.RawMessage) error {
		v, err := decodeValue(raw)
		if err != nil {
			return fmt.Errorf("param %s: %w", name, err)
		}
		out = append(out, Param{name, v})
		return nil
	})
	if err != nil {
		return err
	}
	*p = out
	return nil
}

// decodeObject calls fn for every member of the JSON object data, in the
// order written. A repeated name is an error. null is an empty object.
func decodeObject(data []byte, fn func(name string, raw json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if tok != json.Delim('{') {
		return fmt.Errorf("want an object, not %s", cutText(string(bytes.TrimSpace(data)), 40))
	}
	var seen []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name := tok.(string) // the decoder allows only strings as names
		if slices.Contains(seen, name) {
			return fmt.Errorf("%q appears twice", name)
		}
		seen = append(seen, name)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if err := fn(name, raw); err != nil {
			return err
		}
	}
	_, err = dec.Token() // the closing brace
	return err
}

// cutText shortens s to at most n bytes for a message.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

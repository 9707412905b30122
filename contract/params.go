package contract

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// A param's value is an int64, float64, bool or string: the Go types a
// strategy's MANIFEST defaults decode to. The rules below type a param
// given as text (--param k=v for one run, --grid k=… for a sweep's runs)
// alike, so that a sweep's run gets exactly the params, and so the
// fingerprint, of the same run with --param.

// ErrNotABool is ParseParam's refusal of a bool param's value that is
// none of the words it takes.
var ErrNotABool = errors.New("not a bool: want true, false, yes, no, on, off, 1 or 0, in any case")

// ParseParam types text like the MANIFEST default def: an int, a finite
// number, a bool (true/1/yes/on, false/0/no/off, in any case), or the
// text itself for a string default.
func ParseParam(def any, text string) (any, error) {
	switch def.(type) {
	case int64:
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, errors.New("not an int")
		}
		return v, nil
	case float64:
		v, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, errors.New("not a finite number")
		}
		return v, nil
	case bool:
		switch strings.ToLower(text) {
		case "true", "1", "yes", "on":
			return true, nil
		case "false", "0", "no", "off":
			return false, nil
		}
		return nil, ErrNotABool
	}
	return text, nil
}

// GuessParam types text by its look, for a param the MANIFEST does not
// declare a default of: an int, else a finite number, else true or false,
// else the text.
func GuessParam(text string) any {
	if v, err := strconv.ParseInt(text, 10, 64); err == nil {
		return v
	}
	if v, err := strconv.ParseFloat(text, 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
		return v
	}
	switch text {
	case "true":
		return true
	case "false":
		return false
	}
	return text
}

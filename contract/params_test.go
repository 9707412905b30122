package contract

import (
	"errors"
	"testing"
)

// TestBoolWords: a bool param takes exactly the words its refusal lists,
// in any case, for --param and --grid alike.
func TestBoolWords(t *testing.T) {
	for _, w := range []string{"true", "yes", "on", "1", "TRUE", "Yes", "oN"} {
		if v, err := ParseParam(true, w); err != nil || v != true {
			t.Errorf("%q: %v, %v, want true", w, v, err)
		}
	}
	for _, w := range []string{"false", "no", "off", "0", "False", "NO", "Off"} {
		if v, err := ParseParam(true, w); err != nil || v != false {
			t.Errorf("%q: %v, %v, want false", w, v, err)
		}
	}
	for _, w := range []string{"maybe", "", "2", "y", "t", "none"} {
		if _, err := ParseParam(true, w); err == nil || !errors.Is(err, ErrNotABool) {
			t.Errorf("%q: %v, want %v", w, err, ErrNotABool)
		}
	}
}

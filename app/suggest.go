package app

import (
	"fmt"
	"stratbench/internal/editdist"
	"strings"
)

// FlagError adds to an unknown flag error the flags whose names are close
// to the one typed ("--fee-bp": did you mean --fee-bps?), as cobra does for
// commands. names are the command's flag names, without dashes.
func FlagError(err error, names []string) error {
	msg := err.Error()
	typed, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return usage(err)
	}
	typed, _, _ = strings.Cut(typed, "=")
	var close []string
	for _, n := range names {
		if strings.HasPrefix(n, typed) || strings.HasPrefix(typed, n) || editdist.Levenshtein(typed, n) <= 2 {
			close = append(close, "--"+n)
		}
	}
	if len(close) == 0 {
		return usage(err)
	}
	return usage(fmt.Errorf("%s; did you mean %s?", msg, strings.Join(close, " or ")))
}

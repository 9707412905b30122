package app

import (
	"fmt"
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
		if strings.HasPrefix(n, typed) || strings.HasPrefix(typed, n) || distance(typed, n) <= 2 {
			close = append(close, "--"+n)
		}
	}
	if len(close) == 0 {
		return usage(err)
	}
	return usage(fmt.Errorf("%s; did you mean %s?", msg, strings.Join(close, " or ")))
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

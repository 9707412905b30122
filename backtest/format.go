package backtest

import (
	"strconv"
	"time"
)

// formatTime renders unix nanoseconds as RFC 3339 in UTC.
func formatTime(ns int64) string {
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}

// fmtFloat formats a number for messages and the flags text: the shortest
// decimal that reads back to f, without an exponent.
func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

package data

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// unixMillisThreshold separates unix seconds from unix milliseconds: a
// numeric timestamp whose integer part is at least this large (in absolute
// value) is read as milliseconds. 1e11 seconds is the year 5138; 1e11
// milliseconds is 1973-03-03.
const unixMillisThreshold = 100_000_000_000

// Bounds of int64 unix nanoseconds, in seconds.
const (
	minUnixSeconds = math.MinInt64 / 1_000_000_000
	maxUnixSeconds = math.MaxInt64 / 1_000_000_000
)

var (
	errTimestampSyntax = errors.New(`not a timestamp (want RFC 3339, "YYYY-MM-DD HH:MM:SS" in UTC, or unix seconds or milliseconds)`)
	errTimestampRange  = errors.New("timestamp out of range (years 1678 to 2262)")
)

// IsBareDate reports whether s is a date without a time of day
// ("2026-09-30"), which ParseTime reads as midnight UTC and ParseWindow's
// --to as the end of that day.
func IsBareDate(s string) bool {
	return len(s) == 10 && s[4] == '-' && s[7] == '-'
}

// ParseTime parses a timestamp in one of the forms bar data accepts: RFC 3339
// ("2026-09-30T12:00:00Z", "2026-09-30T14:00:00+02:00", fractional seconds
// allowed), "2026-09-30 12:00:00" (UTC unless a zone follows), a bare date
// "2026-09-30" (midnight UTC), or unix seconds or milliseconds (integer or
// decimal). It is the grammar of --from and --to as well (ParseWindow reads
// a bare date in --to as the end of that day).
func ParseTime(s string) (time.Time, error) {
	ns, err := parseTimestamp([]byte(s))
	if err != nil {
		return time.Time{}, fmt.Errorf("parse time %q: %w", s, err)
	}
	return time.Unix(0, ns).UTC(), nil
}

// parseTimestamp returns b as unix nanoseconds. It does not allocate.
func parseTimestamp(b []byte) (int64, error) {
	if len(b) >= 10 && b[4] == '-' {
		return parseDateTime(b)
	}
	return parseUnix(b)
}

// parseUnix parses [sign] digits [. digits] as unix seconds or milliseconds.
func parseUnix(b []byte) (int64, error) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	intPart, rest := leadingDigits(b)
	if len(intPart) == 0 {
		return 0, errTimestampSyntax
	}
	var frac []byte
	if len(rest) > 0 {
		if rest[0] != '.' {
			return 0, errTimestampSyntax
		}
		frac, rest = leadingDigits(rest[1:])
		if len(frac) == 0 || len(rest) > 0 {
			return 0, errTimestampSyntax
		}
	}
	// Leading zeros do not count towards the magnitude.
	for len(intPart) > 1 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	if len(intPart) > 18 {
		return 0, errTimestampRange
	}
	var whole int64
	for _, c := range intPart {
		whole = whole*10 + int64(c-'0')
	}
	unit := int64(1_000_000_000) // nanoseconds per unit
	fracDigits := 9
	if whole >= unixMillisThreshold {
		unit = 1_000_000
		fracDigits = 6
	}
	if whole > math.MaxInt64/unit {
		return 0, errTimestampRange
	}
	ns := whole * unit
	// Digits beyond nanosecond precision are dropped.
	var fracNs int64
	scale := unit
	for i := 0; i < len(frac) && i < fracDigits; i++ {
		scale /= 10
		fracNs += int64(frac[i]-'0') * scale
	}
	if ns > math.MaxInt64-fracNs {
		return 0, errTimestampRange
	}
	ns += fracNs
	if neg {
		ns = -ns
	}
	return ns, nil
}

func leadingDigits(b []byte) (digits, rest []byte) {
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return b[:i], b[i:]
}

// parseDateTime parses YYYY-MM-DD[(T|t| )HH:MM:SS[.frac]][Z|z|±HH:MM].
func parseDateTime(b []byte) (int64, error) {
	year, ok1 := fixedDigits(b[0:4])
	month, ok2 := fixedDigits(b[5:7])
	day, ok3 := fixedDigits(b[8:10])
	if !ok1 || !ok2 || !ok3 || b[7] != '-' {
		return 0, errTimestampSyntax
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) {
		return 0, fmt.Errorf("invalid date %04d-%02d-%02d", year, month, day)
	}
	secs := daysFromCivil(year, month, day) * 86400
	var fracNs int64
	rest := b[10:]
	if len(rest) > 0 {
		if rest[0] != 'T' && rest[0] != 't' && rest[0] != ' ' {
			return 0, errTimestampSyntax
		}
		rest = rest[1:]
		if len(rest) < 8 || rest[2] != ':' || rest[5] != ':' {
			return 0, errTimestampSyntax
		}
		hour, ok1 := fixedDigits(rest[0:2])
		minute, ok2 := fixedDigits(rest[3:5])
		sec, ok3 := fixedDigits(rest[6:8])
		if !ok1 || !ok2 || !ok3 {
			return 0, errTimestampSyntax
		}
		if hour > 23 || minute > 59 || sec > 59 {
			return 0, fmt.Errorf("invalid time of day %02d:%02d:%02d", hour, minute, sec)
		}
		secs += int64(hour*3600 + minute*60 + sec)
		rest = rest[8:]
		if len(rest) > 0 && rest[0] == '.' {
			var frac []byte
			frac, rest = leadingDigits(rest[1:])
			if len(frac) == 0 {
				return 0, errTimestampSyntax
			}
			scale := int64(1_000_000_000)
			for i := 0; i < len(frac) && i < 9; i++ {
				scale /= 10
				fracNs += int64(frac[i]-'0') * scale
			}
		}
		switch {
		case len(rest) == 0:
		case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
		case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
			zh, ok1 := fixedDigits(rest[1:3])
			zm, ok2 := fixedDigits(rest[4:6])
			if !ok1 || !ok2 || zh > 23 || zm > 59 {
				return 0, errTimestampSyntax
			}
			offset := int64(zh*3600 + zm*60)
			if rest[0] == '+' {
				secs -= offset
			} else {
				secs += offset
			}
		default:
			return 0, errTimestampSyntax
		}
	}
	if secs < minUnixSeconds+1 || secs > maxUnixSeconds-1 {
		return 0, errTimestampRange
	}
	return secs*1_000_000_000 + fracNs, nil
}

// fixedDigits parses b, which must be all ASCII digits.
func fixedDigits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func isLeap(year int) bool { return year%4 == 0 && (year%100 != 0 || year%400 == 0) }

func daysIn(month, year int) int {
	switch month {
	case 2:
		if isLeap(year) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the number of days since 1970-01-01 of a proleptic
// Gregorian date (Howard Hinnant's algorithm).
func daysFromCivil(year, month, day int) int64 {
	y := int64(year)
	if month <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	m := int64(month)
	var mp int64
	if m > 2 {
		mp = m - 3
	} else {
		mp = m + 9
	}
	doy := (153*mp+2)/5 + int64(day) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// formatTime renders unix nanoseconds as RFC 3339 in UTC.
func formatTime(ns int64) string {
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}

// unixNanos converts unix time given as an integer in seconds or
// milliseconds, told apart by magnitude as in text (see parseUnix), to unix
// nanoseconds.
func unixNanos(v int64) (int64, error) {
	abs := v
	if abs < 0 {
		if abs == math.MinInt64 {
			return 0, errTimestampRange
		}
		abs = -abs
	}
	unit := int64(1_000_000_000)
	if abs >= unixMillisThreshold {
		unit = 1_000_000
	}
	if abs > math.MaxInt64/unit {
		return 0, errTimestampRange
	}
	return v * unit, nil
}

// unixRegime tells which unit unixNanos reads v in: -1 milliseconds below
// -unixMillisThreshold, 0 seconds, 1 milliseconds above. Within one regime
// the conversion is monotonic.
func unixRegime(v int64) int {
	switch {
	case v <= -unixMillisThreshold:
		return -1
	case v >= unixMillisThreshold:
		return 1
	}
	return 0
}

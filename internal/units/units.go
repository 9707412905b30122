// Package units formats quantities for people: bytes, durations, counts,
// money and fractions, the same way on every surface (the workbench, the
// text report, failure messages). It is the one place where a number is
// given its unit: a surface that shows a number differently from another
// is a defect here, not there.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Bytes formats n in binary units with two decimals: "2.00 GiB",
// "212.40 MiB", "3.50 KiB", "512 bytes".
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Count formats n with thousands separators: "20,160", "-1,234,567".
func Count[T ~int | ~int64](n T) string {
	s := strconv.FormatInt(int64(n), 10)
	digits := strings.TrimPrefix(s, "-")
	var b strings.Builder
	b.Grow(len(s) + len(s)/3)
	if len(digits) < len(s) {
		b.WriteByte('-')
	}
	for i := 0; i < len(digits); i++ {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(digits[i])
	}
	return b.String()
}

// Money formats an amount of cash with two decimals and thousands
// separators: "104,120.50", "-1,234.57". An amount no float can show to the
// cent (1e15 or more, or not finite) is written in exponent form.
func Money(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) >= 1e15 {
		return strconv.FormatFloat(f, 'g', 6, 64)
	}
	cents := int64(math.Round(math.Abs(f) * 100))
	s := Count(cents/100) + fmt.Sprintf(".%02d", cents%100)
	if f < 0 && cents != 0 {
		s = "-" + s
	}
	return s
}

// Percent formats a fraction as a percentage with two decimals and
// thousands separators: 0.041205 is "4.12 %", 264.45 is "26,445.00 %".
func Percent(f float64) string { return Number(f*100) + " %" }

// Number formats a plain number (a Sharpe ratio, a profit factor) as
// Money does: two decimals and thousands separators, in exponent form
// beyond 1e15.
func Number(f float64) string { return Money(f) }

// Duration formats d at the precision that matters at its scale: "400µs",
// "2.35ms", "41ms", "1.23s", "4m 05s", "3h 04m", "2d 03h". Zero is "0s".
func Duration(d time.Duration) string {
	if d < 0 {
		return "-" + Duration(-d)
	}
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case d == 0:
		return "0s"
	case d < time.Millisecond:
		return strconv.FormatFloat(ms*1000, 'f', 0, 64) + "µs"
	case d < 10*time.Millisecond:
		return strconv.FormatFloat(ms, 'f', 2, 64) + "ms"
	case d < time.Second:
		return strconv.FormatFloat(ms, 'f', 0, 64) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(ms/1000, 'f', 2, 64) + "s"
	}
	d = d.Round(time.Second)
	switch {
	case d < time.Hour:
		return fmt.Sprintf("%dm %02ds", d/time.Minute, d%time.Minute/time.Second)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh %02dm", d/time.Hour, d%time.Hour/time.Minute)
	}
	return fmt.Sprintf("%dd %02dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
}

// Millis is Duration of a number of milliseconds, as hook statistics carry
// them.
func Millis(ms float64) string {
	return Duration(time.Duration(ms * float64(time.Millisecond)))
}

// Clock formats an elapsed time or an ETA as a clock reads it: "1:12",
// "1:02:03".
func Clock(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	h, m, s := int(d/time.Hour), int(d/time.Minute)%60, int(d/time.Second)%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}

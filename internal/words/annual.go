package words

import (
	"encoding/json"
	"strings"
	"time"

	"stratbench/contract"
	"stratbench/internal/units"
)

// ShortSpanMark marks an annualised figure that comes from a span shorter
// than contract.MinAnnualSpan: too short for it to mean much.
const ShortSpanMark = "~"

// minAnnualSpanText is contract.MinAnnualSpan in the words the notes use.
var minAnnualSpanText = MinAnnualSpan()

// MinAnnualSpan is contract.MinAnnualSpan in words: "90 days".
func MinAnnualSpan() string {
	return units.Count(int64(contract.MinAnnualSpan/(24*time.Hour))) + " days"
}

// AnnualMark is ShortSpanMark for an annualised metric whose span is
// short, "" otherwise.
func AnnualMark(m *contract.Metrics, mt contract.Metric) string {
	if !mt.Annualised {
		return ""
	}
	if _, short, ok := m.AnnualSpan(); ok && short {
		return ShortSpanMark
	}
	return ""
}

// AnnualNote says where a job's annualised figures come from: "sharpe,
// cagr, calmar, sortino and volatility extrapolate 6d 23h of data to a
// year", and, when that is short, with the mark first and "under 90 days:
// too short for them to mean much"; "" when the report does not say
// (older versions).
func AnnualNote(m *contract.Metrics) (note string, short bool) {
	span, short, ok := m.AnnualSpan()
	if !ok {
		return "", false
	}
	keys := contract.AnnualisedKeys()
	note = strings.Join(keys[:len(keys)-1], ", ") + " and " + keys[len(keys)-1] + " extrapolate " + SpanText(span) + " of data to a year"
	if short {
		note = ShortSpanMark + " " + note + ": under " + minAnnualSpanText + ", too short for them to mean much"
	}
	return note, short
}

// AnnualFigure is an annualised figure as a summary line says it, with
// its span: "sharpe 19.76 (over 6d 23h: too short to annualise)",
// "sharpe 1.23 (over 1y 2w)"; the figure alone when the span is unknown.
func AnnualFigure(name, value string, m *contract.Metrics) string {
	span, short, ok := m.AnnualSpan()
	switch {
	case !ok:
		return name + " " + value
	case short:
		return name + " " + value + " (over " + SpanText(span) + ": too short to annualise)"
	}
	return name + " " + value + " (over " + SpanText(span) + ")"
}

// IsAnnualised reports whether the metric key is an annualised one.
func IsAnnualised(key string) bool {
	for _, k := range contract.AnnualisedKeys() {
		if k == key {
			return true
		}
	}
	return false
}

// RunAnnualSpan reads the span of a sweep run's metrics (its raw JSON):
// the text of the span, and whether it is short; ok false when they do not
// say.
func RunAnnualSpan(metrics json.RawMessage) (span string, short, ok bool) {
	var m contract.Metrics
	if len(metrics) == 0 || json.Unmarshal(metrics, &m) != nil {
		return "", false, false
	}
	d, short, ok := m.AnnualSpan()
	if !ok {
		return "", false, false
	}
	return SpanText(d), short, true
}

// SpanText writes the span of a curve: as a duration under ten days
// ("6d 23h"), in whole days from there ("399 days").
func SpanText(d time.Duration) string {
	if d < 10*24*time.Hour {
		return units.Duration(d)
	}
	return units.Count(int64(d/(24*time.Hour))) + " days"
}

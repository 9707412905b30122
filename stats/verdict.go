package stats

import (
	"math"
	"strconv"
)

// Verdict is the plain reading of a sweep's PBO and deflated Sharpe ratio
// (docs/robustness.md explains it to users).
type Verdict uint8

// The verdicts.
const (
	// VerdictNone: a figure is missing (NaN), so there is nothing to read.
	VerdictNone Verdict = iota
	// VerdictLikelyReal: PBO ≤ PBOReal and DSR ≥ DSRReal.
	VerdictLikelyReal
	// VerdictInconclusive: neither of the others.
	VerdictInconclusive
	// VerdictLikelyOverfit: PBO > PBOOverfit or DSR < DSROverfit.
	VerdictLikelyOverfit
)

// The verdict's thresholds.
const (
	// PBOOverfit: above it, the run chosen in sample does worse than the
	// median out of sample in most splits.
	PBOOverfit = 0.5
	// PBOReal: at most this share of the splits overfit.
	PBOReal = 0.1
	// DSROverfit: below it, the best run's Sharpe ratio is below what the
	// best of as many runs without skill is expected to show.
	DSROverfit = 0.5
	// DSRReal: the best run beats that expectation with 95% confidence.
	DSRReal = 0.95
)

// Judge reads PBO and the DSR of the best run: likely overfit when either
// says so (PBO > 0.5 or DSR < 0.5), likely real when both say so
// (PBO ≤ 0.1 and DSR ≥ 0.95), inconclusive otherwise, and VerdictNone
// when either is NaN.
func Judge(pbo, dsr float64) Verdict {
	switch {
	case math.IsNaN(pbo) || math.IsNaN(dsr):
		return VerdictNone
	case pbo > PBOOverfit || dsr < DSROverfit:
		return VerdictLikelyOverfit
	case pbo <= PBOReal && dsr >= DSRReal:
		return VerdictLikelyReal
	}
	return VerdictInconclusive
}

var verdictNames = [...]string{
	VerdictNone: "not enough data", VerdictLikelyReal: "likely real",
	VerdictInconclusive: "inconclusive", VerdictLikelyOverfit: "likely overfit",
}

// String is the verdict in words: "likely real", "inconclusive", "likely
// overfit" or "not enough data".
func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "Verdict(" + strconv.Itoa(int(v)) + ")"
}

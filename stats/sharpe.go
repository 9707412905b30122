package stats

import "math"

// EulerGamma is the Euler–Mascheroni constant γ.
const EulerGamma = 0.57721566490153286060651209008240243104215933593992

// PSR is the probabilistic Sharpe ratio (Bailey & López de Prado, 2012):
// the probability that the true Sharpe ratio exceeds the benchmark srStar,
// given an observed per-period Sharpe ratio sr over t returns whose
// skewness is skew (γ3) and kurtosis kurt (γ4, not excess):
//
//	PSR(SR*) = Φ((SR − SR*)·√(T − 1) / √(1 − γ3·SR + (γ4 − 1)/4·SR²))
//
// t < 2 is a TooFew error and a NaN or infinite argument a NotFinite error
// (all with a NaN result). When the variance term under the root is not
// positive, which no sample's own moments allow (γ4 ≥ 1 + γ3² makes it a
// square at worst), the error is Undefined.
func PSR(sr, srStar float64, t int, skew, kurt float64) (float64, error) {
	const op = "PSR"
	if t < 2 {
		return math.NaN(), errorf(op, "t", TooFew, -1, "%d returns, need at least 2", t)
	}
	for _, a := range [...]struct {
		name string
		v    float64
	}{{"sr", sr}, {"srStar", srStar}, {"skew", skew}, {"kurt", kurt}} {
		if !finite(a.v) {
			return math.NaN(), errorf(op, a.name, NotFinite, -1, "%v", a.v)
		}
	}
	d := 1 - skew*sr + (kurt-1)/4*sr*sr
	if !(d > 0) || !finite(d) {
		return math.NaN(), errorf(op, "", Undefined, -1,
			"1 − γ3·SR + (γ4 − 1)/4·SR² = %v with SR %v, γ3 %v, γ4 %v", d, sr, skew, kurt)
	}
	return NormCDF((sr - srStar) * math.Sqrt(float64(t-1)) / math.Sqrt(d)), nil
}

// MinTRL is the minimum track record length (Bailey & López de Prado,
// 2012): the number of returns, with the given Sharpe ratio, skewness and
// kurtosis, after which PSR(srStar) reaches prob:
//
//	MinTRL = 1 + (1 − γ3·SR + (γ4 − 1)/4·SR²)·(Φ⁻¹(prob)/(SR − SR*))²
//
// It is +Inf when sr ≤ srStar (no length is enough). prob must be in
// (0, 1); the errors are PSR's otherwise.
func MinTRL(sr, srStar, skew, kurt, prob float64) (float64, error) {
	const op = "MinTRL"
	if !(prob > 0 && prob < 1) {
		return math.NaN(), errorf(op, "prob", BadArgument, -1, "%v is not in (0, 1)", prob)
	}
	if _, err := PSR(sr, srStar, 2, skew, kurt); err != nil {
		return math.NaN(), withOp(err, op)
	}
	if sr <= srStar {
		return math.Inf(1), nil
	}
	d := 1 - skew*sr + (kurt-1)/4*sr*sr
	z := NormQuantile(prob) / (sr - srStar)
	return 1 + d*z*z, nil
}

// ExpectedMaxSharpe is the Sharpe ratio the best of n independent trials is
// expected to show when none has any skill (true Sharpe ratio 0) and their
// estimated Sharpe ratios have variance v (Bailey & López de Prado, 2014,
// after the false strategy theorem of Bailey, Borwein, López de Prado &
// Zhu, 2014):
//
//	SR* = √V·((1 − γ)·Φ⁻¹(1 − 1/N) + γ·Φ⁻¹(1 − 1/(N·e)))
//
// γ the Euler–Mascheroni constant. n < 2 is a TooFew error (Φ⁻¹(0) is
// −Inf), a negative or non-finite v a BadArgument or NotFinite error.
func ExpectedMaxSharpe(n int, v float64) (float64, error) {
	const op = "ExpectedMaxSharpe"
	if n < 2 {
		return math.NaN(), errorf(op, "n", TooFew, -1, "%d trials, need at least 2", n)
	}
	if !finite(v) {
		return math.NaN(), errorf(op, "v", NotFinite, -1, "%v", v)
	}
	if v < 0 {
		return math.NaN(), errorf(op, "v", BadArgument, -1, "negative variance %v", v)
	}
	fn := float64(n)
	z := (1-EulerGamma)*upperQuantile(1/fn) + EulerGamma*upperQuantile(1/(fn*math.E))
	return math.Sqrt(v) * z, nil
}

// Deflated is the deflated Sharpe ratio of the best of a set of trials.
type Deflated struct {
	// Trials is N, the number of trials (a sweep's passed runs).
	Trials int
	// Variance is V, the sample variance (divisor N − 1) of the trials'
	// per-period Sharpe ratios.
	Variance float64
	// Threshold is SR*, the expected maximum Sharpe ratio of N trials
	// without skill (ExpectedMaxSharpe(N, V)).
	Threshold float64
	// Sharpe is the best run's per-period Sharpe ratio.
	Sharpe float64
	// DSR is the best run's PSR against Threshold: the probability that
	// its true Sharpe ratio is above what the best of N unskilled trials
	// would show. In [0, 1].
	DSR float64
}

// DeflatedSharpe is the deflated Sharpe ratio (Bailey & López de Prado,
// 2014) of the run best among trials: best's PSR with SR* =
// ExpectedMaxSharpe(N, V), N = len(trials) and V the sample variance
// (divisor N − 1) of the trials' per-period Sharpe ratios, which should
// include best's own. The best run is whichever the caller ranks first
// (a sweep's objective need not be the Sharpe ratio).
//
// Fewer than two trials are a TooFew error, a NaN or infinite trial Sharpe
// a NotFinite error (give a run that never trades Sharpe 0, as
// Moments.Sharpe does), and best's errors are Moments.PSR's.
func DeflatedSharpe(best Moments, trials []float64) (Deflated, error) {
	const op = "DeflatedSharpe"
	if len(trials) < 2 {
		return Deflated{}, errorf(op, "trials", TooFew, -1, "%d trials, need at least 2", len(trials))
	}
	if err := checkFinite(op, "trials", trials); err != nil {
		return Deflated{}, err
	}
	d := Deflated{Trials: len(trials), Variance: sumsOf(trials, false).variance(), Sharpe: best.Sharpe()}
	sr0, err := ExpectedMaxSharpe(d.Trials, d.Variance)
	if err != nil {
		return Deflated{}, err
	}
	d.Threshold = sr0
	if d.DSR, err = best.PSR(sr0); err != nil {
		return Deflated{}, withOp(err, op)
	}
	return d, nil
}

// Package stats holds the statistics that say how far to trust a backtest
// picked out of many: the probabilistic and deflated Sharpe ratios, the
// probability of backtest overfitting by combinatorially symmetric
// cross-validation, and Monte Carlo resampling of one job. They are pure
// functions over slices: no I/O, no goroutines, nothing kept between
// calls; the same input gives the same output, bit for bit. What the
// numbers mean to a user is in docs/robustness.md.
//
// # Returns
//
// Every statistic works on per-period simple returns, the periods being
// the data's bar times (the union of the symbols' times), so that the
// runs of a sweep line up row by row. Align samples a run's equity at the
// bar times, carrying the last value forward; Returns turns it into
// r_t = (e_t − e_{t−1})/|e_{t−1}|, the rule of the job report's metrics
// (0 after an equity of exactly 0). Sharpe ratios are per period, never
// annualised, in every formula below.
//
// # Moments
//
// ComputeMoments gives T, the mean, the sample standard deviation (divisor
// T − 1), the skewness γ3 = m3/m2^(3/2) and the kurtosis γ4 = m4/m2² (not
// excess: 3 for a normal), with m_k = (1/T)·Σ(r − mean)^k: the biased
// moment estimators, as in the papers' reference code and scipy's defaults
// (scipy.stats.skew, scipy.stats.kurtosis with fisher=False). The Sharpe
// ratio is mean/std. Returns that do not vary have Sharpe ratio 0 when
// they are all 0 (a run that never trades) and ±Inf otherwise, here and
// in CSCV.
//
// # Probabilistic Sharpe ratio
//
// Bailey, D. H. and López de Prado, M. (2012), "The Sharpe Ratio Efficient
// Frontier", Journal of Risk 15(2), 3–44 (SSRN 1821643). The probability
// that the true Sharpe ratio exceeds a benchmark SR*, given the observed
// SR over T returns:
//
//	PSR(SR*) = Φ((SR − SR*)·√(T − 1) / √(1 − γ3·SR + (γ4 − 1)/4·SR²))
//
// A run's own PSR takes SR* = 0. MinTRL inverts it for T: the track
// record needed for PSR to reach a confidence.
//
// # Deflated Sharpe ratio
//
// Bailey, D. H. and López de Prado, M. (2014), "The Deflated Sharpe Ratio:
// Correcting for Selection Bias, Backtest Overfitting and Non-Normality",
// Journal of Portfolio Management 40(5), 94–107 (SSRN 2460551); the
// expected maximum comes from Bailey, Borwein, López de Prado and Zhu
// (2014), "Pseudo-Mathematics and Financial Charlatanism", Notices of the
// AMS 61(5), 458–471. The best of N trials is judged against the Sharpe
// ratio the best of N trials without skill would show:
//
//	SR* = √V·((1 − γ)·Φ⁻¹(1 − 1/N) + γ·Φ⁻¹(1 − 1/(N·e)))
//	DSR = PSR(SR*) of the best run
//
// N the number of trials, V the sample variance (divisor N − 1) of their
// Sharpe ratios, γ ≈ 0.5772 the Euler–Mascheroni constant, e Euler's
// number.
//
// # Probability of backtest overfitting
//
// Bailey, D. H., Borwein, J., López de Prado, M. and Zhu, Q. J. (2017),
// "The Probability of Backtest Overfitting", Journal of Computational
// Finance 20(4), 39–69 (SSRN 2326253; the working paper is of 2015). The T
// rows of the T × N matrix of returns are cut into S equal blocks of
// consecutive rows (S even; CSCVBlocks: 16, fewer when a block would hold
// fewer than 16 rows; the first T mod S rows are left out). Each of the
// C(S, S/2) choices of S/2 blocks is an in-sample set, the rest its
// out-of-sample set: the run n* with the best in-sample Sharpe ratio is
// ranked among the N out-of-sample Sharpe ratios (1 the worst, mid-ranks
// for ties), ω = rank/(N + 1) and λ = ln(ω/(1 − ω)). PBO is the share of
// choices with λ ≤ 0, that is with n* at or below the out-of-sample
// median; the probability of loss is the share in which n* loses money out
// of sample. CSCV keeps each run's per-block sums and sums of squares
// (compensated), from which each half's mean and variance follow exactly,
// so memory is O(S·N) however long the runs and time O(C(S, S/2)·S·N).
//
// # Monte Carlo
//
// MonteCarlo resamples one job's returns: MethodShuffle reshuffles the
// order of its closed trades, MethodResample draws as many trades with
// replacement (Efron's bootstrap), MethodBlocks resamples the per-period
// returns by the stationary bootstrap (Politis, D. N. and Romano, J. P.
// (1994), "The Stationary Bootstrap", Journal of the American Statistical
// Association 89(428), 1303–1313): blocks of consecutive returns, wrapping
// around, whose lengths are geometric with mean MeanBlock, T^(1/3) by
// default (the order of the optimal block length of Politis and White
// (2004), "Automatic Block-Length Selection for the Dependent Bootstrap",
// Econometric Reviews 23(1), 53–70). Each path compounds from 1; the
// result holds the 5th, 25th, 50th, 75th and 95th percentiles of the total
// return, the maximum drawdown and the Sharpe ratio, the probability of a
// loss, and a fan of the paths' percentiles over time. The generator is
// math/rand/v2's PCG seeded with the seed, used through its 64-bit outputs
// only, so a seed gives the same numbers everywhere.
//
// # Percentiles
//
// Percentile follows numpy's default ("linear", Hyndman and Fan's type 7):
// h = (n − 1)·p/100 over the sorted values, interpolated between the
// values at ⌊h⌋ and ⌊h⌋ + 1, computed as numpy computes it so the numbers
// agree to the bit.
//
// # Accuracy
//
// NormCDF (Φ) and NormQuantile (Φ⁻¹) are within a few units in the last
// place, tails included (tested against 60-digit values). Moments sum in
// two passes over values scaled (by powers of two) so that no finite input
// overflows. The tests hold PSR, DSR and every CSCV figure to numpy and
// scipy to 1e-9 (the largest difference seen is 5e-14), and the papers'
// worked examples to the digits they print.
//
// # Errors
//
// Every error is a *Error whose Kind says what was wrong (TooFew,
// NotFinite, ZeroVariance, Undefined, BadArgument), whose Arg names the
// argument and whose Index the element; errors.Is(err, ErrTooFew) and the
// like match the kind. A function that fails returns NaN or a zero value
// beside its error, never a number to be mistaken for a result.
package stats

// Package metrics holds the figures of a run that the report's metrics
// object does not carry, computed from its records: pure functions over an
// equity curve (one point per distinct timestamp, as the report's own
// metrics use) and over the closed trades. The HTML reports use it, and a
// text report or status can call the same code.
//
// Conventions follow docs/fills-and-metrics.md: a return is
// (eᵢ − eᵢ₋₁)/|eᵢ₋₁| (0 when eᵢ₋₁ is 0), the risk-free rate is 0, standard
// deviations are sample ones (n − 1), and annualised figures multiply by
// the periods per year the caller passes (the report's periods_per_year).
// Where quantstats computes the same figure, the formula is quantstats'
// (a test holds them equal to 1e-9). A figure that is undefined (too few
// returns, no variance, no losing trade) is NaN: a printer shows it as
// such, never as 0.
package metrics

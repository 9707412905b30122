package job

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"time"
)

// MonteCarloFileName is the file in a job's folder where `stratbench
// montecarlo` keeps its latest result, which the job's report draws (the
// fan of equity paths). It lies beside job.json, not in artifacts/.
const MonteCarloFileName = "montecarlo.json"

// maxMonteCarloFile bounds what is read of a montecarlo.json: a result is
// a few KiB to some hundreds (its fan has at most 1,001 points of 5
// series).
const maxMonteCarloFile = 4 << 20

// MonteCarlo is the result of `stratbench montecarlo JOB` as it prints it
// (--output json) and keeps it (MonteCarloFileName): docs/robustness.md
// says what each figure means.
type MonteCarlo struct {
	// JobID is the job resampled.
	JobID string `json:"job_id"`
	// Method is "trades", "bootstrap" or "blocks"; Of says what was drawn
	// ("trades" or "bars"), Steps how many of them each path has.
	Method string `json:"method"`
	Of     string `json:"of"`
	Steps  int    `json:"steps"`
	// Runs is the number of paths, Seed the generator's seed, MeanBlock
	// the mean block length (blocks only, else 0).
	Runs      int     `json:"runs"`
	Seed      uint64  `json:"seed"`
	MeanBlock float64 `json:"mean_block"`
	// StartEquity is the job's start equity: every path starts there.
	StartEquity float64 `json:"start_equity"`
	// Observed are the figures of the job's own returns, in their order.
	Observed MonteCarloPath `json:"observed"`
	// The 5th to 95th percentiles over the paths, and the share of paths
	// that end below their start.
	TotalReturn     Percentiles `json:"total_return"`
	MaxDrawdown     Percentiles `json:"max_drawdown"`
	Sharpe          Percentiles `json:"sharpe"`
	LossProbability float64     `json:"loss_probability"`
	// Fan is the paths' percentiles of equity (as a multiple of the start)
	// at evenly spread steps.
	Fan MonteCarloFan `json:"fan"`
	// CreatedAt is when it was computed.
	CreatedAt time.Time `json:"created_at"`
}

// MonteCarloPath are the figures of one path.
type MonteCarloPath struct {
	TotalReturn Figure `json:"total_return"`
	MaxDrawdown Figure `json:"max_drawdown"`
	Sharpe      Figure `json:"sharpe"`
}

// Percentiles are the 5th, 25th, 50th, 75th and 95th percentiles.
type Percentiles struct {
	P5  Figure `json:"p5"`
	P25 Figure `json:"p25"`
	P50 Figure `json:"p50"`
	P75 Figure `json:"p75"`
	P95 Figure `json:"p95"`
}

// MonteCarloFan are the percentiles of the paths' equity at Steps.
type MonteCarloFan struct {
	Steps []int    `json:"steps"`
	P5    []Figure `json:"p5"`
	P25   []Figure `json:"p25"`
	P50   []Figure `json:"p50"`
	P75   []Figure `json:"p75"`
	P95   []Figure `json:"p95"`
}

// Figure is a number that may not be finite (a Sharpe ratio of returns
// that do not vary is ±Inf): JSON has no such numbers, so it is written as
// null, and null reads back as NaN.
type Figure float64

// MarshalJSON writes the number, or null when it is not finite.
func (f Figure) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads a number, or null as NaN.
func (f *Figure) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = Figure(math.NaN())
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = Figure(v)
	return nil
}

// LoadMonteCarlo reads job id's montecarlo.json: nil, nil when there is
// none. The file is the home's, so hostile: read without following a
// link, bounded, and refused (an error naming it) unless its fan's series
// all have one value per step.
func (s *Store) LoadMonteCarlo(id string) (*MonteCarlo, error) {
	dir, err := s.openJob(id)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	b, err := dir.ReadFile(MonteCarloFileName, maxMonteCarloFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir.Join(MonteCarloFileName), err)
	}
	var mc MonteCarlo
	if err := json.Unmarshal(b, &mc); err != nil {
		return nil, fmt.Errorf("%s: %w", dir.Join(MonteCarloFileName), err)
	}
	f := mc.Fan
	n := len(f.Steps)
	if len(f.P5) != n || len(f.P25) != n || len(f.P50) != n || len(f.P75) != n || len(f.P95) != n ||
		math.IsNaN(mc.StartEquity) || math.IsInf(mc.StartEquity, 0) {
		return nil, fmt.Errorf("%s: not a Monte Carlo result of stratbench's", dir.Join(MonteCarloFileName))
	}
	return &mc, nil
}

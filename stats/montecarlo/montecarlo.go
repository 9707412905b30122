// Package montecarlo is the Monte Carlo of one job (docs/robustness.md,
// "Monte Carlo of one job"): it reads what the method resamples from the
// job store's records (job.Store.TradePnLs, EquityPoints), hands it to
// stats.MonteCarlo, and keeps the result as montecarlo.json beside the
// job's job.json, where the job's HTML report finds it for the fan.
// stats stays pure; this is its reader of the home. It names no
// command-line flag: a refusal of stats is a *stats.Error, bad input of
// the job an *InputError.
package montecarlo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"stratbench/internal/atomicfile"
	"stratbench/job"
	"stratbench/stats"
)

// InputError is a job that cannot be resampled: its records cut or
// unreadable, its returns not returns. Bad input.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Of says what method resamples: "trades" (the closed trades' returns) or
// "bars" (the per-bar returns of the equity curve).
func Of(method stats.Method) string {
	if method == stats.MethodBlocks {
		return "bars"
	}
	return "trades"
}

// Run resamples the returns of job id of store, whose report is rep, with
// o: its trades' from the report's starting equity, or its bars'. A ctx
// that ends stops it with ctx's error.
func Run(ctx context.Context, store *job.Store, id string, rep *job.Report, o stats.MonteCarloOptions) (*job.MonteCarlo, error) {
	start := rep.Market.Cash
	if rep.Metrics != nil && rep.Metrics.StartEquity != 0 {
		start = rep.Metrics.StartEquity
	}
	returns, err := jobReturns(ctx, store, id, o.Method, start)
	if err != nil {
		return nil, err
	}
	res, err := stats.MonteCarlo(ctx, returns, o)
	if err != nil {
		return nil, err
	}
	return result(id, Of(o.Method), start, res), nil
}

// Keep writes mc to montecarlo.json in its job's folder, durably, and
// returns the path and the bytes written.
func Keep(store *job.Store, mc *job.MonteCarlo) (string, []byte, error) {
	b, err := json.MarshalIndent(mc, "", "  ")
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(store.JobDir(mc.JobID), job.MonteCarloFileName)
	if err := atomicfile.WriteFile(path, append(b, '\n'), 0o644, atomicfile.Durable); err != nil {
		return "", nil, fmt.Errorf("keep the result: %w", err)
	}
	return path, b, nil
}

// jobReturns reads what the method resamples: the closed trades' returns
// (each trade's net P&L over the realised equity before it closed, start
// plus the P&L of the trades closed before it, so that compounding them
// gives the realised equity), or the per-bar returns of the job's equity
// curve (its equity after the last event of each time).
func jobReturns(ctx context.Context, store *job.Store, id string, method stats.Method, start float64) ([]float64, error) {
	equity := []float64{start}
	var err error
	of := Of(method)
	if method == stats.MethodBlocks {
		last := int64(math.MinInt64)
		equity = equity[:0]
		err = store.EquityPoints(ctx, id, func(t int64, v float64) error {
			if t == last && len(equity) > 0 {
				equity[len(equity)-1] = v
			} else {
				equity = append(equity, v)
			}
			last = t
			return nil
		})
	} else {
		err = store.TradePnLs(ctx, id, func(_ int64, pnl float64) error {
			equity = append(equity, equity[len(equity)-1]+pnl)
			return nil
		})
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, job.ErrRecordCut) {
			return nil, &InputError{fmt.Errorf("job %s: %w: resampling it would leave them out", id, err)}
		}
		return nil, &InputError{fmt.Errorf("job %s: %w", id, err)}
	}
	r, err := stats.Returns(equity)
	if err != nil {
		return nil, &InputError{fmt.Errorf("job %s: its %s' returns: %w", id, of, err)}
	}
	return r, nil
}

// result is the result as it is printed and kept.
func result(id, of string, start float64, r stats.MonteCarloResult) *job.MonteCarlo {
	pc := func(p stats.Percentiles) job.Percentiles {
		return job.Percentiles{P5: job.Figure(p.P5), P25: job.Figure(p.P25), P50: job.Figure(p.P50),
			P75: job.Figure(p.P75), P95: job.Figure(p.P95)}
	}
	figs := func(xs []float64) []job.Figure {
		out := make([]job.Figure, len(xs))
		for i, x := range xs {
			out[i] = job.Figure(x)
		}
		return out
	}
	return &job.MonteCarlo{
		JobID: id, Method: r.Method.String(), Of: of, Steps: r.Steps, Runs: r.Runs, Seed: r.Seed, MeanBlock: r.MeanBlock,
		StartEquity: start,
		Observed: job.MonteCarloPath{TotalReturn: job.Figure(r.Observed.TotalReturn), MaxDrawdown: job.Figure(r.Observed.MaxDrawdown),
			Sharpe: job.Figure(r.Observed.Sharpe)},
		TotalReturn: pc(r.TotalReturn), MaxDrawdown: pc(r.MaxDrawdown), Sharpe: pc(r.Sharpe), LossProbability: r.LossProbability,
		Fan: job.MonteCarloFan{Steps: r.Fan.Steps, P5: figs(r.Fan.P5), P25: figs(r.Fan.P25), P50: figs(r.Fan.P50),
			P75: figs(r.Fan.P75), P95: figs(r.Fan.P95)},
		CreatedAt: time.Now().UTC(),
	}
}

package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"stratbench/internal/atomicfile"
	"stratbench/internal/units"
	"stratbench/job"
	"stratbench/present"
	"stratbench/stats"
)

// MonteCarloOptions are the options of `stratbench montecarlo`.
type MonteCarloOptions struct {
	ID      string // the job, in any short form
	Runs    int    // --runs
	Seed    uint64 // --seed
	Method  string // --method trades|bootstrap|blocks
	Output  string // --output text|json
	RunsSet bool   // --runs was given
	Streams
}

// MonteCarlo resamples one job's returns (docs/robustness.md, "Monte Carlo
// of one job"): it reads the job's records, hands them to stats.MonteCarlo,
// prints the result and keeps it in the job's folder (montecarlo.json),
// where the job's report finds it. Bad flags and a job without enough
// returns are exit 2, naming the flag or the job.
func MonteCarlo(ctx context.Context, o MonteCarloOptions) error {
	if err := checkOutput(o.Output, "text", "json"); err != nil {
		return err
	}
	method, err := stats.ParseMethod(o.Method)
	if err != nil {
		return usage(fmt.Errorf("--method %q: want trades, bootstrap or blocks", o.Method))
	}
	if o.RunsSet && (o.Runs < 1 || o.Runs > stats.MaxRuns) {
		return usage(fmt.Errorf("--runs %d: want 1 to %s", o.Runs, units.Count(stats.MaxRuns)))
	}
	store, err := openStore(o.Stderr)
	if err != nil {
		return err
	}
	id, err := storeJobID(store, o.ID)
	if err != nil {
		return err
	}
	rep, err := store.Load(id)
	if err != nil {
		return usage(err)
	}
	start := rep.Market.Cash
	if rep.Metrics != nil && rep.Metrics.StartEquity != 0 {
		start = rep.Metrics.StartEquity
	}
	signals := listenSignals()
	defer signals.Close()
	var mc *job.MonteCarlo
	err = signals.Setup(ctx, func(ctx context.Context) error {
		returns, of, err := jobReturns(ctx, store, id, method, start)
		if err != nil {
			return err
		}
		res, err := stats.MonteCarlo(ctx, returns, stats.MonteCarloOptions{Method: method, Runs: o.Runs, Seed: o.Seed})
		if err != nil {
			return monteCarloError(err, id, of, method)
		}
		mc = monteCarloFile(id, of, start, res)
		return nil
	})
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(mc, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(store.JobDir(id), job.MonteCarloFileName)
	if err := atomicfile.WriteFile(path, append(b, '\n'), 0o644, atomicfile.Durable); err != nil {
		return fmt.Errorf("keep the result: %w", err)
	}
	if o.Output == "json" {
		_, err = fmt.Fprintf(o.Stdout, "%s\n", b)
	} else {
		_, err = fmt.Fprint(o.Stdout, present.MonteCarloText(mc, rep, path))
	}
	return err
}

// jobReturns reads what the method resamples: the closed trades' returns
// (each trade's net P&L over the realised equity before it closed, start
// plus the P&L of the trades closed before it, so that compounding them
// gives the realised equity), or the per-bar returns of the job's equity
// curve (its equity after the last event of each time). of says which:
// "trades" or "bars".
func jobReturns(ctx context.Context, store *job.Store, id string, method stats.Method, start float64) ([]float64, string, error) {
	equity := []float64{start}
	var err error
	of := "trades"
	if method == stats.MethodBlocks {
		of = "bars"
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
			return nil, of, ctx.Err()
		}
		if errors.Is(err, job.ErrRecordCut) {
			return nil, of, usage(fmt.Errorf("job %s: %w: resampling it would leave them out", id, err))
		}
		return nil, of, usage(fmt.Errorf("job %s: %w", id, err))
	}
	r, err := stats.Returns(equity)
	if err != nil {
		return nil, of, usage(fmt.Errorf("job %s: its %s' returns: %w", id, of, err))
	}
	return r, of, nil
}

// monteCarloError maps stats' refusals: an option at fault to its flag, too
// few returns to what the job lacks.
func monteCarloError(err error, id, of string, method stats.Method) error {
	var se *stats.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Arg {
	case "runs":
		return usage(fmt.Errorf("--runs: %w", err))
	case "method":
		return usage(fmt.Errorf("--method: %w", err))
	case "returns":
		if se.Kind == stats.TooFew {
			hint := ""
			if method != stats.MethodBlocks {
				hint = ": --method blocks resamples its bars instead"
			}
			return usage(fmt.Errorf("job %s has too few %s to resample (%s)%s", id, of, se.Detail, hint))
		}
	}
	return usage(fmt.Errorf("job %s: %w", id, err))
}

// monteCarloFile is the result as it is printed and kept.
func monteCarloFile(id, of string, start float64, r stats.MonteCarloResult) *job.MonteCarlo {
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

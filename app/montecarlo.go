package app

import (
	"context"
	"errors"
	"fmt"

	"stratbench/internal/shortid"
	"stratbench/internal/units"
	"stratbench/job"
	"stratbench/present"
	"stratbench/stats"
	"stratbench/stats/montecarlo"
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
	id, err := resolved(shortid.InJobs(store, o.ID))
	if err != nil {
		return err
	}
	rep, err := store.Load(id)
	if err != nil {
		return usage(err)
	}
	signals := listenSignals()
	defer signals.Close()
	var mc *job.MonteCarlo
	err = signals.Setup(ctx, func(ctx context.Context) error {
		var err error
		mc, err = montecarlo.Run(ctx, store, id, rep, stats.MonteCarloOptions{Method: method, Runs: o.Runs, Seed: o.Seed})
		var ie *montecarlo.InputError
		if errors.As(err, &ie) {
			return usage(err)
		}
		if err != nil && ctx.Err() == nil {
			return monteCarloError(err, id, montecarlo.Of(method), method)
		}
		return err
	})
	if err != nil {
		return err
	}
	path, b, err := montecarlo.Keep(store, mc)
	if err != nil {
		return err
	}
	if o.Output == "json" {
		_, err = fmt.Fprintf(o.Stdout, "%s\n", b)
	} else {
		_, err = fmt.Fprint(o.Stdout, present.MonteCarloText(mc, rep, path))
	}
	return err
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

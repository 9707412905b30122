package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"stratbench/check"
	"stratbench/data"
	"stratbench/engine"
	"stratbench/internal/termtext"
	"stratbench/internal/units"
	"stratbench/job"
)

// Check runs `stratbench check STRATEGY [run flags]` (docs/robustness.md,
// "Bias checks"): the check package replays the run and looks for
// look-ahead, a warm-up longer than the MANIFEST's history, and runs that
// are not deterministic. It returns nil when it found nothing, exit 1 when
// it found something (or the run itself fails), exit 2 for bad usage.
func Check(ctx context.Context, o RunOptions) error {
	if err := checkOutput(o.Output, "text", "json"); err != nil {
		return err
	}
	if err := checkStrategyArg(o.Strategy, nil); err != nil {
		return usage(err)
	}
	started := time.Now()
	s, signals, err := openSession(ctx, o, o.Strategy)
	if err != nil {
		return err
	}
	defer signals.close()
	defer s.close()
	var files []string
	for _, p := range o.Data {
		abs, err := filepath.Abs(p)
		if err != nil {
			return usage(err)
		}
		files = append(files, abs)
	}
	// The replays are jobs of their own, in a home of their own that goes
	// when the check ends: they do not fill the user's list of jobs.
	home, err := os.MkdirTemp("", "stratbench-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	slots := runtime.NumCPU()
	cfg := check.Config{
		Job: engine.Config{Strategy: s.strategy, Python: s.python, Params: o.Params, Home: home,
			CacheDir: engine.DefaultCacheDir(s.store.Home()), Limits: job.DefaultLimits(), Sandbox: s.sandbox,
			Version: Version, Host: s.host},
		Market: o.market(), Window: s.window, Files: files, Timeframe: o.Timeframe, Slots: slots, TempDir: home,
		Data: func(ctx context.Context, w data.Window) (*data.Set, error) {
			if len(o.Data) == 0 {
				return data.Sample(w)
			}
			return data.Open(ctx, o.Data, data.Options{Window: w, Budget: s.budget, Timeframe: o.Timeframe})
		},
	}
	var rep *check.Report
	err = signals.setup(ctx, func(ctx context.Context) error {
		var err error
		rep, err = check.Run(ctx, cfg)
		return err
	})
	var runFailed *check.FailedError
	switch {
	case errors.As(err, &runFailed):
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("check %s: %w (stratbench --ci %s says more)", o.Strategy, err, o.Strategy)}
	case err != nil:
		var de *data.Error
		if errors.As(err, &de) {
			return dataError(err)
		}
		return asExit(err)
	}
	took := time.Since(started)
	if o.Output == "json" {
		b, err := json.MarshalIndent(struct {
			Strategy   string `json:"strategy"`
			Data       string `json:"data"`
			Window     string `json:"window"`
			DurationMS int64  `json:"duration_ms"`
			*check.Report
		}{s.strategy, dataSource(o.Data), s.window.String(), took.Milliseconds(), rep}, "", "  ")
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(o.Stdout, "%s\n", b); err != nil {
			return err
		}
	} else if _, err := fmt.Fprint(o.Stdout, termtext.Text(checkText(o, rep, took))); err != nil {
		return err
	}
	if rep.Found {
		return failed()
	}
	return nil
}

// dataSource names the data for the output.
func dataSource(paths []string) string {
	if len(paths) == 0 {
		return "bundled:synthetic"
	}
	return strings.Join(paths, ", ")
}

// checkText is the text output: a line per check, and the event a check
// names under it.
func checkText(o RunOptions, rep *check.Report, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "check %s on %s: %s events, %s (%s)\n\n", o.Strategy, dataSource(o.Data), units.Count(rep.Events),
		counted(rep.Replays, "run", "runs"), units.Millis(float64(took.Milliseconds())))
	for _, r := range rep.Checks {
		mark := map[check.Status]string{check.Clean: "✓", check.Found: "✗", check.Skipped: "–"}[r.Status]
		fmt.Fprintf(&b, "%s %-12s %s\n", mark, r.Check, r.Summary)
		if f := r.Finding; f != nil {
			fmt.Fprintf(&b, "    event %s at %s (%s), hook %s\n", units.Count(f.Event), f.Time, f.Symbol, f.Hook)
			fmt.Fprintf(&b, "    the run:   %s\n", strings.Join(f.Run, "; "))
			if f.Failure != "" {
				fmt.Fprintf(&b, "    %s failed: %s\n", f.Against, f.Failure)
			} else {
				fmt.Fprintf(&b, "    %s: %s\n", f.Against, strings.Join(f.Replay, "; "))
			}
		}
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "    note: %s\n", n)
		}
	}
	return b.String()
}

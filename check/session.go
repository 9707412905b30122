package check

import (
	"context"
	"path/filepath"
	"runtime"

	"stratbench/backtest"
	"stratbench/data"
	"stratbench/engine"
	"stratbench/session"
)

// ForSession is the Config of a check of s's strategy: its runs with
// params and market, as jobs in home (a scratch home the caller removes,
// which also takes the cut copies of the data), on the data at paths
// (none: the bundled sample) within the session's window, as many at once
// as the machine has CPUs.
func ForSession(s *session.Session, params []string, market backtest.Options, paths []string, timeframe, home string) (Config, error) {
	var files []string
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return Config{}, err
		}
		files = append(files, abs)
	}
	job := s.RunConfig(s.Python())
	job.Params, job.Home, job.CacheDir = params, home, engine.DefaultCacheDir(s.Store().Home())
	return Config{
		Job: job, Market: market, Window: s.DataOptions().Window, Files: files, Timeframe: timeframe, Slots: runtime.NumCPU(), TempDir: home,
		Data: func(ctx context.Context, w data.Window) (*data.Set, error) {
			if len(paths) == 0 {
				return data.Sample(w)
			}
			return data.Open(ctx, paths, data.Options{Window: w, Budget: s.DataOptions().Budget, Timeframe: timeframe})
		},
	}, nil
}

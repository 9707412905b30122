package check

import (
	"context"
	"os"
	"path/filepath"
	"runtime"

	"stratbench/backtest"
	"stratbench/data"
	"stratbench/engine"
	"stratbench/session"
)

// ForSession is the Config of a check of s's strategy: its runs with
// params and market, as jobs in a scratch home of their own (which also
// takes the cut copies of the data), on the data at paths (none: the
// bundled sample) within the session's window, as many at once as the
// machine has CPUs. The replays so do not fill the user's list of jobs.
// The scratch home lies in the home's tmp/, held until the caller calls
// release, which removes it: what a killed check left there, the next
// check or prune removes (docs/robustness.md).
func ForSession(s *session.Session, params []string, market backtest.Options, paths []string, timeframe string) (cfg Config, release func(), err error) {
	var files []string
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return Config{}, nil, err
		}
		files = append(files, abs)
	}
	s.Store().RemoveLeftovers()
	scratch, err := s.Store().HoldTemp("check-")
	if err != nil {
		return Config{}, nil, err
	}
	home := scratch.Path()
	release = func() {
		os.RemoveAll(home)
		scratch.Release()
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
	}, release, nil
}

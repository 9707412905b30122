package local

import (
	"context"
	"slices"
	"sync"
	"time"

	"stratbench/backtest"
	"stratbench/data"
	"stratbench/sweep"
)

// Data is the data of a sweep, opened once and shared by its runs: each
// run gets a market of its own (a backtest.Driver, which reads the set
// through a stream of its own) over the sweep's window, or over its
// fold's, whose set is opened once for all the runs of that window.
type Data struct {
	base   *data.Set // the sweep's window
	paths  []string  // the files and folders; none for the bundled sample
	opts   data.Options
	market backtest.Options

	mu      sync.Mutex
	windows map[string]*data.Set // a fold's windows, by Window.String
}

// NewData takes set, the data of the sweep's window (read from paths with
// opts, or the bundled sample when there are none), for the whole sweep;
// its runs trade it with market. The caller closes set after Close.
func NewData(set *data.Set, paths []string, opts data.Options, market backtest.Options) *Data {
	return &Data{base: set, paths: paths, opts: opts, market: market, windows: map[string]*data.Set{}}
}

// set returns the data of the sweep's window, or of w (a fold's half-open
// window, replayed as the from and to that w.RunFlags gives, so that the
// run is exactly the --ci run over that window), opened once.
func (d *Data) set(ctx context.Context, w *sweep.Window) (*data.Set, error) {
	if w == nil {
		return d.base, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if set, ok := d.windows[w.String()]; ok {
		return set, nil
	}
	win, err := data.ParseWindow(w.RunFlags())
	if err != nil {
		return nil, &InputError{err}
	}
	opts := d.opts
	opts.Window = win
	var set *data.Set
	if len(d.paths) == 0 {
		set, err = data.Sample(win)
	} else {
		set, err = data.Open(ctx, d.paths, opts)
	}
	if err != nil {
		return nil, inputError(ctx, err)
	}
	d.windows[w.String()] = set
	return set, nil
}

// Driver builds a market over the sweep's window, or over w.
func (d *Data) Driver(ctx context.Context, w *sweep.Window) (*backtest.Driver, error) {
	set, err := d.set(ctx, w)
	if err != nil {
		return nil, err
	}
	drv, err := backtest.NewDriver(set, d.market)
	if err != nil {
		return nil, &InputError{err}
	}
	return drv, nil
}

// Close closes the folds' sets (the sweep's own is the caller's).
func (d *Data) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, set := range d.windows {
		set.Close()
		delete(d.windows, k)
	}
}

// Fingerprint identifies the data the sweep's runs read (a resume refuses
// it changed): the digest of the bars of the sweep's window.
func (d *Data) Fingerprint(ctx context.Context) (string, error) {
	fp, err := d.base.Digest(ctx)
	if err != nil {
		return "", inputError(ctx, err)
	}
	return fp, nil
}

// Info is the source and the first and last bar of the sweep's window, as
// a job report's "data" has them.
func (d *Data) Info() (source, from, to string) {
	in := d.base.Info()
	if in.Events > 0 {
		from, to = in.From.UTC().Format(time.RFC3339Nano), in.To.UTC().Format(time.RFC3339Nano)
	}
	return in.Source, from, to
}

// maxGaps bounds the bars read to find the bar interval.
const maxGaps = 100_000

// bars describes the sweep's window for walk-forward folds: its first and
// last bar and the bar interval (the median gap between distinct
// timestamps of the first bars, as the metrics' bar_interval_s).
func (d *Data) bars(ctx context.Context) (sweep.Bars, error) {
	in := d.base.Info()
	if in.Events == 0 {
		return sweep.Bars{}, nil
	}
	st, err := d.base.Stream(ctx)
	if err != nil {
		return sweep.Bars{}, inputError(ctx, err)
	}
	defer st.Close()
	b, _, err := st.Fill(min(int(in.Events), maxGaps+1))
	if err != nil {
		return sweep.Bars{}, inputError(ctx, err)
	}
	var gaps []int64
	for i := 1; i < b.Len() && len(gaps) < maxGaps; i++ {
		if g := b.Time[i] - b.Time[i-1]; g > 0 {
			gaps = append(gaps, g)
		}
	}
	var interval time.Duration
	if len(gaps) > 0 {
		slices.Sort(gaps)
		interval = time.Duration(gaps[len(gaps)/2])
	}
	return sweep.Bars{First: in.From.UTC(), Last: in.To.UTC(), Interval: interval}, nil
}

// checkFoldWindows feeds check the time of every bar of the sweep's data,
// in order, until no later bar can change its answer, and returns its
// answer: a fold window without bars is refused before any run, rather
// than failing the sweep when its run cannot open its data (and every
// resume after it). It reads the data once more: a walk-forward only.
func (d *Data) checkFoldWindows(ctx context.Context, check *sweep.WindowCheck) error {
	st, err := d.base.Stream(ctx)
	if err != nil {
		return inputError(ctx, err)
	}
	defer st.Close()
	for pos, n := 0, st.Events(); pos < n && !check.Done(); {
		b, first, err := st.Fill(pos + foldCheckBars)
		if err != nil {
			return inputError(ctx, err)
		}
		if first+b.Len() <= pos {
			break // nothing more to read
		}
		for _, t := range b.Time[pos-first:] {
			check.See(t)
		}
		pos = first + b.Len()
		st.Release(pos)
	}
	return check.Err()
}

// BarTimes returns the distinct times of the bars of the sweep's window,
// in order: the union of its symbols' times, which the runs' returns are
// aligned on. It streams the data once and holds only the times.
func (d *Data) BarTimes(ctx context.Context) ([]int64, error) {
	st, err := d.base.Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var times []int64
	for pos, n := 0, st.Events(); pos < n; {
		b, first, err := st.Fill(pos + foldCheckBars)
		if err != nil {
			return nil, err
		}
		if first+b.Len() <= pos {
			break // nothing more to read
		}
		for _, t := range b.Time[pos-first:] {
			if len(times) == 0 || t != times[len(times)-1] {
				times = append(times, t)
			}
		}
		pos = first + b.Len()
		st.Release(pos)
	}
	return times, nil
}

// foldCheckBars is how many bars checkFoldWindows asks the data for at a
// time.
const foldCheckBars = 1 << 16

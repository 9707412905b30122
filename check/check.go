package check

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"stratbench/backtest"
	"stratbench/contract"
	"stratbench/data"
	"stratbench/engine"
	"stratbench/job"
	"stratbench/supervisor"
)

// The replays a check runs.
const (
	// MaxCutEvents is how many events where the first run placed or
	// cancelled an order are cut after, at most; as many events where it
	// did not are cut after too.
	MaxCutEvents = 8
	// LaterStarts is how many later starts the warm-up check replays from.
	LaterStarts = 3
)

// Config is what a check runs.
type Config struct {
	// Job is every run's engine.Config (Strategy, Python, Params, Home,
	// CacheDir, Limits, Sandbox, Version, Host, Env): the runs are jobs in
	// Job.Home, which the caller may remove when Run returns.
	Job engine.Config
	// Market is the runs' market.
	Market backtest.Options
	// Window is the run flags' window; Data opens the data within a
	// window (the run flags' data, in a window of the check's).
	Window data.Window
	Data   func(ctx context.Context, w data.Window) (*data.Set, error)
	// Files are the data files and folders (--data, absolute paths) that
	// the cut replays show cut, Timeframe --timeframe; none for data that
	// is no file (the bundled sample).
	Files     []string
	Timeframe string
	// Slots is how many replays run at once (at least 1).
	Slots int
	// TempDir is where the cut copies of the files are written; "" for
	// the system's.
	TempDir string
}

// Check names.
const (
	Determinism = "determinism"
	LookAhead   = "look-ahead"
	WarmUp      = "warm-up"
)

// Status is what a check found.
type Status string

// Statuses.
const (
	Clean   Status = "clean"
	Found   Status = "found"
	Skipped Status = "skipped"
)

// Report is what Run found.
type Report struct {
	// Events is the number of events of the first run, Symbols the data's.
	Events  int      `json:"events"`
	Symbols []string `json:"symbols"`
	// History is the bars the MANIFEST asks for.
	History int `json:"history"`
	// OrdersHash is the first run's.
	OrdersHash string `json:"orders_hash"`
	// Checks are the three checks' results: determinism, look-ahead,
	// warm-up.
	Checks []Result `json:"checks"`
	// Replays is the number of runs the check ran, the first included;
	// Warm how many of them were forked from a warm template.
	Replays int `json:"replays"`
	Warm    int `json:"warm_runs"`
	// Found says whether a check found something.
	Found bool `json:"found"`
}

// Result is one check's result.
type Result struct {
	Check   string   `json:"check"`
	Status  Status   `json:"status"`
	Summary string   `json:"summary"`
	Finding *Finding `json:"finding"`
	Notes   []string `json:"notes,omitempty"`
}

// Finding is the event a check names.
type Finding struct {
	// Event is its number and Time its time (RFC 3339, UTC), Symbol its
	// bar's symbol.
	Event  int    `json:"event"`
	Time   string `json:"time"`
	Symbol string `json:"symbol"`
	// Hook is the hook whose commands differ.
	Hook string `json:"hook"`
	// Run and Replay are the commands (or decisions) of each at that
	// event, each "hook: command"; Replay is what Against names.
	Run     []string `json:"run"`
	Replay  []string `json:"replay"`
	Against string   `json:"against"`
	// Failure is the replay's failure when it failed instead.
	Failure string `json:"failure,omitempty"`
}

// FailedError is Run's error when the first run fails: there is nothing to
// compare with.
type FailedError struct {
	JobID   string
	Failure *contract.Failure
	Status  job.Status
}

func (e *FailedError) Error() string {
	if e.Failure != nil {
		return fmt.Sprintf("the strategy's run fails (%s): %s", e.Failure.Kind, firstLine(e.Failure.Message))
	}
	return fmt.Sprintf("the strategy's run ended %s", e.Status)
}

// Run runs the three checks (see the package's doc) and reports what they
// found. Its error is ctx's, a *FailedError, or one that kept a run from
// starting (a *engine.UsageError among them).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	c := &checker{cfg: cfg}
	if c.cfg.Slots < 1 {
		c.cfg.Slots = 1
	}
	if err := c.loadEvents(ctx); err != nil {
		return nil, err
	}
	pool, err := engine.NewPool(cfg.Job, c.cfg.Slots)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	pool.Warm()
	c.pool = pool

	// The first run, cold, and the same run from a warm template.
	runs, err := c.runAll(ctx, []replay{{what: "the run, cold"}, {what: "the same run from a warm template", warm: true}})
	if err != nil {
		return nil, err
	}
	first, second := runs[0], runs[1]
	if first.failure != nil || first.status != job.StatusPassed {
		return nil, &FailedError{JobID: first.jobID, Failure: first.failure, Status: first.status}
	}
	rep := &Report{Events: len(c.times), Symbols: c.symbols, History: first.history, OrdersHash: first.ordersHash}
	det := c.determinism(first, second, pool.Stats())
	rep.Checks = append(rep.Checks, det)
	if det.Status == Found {
		why := "the runs are not deterministic: a difference between a replay and the first run would say nothing"
		rep.Checks = append(rep.Checks, Result{Check: LookAhead, Status: Skipped, Summary: why},
			Result{Check: WarmUp, Status: Skipped, Summary: why})
		rep.Replays, rep.Found, rep.Warm = 2, true, int(pool.Stats().Warm)
		return rep, nil
	}
	cuts, starts := c.cutEvents(first), c.laterStarts()
	var replays []replay
	var notes []string
	for _, e := range cuts {
		r, note, err := c.cutReplay(ctx, e)
		if err != nil {
			return nil, err
		}
		if note != "" && !slices.Contains(notes, note) {
			notes = append(notes, note)
		}
		replays = append(replays, r)
	}
	defer func() {
		for _, r := range replays {
			if r.tmp != "" {
				os.RemoveAll(r.tmp)
			}
		}
	}()
	for _, s := range starts {
		replays = append(replays, replay{what: fmt.Sprintf("a replay from event %d", s), from: s})
	}
	done, err := c.runAll(ctx, replays)
	if err != nil {
		return nil, err
	}
	la := c.lookAhead(first, cuts, done[:len(cuts)])
	if len(cfg.Files) > 0 && cfg.Job.Sandbox {
		notes = append(notes, "under the sandbox the strategy cannot read the data files: only the replays' data was cut")
	}
	la.Notes = append(notes, la.Notes...)
	wu := c.warmUp(first, starts, done[len(cuts):])
	rep.Checks = append(rep.Checks, la, wu)
	rep.Replays, rep.Warm = 2+len(replays), int(pool.Stats().Warm)
	for _, r := range rep.Checks {
		rep.Found = rep.Found || r.Status == Found
	}
	return rep, nil
}

// checker is one check's state.
type checker struct {
	cfg     Config
	pool    *engine.Pool
	times   []int64 // each event's time
	syms    []int32 // each event's symbol
	symbols []string
}

// loadEvents reads the time and symbol of every event of the run flags'
// window.
func (c *checker) loadEvents(ctx context.Context) error {
	set, err := c.cfg.Data(ctx, c.cfg.Window)
	if err != nil {
		return err
	}
	defer set.Close()
	c.symbols = set.Symbols()
	st, err := set.Stream(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	for pos, n := 0, st.Events(); pos < n; {
		b, first, err := st.Fill(pos + 1<<16)
		if err != nil {
			return err
		}
		if first+b.Len() <= pos {
			break
		}
		c.times = append(c.times, b.Time[pos-first:]...)
		c.syms = append(c.syms, b.Symbol[pos-first:]...)
		pos = first + b.Len()
		st.Release(pos)
	}
	return nil
}

// replay is one run of the check: the whole window, or a cut one (to: the
// last event it keeps), or one from a later start (from: its first event).
type replay struct {
	what  string
	warm  bool
	to    int // the last event kept, when cut (> 0 or cut set)
	cut   bool
	from  int // the first event, when > 0
	binds []supervisor.BindMount
	tmp   string // the folder of its cut copies, removed after
}

// ran is what a run did.
type ran struct {
	jobID      string
	status     job.Status
	failure    *contract.Failure
	ordersHash string
	history    int
	records    []job.OrderRecord
}

// cutReplay prepares the replay cut after event e: its window ends at e's
// time, and the data files, cut there too, are bind-mounted over theirs
// (not under the sandbox, which does not let the strategy read them). The
// note says what could not be cut.
func (c *checker) cutReplay(ctx context.Context, e int) (replay, string, error) {
	r := replay{what: fmt.Sprintf("a replay whose data ends at event %d", e), cut: true, to: e}
	if len(c.cfg.Files) == 0 || c.cfg.Job.Sandbox {
		return r, "", nil
	}
	dir, err := os.MkdirTemp(c.cfg.TempDir, "stratbench-check-")
	if err != nil {
		return r, "", err
	}
	r.tmp = dir
	cut, notCut, err := data.CutCopies(ctx, c.cfg.Files, c.cfg.Timeframe, time.Unix(0, c.times[e]).UTC(), dir)
	if err != nil {
		os.RemoveAll(dir)
		return r, "", err
	}
	for _, f := range cut {
		target, err := filepath.Abs(f.Path)
		if err != nil {
			os.RemoveAll(dir)
			return r, "", err
		}
		r.binds = append(r.binds, supervisor.BindMount{Source: f.Copy, Target: target})
	}
	note := ""
	if len(notCut) > 0 {
		note = "not cut for the strategy's own reads (Feather and freqtrade's JSON are not): " + strings.Join(notCut, ", ")
	}
	return r, note, nil
}

// runAll runs the replays, Slots at a time, and returns what each did, in
// order. The first error (ctx's, or a run that could not start) ends them
// all.
func (c *checker) runAll(ctx context.Context, rs []replay) ([]ran, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([]ran, len(rs))
	errs := make([]error, len(rs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(c.cfg.Slots, len(rs)) {
		wg.Add(1)
		// The goroutines' owner is runAll: it waits for them.
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = c.run(ctx, rs[i])
				if errs[i] != nil {
					cancel()
				}
			}
		}()
	}
	for i := range rs {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// run runs one replay as a job and reads its orders record.
func (c *checker) run(ctx context.Context, r replay) (ran, error) {
	w := c.cfg.Window
	if r.cut {
		w.To = time.Unix(0, c.times[r.to]).UTC()
	}
	if r.from > 0 {
		w.From = time.Unix(0, c.times[r.from]).UTC()
	}
	set, err := c.cfg.Data(ctx, w)
	if err != nil {
		return ran{}, err
	}
	defer set.Close()
	d, err := backtest.NewDriver(set, c.cfg.Market)
	if err != nil {
		return ran{}, err
	}
	cfg := c.cfg.Job
	cfg.BindMounts = r.binds
	var j *engine.Job
	if r.warm || r.cut || r.from > 0 {
		j, err = c.pool.Start(ctx, cfg, d)
	} else {
		j, err = engine.Start(ctx, cfg, d)
	}
	if err != nil {
		return ran{}, err
	}
	out := ran{jobID: j.ID()}
	events := j.Events()
	for ev := range events {
		if wr, ok := ev.(job.WorkerReady); ok {
			out.history = wr.History
		}
	}
	rep, err := j.Wait()
	if err != nil && rep == nil {
		return ran{}, err
	}
	if ctx.Err() != nil {
		return ran{}, ctx.Err()
	}
	out.status, out.failure, out.ordersHash = rep.Status, rep.Failure, rep.OrdersHash
	store, err := job.OpenStore(cfg.Home)
	if err != nil {
		return ran{}, err
	}
	err = store.Orders(ctx, j.ID(), func(o job.OrderRecord) error {
		out.records = append(out.records, o)
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return ran{}, fmt.Errorf("%s: %w", r.what, err)
	}
	return out, nil
}

// eventTime is an event's time in RFC 3339, UTC.
func (c *checker) eventTime(e int) string {
	if e < 0 || e >= len(c.times) {
		return ""
	}
	return time.Unix(0, c.times[e]).UTC().Format(time.RFC3339Nano)
}

// eventSymbol is an event's bar's symbol.
func (c *checker) eventSymbol(e int) string {
	if e < 0 || e >= len(c.syms) || int(c.syms[e]) >= len(c.symbols) {
		return ""
	}
	return c.symbols[c.syms[e]]
}

// lastAt is the last event whose time is event e's.
func (c *checker) lastAt(e int) int {
	for e+1 < len(c.times) && c.times[e+1] == c.times[e] {
		e++
	}
	return e
}

// firstAt is the first event whose time is event e's.
func (c *checker) firstAt(e int) int {
	for e > 0 && c.times[e-1] == c.times[e] {
		e--
	}
	return e
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

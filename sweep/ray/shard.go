package ray

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"stratbench/backtest"
	"stratbench/data"
	"stratbench/engine"
	"stratbench/job"
	"stratbench/session"
	"stratbench/supervisor"
	"stratbench/sweep"
	"stratbench/sweep/local"
)

// The node side of a sweep on a Ray cluster: `stratbench ray-shard`, a
// hidden command that a slot of the coordinator (sweep/ray) starts on its
// node, in the folder where its node unpacked the code package (the binary,
// the strategy's folder, the data: checked by the slot, read-only). It
// loads the data once, says "ready", then runs the items it is handed one
// after another, each as an ordinary supervised job (the local.Starter of
// a local sweep: the same engine.Start, the same limits), and answers each
// with the run's report, its log and its artifacts (see runResult). The
// protocol is sweep/ray's slot protocol: one JSON object per line, on stdin
// and stdout.

// What comes back from the node with each run, at most (docs/ray.md,
// "What comes back"): the log up to LogReturnBytes (cut between two lines,
// with one notice), the artifacts folder when it holds at most
// ArtifactsReturnBytes in all. What does not come back stays on the node,
// in the run's job folder under the node's temporary folder.
const (
	LogReturnBytes       = 4 << 20
	ArtifactsReturnBytes = 4 << 20
	// RecordsReturnBytes bounds the records (records/, gzip'd CSV) that
	// come back: a year of minute bars takes about 7.5 MB.
	RecordsReturnBytes = 32 << 20
)

// ShardOptions are what Shard runs with.
type ShardOptions struct {
	// Config is the shard's configuration, JSON (ShardConfig), written
	// by the local stratbench into the Ray job's work.
	Config string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer // what the slot logs on the node
	// Version is stratbench's, for the runs' reports.
	Version string
}

// nodePolicies are what the node's environment says of its runs
// (session.Budgets, session.SandboxRequired).
type nodePolicies struct {
	budget, spill int64
	sandbox       bool
}

// ConfigError is a shard's configuration that is not one: its Config
// names what is wrong.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// ShardConfig is what every run of one Ray job shares: the run flags of
// the sweep, with paths relative to the shard's working directory (the
// unpacked package) or absolute paths every node reads.
type ShardConfig struct {
	SweepID     string   `json:"sweep_id"`
	Strategy    string   `json:"strategy"` // the strategy file, e.g. strategy/sma.py
	SHA256      string   `json:"sha256"`   // its content when the sweep started
	Data        []string `json:"data"`     // data/NAME in the package or absolute paths on the nodes; none for the bundled sample
	From        string   `json:"from"`
	To          string   `json:"to"`
	Timeframe   string   `json:"timeframe,omitempty"`
	Cash        float64  `json:"cash"`
	FeeBps      float64  `json:"fee_bps"`
	SlippageBps float64  `json:"slippage_bps"`
	AllowShort  bool     `json:"allow_short"`
	// Python is --python when it names an interpreter present on every
	// node; "" runs the node's own (the one that runs Ray there, which
	// the slot passes in STRATBENCH_RAY_PYTHON).
	Python  string `json:"python,omitempty"`
	Sandbox bool   `json:"sandbox"`
}

// itemPayload is an item's payload in the Ray job's work: what a run
// needs besides its key.
type itemPayload struct {
	Args   []string      `json:"args"`
	Window *sweep.Window `json:"window"`
}

// runResult is a run's outcome as the shard sends it back.
type runResult struct {
	// Error says why the run could not run at all (no report).
	Error string `json:"error,omitempty"`
	// Report is the run's job.json.
	Report json.RawMessage `json:"report,omitempty"`
	// Log is logs.jsonl, gzipped; LogCut says it was cut at
	// LogReturnBytes.
	Log    []byte `json:"log,omitempty"`
	LogCut bool   `json:"log_cut,omitempty"`
	// Artifacts is the artifacts folder as a zip, when it holds at most
	// ArtifactsReturnBytes; ArtifactsBytes is its size in all.
	Artifacts      []byte `json:"artifacts,omitempty"`
	ArtifactsBytes int64  `json:"artifacts_bytes"`
	// Records is the records folder (job.RecordsDir) as a zip, when it
	// holds at most RecordsReturnBytes; RecordsBytes is its size.
	Records      []byte `json:"records,omitempty"`
	RecordsBytes int64  `json:"records_bytes"`
	// Stopped says that the run has no result and no job to bring back:
	// its job was lost with its warm template while the run was being
	// stopped (local.Run.Report's ErrLostStopping). A resume runs it again.
	Stopped bool `json:"stopped,omitempty"`
	// Lost are the jobs of the run that were lost with their warm template
	// (their folders removed from the node): the driver names them, as a
	// local sweep does.
	Lost []string `json:"lost,omitempty"`
	// Host and NodeDir say where the run's job folder stays on the node
	// when something did not come back (NodeDir empty: it was removed).
	Host    string `json:"host"`
	NodeDir string `json:"node_dir,omitempty"`
}

// shardMessage is a line of the slot.
type shardMessage struct {
	Type    string          `json:"type"`
	Key     RunKey          `json:"key"`
	Payload json.RawMessage `json:"payload"`
}

// Shard runs the shard under the node's own policies (its environment's:
// the sandbox when the node requires it, whatever the sweep's run flags
// say, and its data budgets): it returns when its input ends (after
// stopping a run in flight: on_finish runs), or with the error that kept
// it from starting: a *session.PolicyError (the node's environment), a
// *ConfigError, a *local.InputError (the strategy, the data, the
// interpreter) or the machine's.
func Shard(ctx context.Context, o ShardOptions) error {
	var node nodePolicies
	var err error
	if node.budget, node.spill, err = session.Budgets(); err != nil {
		return &session.PolicyError{Err: err}
	}
	if node.sandbox, err = session.SandboxRequired(); err != nil {
		return &session.PolicyError{Err: err}
	}
	var cfg ShardConfig
	if err := json.Unmarshal([]byte(o.Config), &cfg); err != nil {
		return &ConfigError{err}
	}
	began := time.Now()
	runs, err := newShardRuns(ctx, cfg, o, node)
	if err != nil {
		return err
	}
	defer runs.close()
	host, _ := os.Hostname()
	out := &shardOutput{enc: json.NewEncoder(o.Stdout)}
	if err := out.send(map[string]any{"type": "ready", "pid": os.Getpid(), "host": host,
		"load_ms": time.Since(began).Milliseconds()}); err != nil {
		return err
	}
	in := make(chan shardMessage)
	readErr := make(chan error, 1)
	// The reader's owner is this function: it ends at EOF or at a bad
	// line, and RayShard returns only after in is closed.
	go func() {
		defer close(in)
		s := bufio.NewScanner(o.Stdin)
		s.Buffer(make([]byte, 64<<10), 16<<20)
		for s.Scan() {
			var m shardMessage
			if err := json.Unmarshal(s.Bytes(), &m); err != nil {
				readErr <- fmt.Errorf("ray-shard: a line of the slot: %w", err)
				return
			}
			in <- m
		}
		readErr <- s.Err()
	}()
	for m := range in {
		switch m.Type {
		case "stop":
			continue // nothing runs
		case "run":
		default:
			return fmt.Errorf("ray-shard: unknown message %q", m.Type)
		}
		res, more := runs.item(ctx, m, in)
		res.Host = host
		if err := out.send(map[string]any{"type": "result", "key": m.Key, "result": res}); err != nil {
			return err
		}
		if !more {
			break
		}
	}
	for range in { // the input ended; the reader is done
	}
	return <-readErr
}

// shardOutput writes the shard's lines.
type shardOutput struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (s *shardOutput) send(v any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.enc.Encode(v); err != nil {
		return fmt.Errorf("ray-shard: writing to the slot: %w", err)
	}
	return nil
}

// shardRuns is what a shard's runs start with: the local sweep's Starter
// over the data of this node, through a warm pool of one slot as a local
// sweep's slot has.
type shardRuns struct {
	starter *local.Starter
	data    *local.Data
	set     *data.Set
	jobs    *job.Store // the runs' job folders, on the node
	stderr  io.Writer
}

// close ends the warm worker and closes the data.
func (r *shardRuns) close() {
	r.starter.Close()
	r.data.Close()
	r.set.Close()
}

// newShardRuns builds what a local sweep's runs start with, on this
// node: the store under the node's temporary folder, the interpreter, the
// window and the data, opened once.
func newShardRuns(ctx context.Context, cfg ShardConfig, o ShardOptions, node nodePolicies) (*shardRuns, error) {
	strategy, err := filepath.Abs(cfg.Strategy)
	if err != nil {
		return nil, &local.InputError{Err: fmt.Errorf("ray-shard: strategy: %w", err)}
	}
	var paths []string
	for _, d := range cfg.Data {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, &local.InputError{Err: fmt.Errorf("ray-shard: data: %w", err)}
		}
		paths = append(paths, abs)
	}
	py := cfg.Python
	if py == "" {
		py = os.Getenv("STRATBENCH_RAY_PYTHON")
	}
	host, err := supervisor.NewHost()
	if err != nil {
		return nil, err
	}
	// The runs' job folders live on the node, per sweep, outside the
	// package's folder (read-only, and shared by the node's shards).
	home := filepath.Join(os.TempDir(), "stratbench-ray", cfg.SweepID)
	store, err := job.OpenStore(home)
	if err != nil {
		return nil, err
	}
	if _, err := engine.Recover(store); err != nil {
		fmt.Fprintln(o.Stderr, "stratbench ray-shard: warning:", err)
	}
	window, err := data.ParseWindow(cfg.From, cfg.To)
	if err != nil {
		return nil, &local.InputError{Err: err}
	}
	python, err := engine.FindPythonCached(ctx, py, engine.DefaultCacheDir(store.Home()))
	if err != nil {
		return nil, &local.InputError{Err: err}
	}
	opts := data.Options{Window: window, Budget: node.budget, SpillBudget: node.spill, Timeframe: cfg.Timeframe}
	var set *data.Set
	if len(paths) == 0 {
		set, err = data.Sample(window)
	} else {
		set, err = data.Open(ctx, paths, opts)
	}
	if err != nil {
		return nil, &local.InputError{Err: err}
	}
	market := backtest.Options{Cash: cfg.Cash, FeeBps: cfg.FeeBps, SlippageBps: cfg.SlippageBps, AllowShort: cfg.AllowShort}
	sd := local.NewData(set, paths, opts, market)
	// One thread per numeric pool: the node runs one shard per CPU.
	starter := local.NewStarter(engine.Config{Strategy: strategy, Python: python, Home: store.Home(),
		Limits: job.DefaultLimits(), Sandbox: cfg.Sandbox || node.sandbox, Version: o.Version, Host: host}, 1)
	starter.Use(sd, cfg.SweepID, cfg.SHA256)
	return &shardRuns{starter: starter, data: sd, set: set, jobs: store, stderr: o.Stderr}, nil
}

// item runs one item and returns its outcome; more is false when the
// input ended meanwhile (the run was stopped: on_finish ran).
func (r *shardRuns) item(ctx context.Context, m shardMessage, in <-chan shardMessage) (res runResult, more bool) {
	var p itemPayload
	if err := json.Unmarshal(m.Payload, &p); err != nil {
		return runResult{Error: fmt.Sprintf("the item's payload: %v", err)}, true
	}
	it := sweep.Item{Fold: m.Key.Fold, Combination: sweep.Combination{Index: int64(m.Key.Index)}, Args: p.Args, Window: p.Window}
	if m.Key.Phase != nil {
		it.Phase = sweep.Phase(*m.Key.Phase)
	}
	run, err := r.starter.StartRun(ctx, it)
	if err != nil {
		return runResult{Error: err.Error()}, true
	}
	type outcome struct {
		rep *job.Report
		err error
	}
	done := make(chan outcome, 1)
	// The waiter's owner is this function, which receives its outcome.
	go func() {
		rep, err := run.Report()
		done <- outcome{rep, err}
	}()
	more = true
	var o outcome
wait:
	for {
		select {
		case msg, ok := <-in:
			if !ok {
				more = false
				in = nil
				run.Stop()
			} else if msg.Type == "stop" {
				run.Stop()
			}
		case o = <-done:
			break wait
		}
	}
	// A job lost with its warm template that the run's result does not
	// come from (it started again, or was stopping) stays on the node no
	// more than the run's returned one does. The shard's stderr, in Ray's
	// logs of the slot, says so.
	var lost []string
	for _, dir := range run.Dropped() {
		fmt.Fprintf(r.stderr, "stratbench ray-shard: job %s (%s) was lost with its warm template; its folder is removed\n",
			filepath.Base(dir), it)
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintln(r.stderr, "stratbench ray-shard: warning:", err)
		}
		lost = append(lost, filepath.Base(dir))
	}
	if errors.Is(o.err, local.ErrLostStopping) {
		return runResult{Stopped: true, Lost: lost}, more
	}
	if o.rep == nil {
		return runResult{Error: fmt.Sprintf("the run did not end with a report: %v", o.err), Lost: lost}, more
	}
	back := collectJob(r.jobs.JobDir(o.rep.JobID))
	back.Lost = lost
	return back, more
}

// collectJob reads what comes back of a finished job's folder, and removes
// the folder when all of it came back.
func collectJob(dir string) runResult {
	var res runResult
	report, err := os.ReadFile(filepath.Join(dir, "job.json"))
	if err != nil {
		return runResult{Error: fmt.Sprintf("the run's report: %v", err)}
	}
	res.Report = report
	res.Log, res.LogCut, err = gzipLog(filepath.Join(dir, "logs.jsonl"), LogReturnBytes)
	if err != nil {
		return runResult{Error: fmt.Sprintf("the run's log: %v", err)}
	}
	res.ArtifactsBytes, res.Artifacts, err = zipArtifacts(filepath.Join(dir, "artifacts"), ArtifactsReturnBytes)
	if err != nil {
		return runResult{Error: fmt.Sprintf("the run's artifacts: %v", err)}
	}
	res.RecordsBytes, res.Records, err = zipArtifacts(filepath.Join(dir, job.RecordsDir), RecordsReturnBytes)
	if err != nil {
		return runResult{Error: fmt.Sprintf("the run's records: %v", err)}
	}
	if res.LogCut || res.ArtifactsBytes > ArtifactsReturnBytes || res.RecordsBytes > RecordsReturnBytes {
		res.NodeDir = dir
	} else {
		os.RemoveAll(dir)
	}
	return res
}

// gzipLog compresses the log's first limit bytes, cut after its last
// complete line within them.
func gzipLog(path string, limit int64) ([]byte, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, false, err
	}
	cut := int64(len(head)) > limit
	if cut {
		head = head[:bytes.LastIndexByte(head[:limit], '\n')+1]
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(head)
	if err := zw.Close(); err != nil {
		return nil, false, err
	}
	return b.Bytes(), cut, nil
}

// zipArtifacts zips the folder when its regular files hold at most limit
// bytes in all; it returns their size either way.
func zipArtifacts(root string, limit int64) (int64, []byte, error) {
	var total int64
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return filepath.SkipDir
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil // folders are implied; links and the rest stay on the node
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		files = append(files, p)
		return nil
	})
	if err != nil || total > limit || len(files) == 0 {
		return total, nil, err
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, p := range files {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return total, nil, err
		}
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return total, nil, err
		}
		f, err := os.Open(p)
		if err != nil {
			return total, nil, err
		}
		_, err = io.Copy(w, io.LimitReader(f, limit))
		f.Close()
		if err != nil {
			return total, nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return total, nil, err
	}
	return total, b.Bytes(), nil
}

package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"stratbench/backtest"
	"stratbench/engine"
	"stratbench/python"
	"stratbench/sandbox"
	"stratbench/supervisor"
)

// session holds what every run of one stratbench invocation shares: the
// supervisor's host, the interpreter, the job store and the parsed data.
type session struct {
	opts     RunOptions
	host     *supervisor.Host
	python   *engine.Interpreter
	store    *engine.Store
	cache    *backtest.Cache
	window   backtest.Window
	sandbox  bool
	strategy string
}

func newSession(ctx context.Context, o RunOptions, strategy string) (*session, error) {
	// First: no descriptor stratbench inherited may reach a child, the
	// interpreter probe included.
	host, err := supervisor.NewHost()
	if err != nil {
		return nil, err
	}
	store, err := openStore(o.Stderr)
	if err != nil {
		return nil, err
	}
	window, err := backtest.ParseWindow(o.From, o.To)
	if err != nil {
		return nil, usage(err)
	}
	s := &session{opts: o, store: store, window: window, cache: backtest.NewCache(1 << 30), strategy: strategy}
	required, err := sandboxRequired()
	if err != nil {
		return nil, usage(err)
	}
	s.sandbox = o.Sandbox || required
	if s.sandbox {
		if err := sandbox.Check(); err != nil {
			return nil, usage(fmt.Errorf("refusing to run: %w", err))
		}
	}
	// Bad data is bad input: refuse before anything runs. The data loads
	// while the interpreter is probed (a pyenv shim alone takes a third of
	// a second).
	loaded := make(chan error, 1)
	go func() {
		_, err := s.driver()
		loaded <- err
	}()
	py, err := engine.FindPython(ctx, o.Python)
	dataErr := <-loaded
	if err != nil {
		return nil, usage(err)
	}
	if dataErr != nil {
		return nil, dataErr
	}
	s.python = py
	s.host = host
	return s, nil
}

// sandboxRequired reads STRATBENCH_PYTHON_SANDBOX: "required" forces the
// sandbox, whatever the flags say; any other non-empty value is refused
// rather than silently running unsandboxed.
func sandboxRequired() (bool, error) {
	switch v := os.Getenv("STRATBENCH_PYTHON_SANDBOX"); strings.ToLower(strings.TrimSpace(v)) {
	case "":
		return false, nil
	case "required":
		return true, nil
	default:
		return false, fmt.Errorf("STRATBENCH_PYTHON_SANDBOX=%q: the only value is \"required\"", v)
	}
}

// driver loads the data (from the cache) and builds a fresh market.
func (s *session) driver() (*backtest.Driver, error) {
	var data *backtest.Data
	if s.opts.Data == "" {
		data = backtest.Sample()
	} else {
		d, err := s.cache.Load(s.opts.Data)
		if err != nil {
			return nil, usage(err)
		}
		data = d
	}
	d, err := backtest.NewDriver(data, s.window, s.opts.market())
	if err != nil {
		return nil, usage(err)
	}
	return d, nil
}

// start starts one job on the strategy's current content.
func (s *session) start(ctx context.Context) (*engine.Job, error) {
	d, err := s.driver()
	if err != nil {
		return nil, err
	}
	return engine.Start(ctx, engine.Config{
		Strategy: s.strategy,
		Python:   s.python,
		Params:   s.opts.Params,
		Home:     s.store.Home(),
		Limits:   engine.DefaultLimits(),
		Sandbox:  s.sandbox,
		Version:  Version,
		Host:     s.host,
	}, d)
}

// resolveStrategy picks the strategy file: the argument, ./strategy.py, or
// the bundled example written to a workspace folder (kept across runs, so
// edits survive). It returns the path and the workspace folder, if used.
func resolveStrategy(arg string, suggest []string) (path, workspace string, err error) {
	if arg != "" {
		if err := checkStrategyArg(arg, suggest); err != nil {
			return "", "", err
		}
		return arg, "", nil
	}
	if _, err := os.Stat("strategy.py"); err == nil {
		return "strategy.py", "", nil
	}
	home, err := engine.DefaultHome()
	if err != nil {
		return "", "", err
	}
	workspace = filepath.Join(home, "workspace")
	path = filepath.Join(workspace, "strategy.py")
	if _, err := os.Stat(path); err == nil {
		return path, workspace, nil
	}
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		return "", "", fmt.Errorf("write the example strategy: %w", err)
	}
	if err := os.WriteFile(path, python.ExampleStrategy(), 0o644); err != nil {
		return "", "", fmt.Errorf("write the example strategy: %w", err)
	}
	return path, workspace, nil
}

// checkStrategyArg refuses a STRATEGY that is not a Python file, before
// anything runs: a mistyped command ("stauts") or a data file given in its
// place would otherwise be imported by Python, or waited for.
func checkStrategyArg(arg string, suggest []string) error {
	if strings.HasSuffix(arg, ".py") {
		return nil
	}
	if len(suggest) > 0 {
		return fmt.Errorf("unknown command %q; did you mean %s? (a STRATEGY is a .py file)", arg, strings.Join(quoted(suggest), " or "))
	}
	if info, err := os.Stat(arg); err == nil && info.IsDir() {
		return fmt.Errorf("STRATEGY %s is a folder: give the strategy's .py file", arg)
	}
	return fmt.Errorf("STRATEGY %q is not a Python file (.py); the commands are jobs, status, logs and precheck (stratbench --help)", arg)
}

func quoted(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strconv.Quote(v)
	}
	return out
}

// openStore opens STRATBENCH_HOME and cleans up after a stratbench that was
// killed while running jobs (engine.Store.Recover): every command that
// reads or runs jobs starts that way. What recovery could not do is a
// warning on stderr.
func openStore(stderr io.Writer) (*engine.Store, error) {
	home, err := engine.DefaultHome()
	if err != nil {
		return nil, err
	}
	store, err := engine.OpenStore(home)
	if err != nil {
		return nil, err
	}
	if _, err := store.Recover(); err != nil {
		fmt.Fprintln(stderr, "stratbench: warning:", err)
	}
	return store, nil
}

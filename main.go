// Command stratbench is a terminal workbench for Python trading strategies:
// it re-runs a backtest on every save of strategy.py, with the strategy's hooks
// in a supervised Python worker under fixed runtime limits. --ci runs the same
// thing headless. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"stratbench/backtest"
	"stratbench/engine"
	"stratbench/internal/termtext"
	"stratbench/python"
	"stratbench/sandbox"
	"stratbench/supervisor"
	"stratbench/themes"
	"stratbench/ui"
	"stratbench/ui/headless"
	"stratbench/watch"
)

const version = "0.1.0"

// Exit codes of DESIGN §4.
const (
	exitPassed  = 0
	exitFailed  = 1
	exitUsage   = 2
	exitSIGHUP  = 129
	exitSIGINT  = 130
	exitSIGTERM = 143
)

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error // printed to stderr unless nil
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func usage(err error) error { return &exitError{code: exitUsage, err: err} }

func main() {
	supervisor.MaybeRunInit()
	sandbox.MaybeRunLauncher()
	if os.Getenv("GOGC") == "" {
		// Half the default headroom: a million bars of data make a large
		// live heap, and the default lets the heap grow to twice that
		// (measured: 205 MiB peak RSS at 100, 138 MiB at 50, for no
		// measurable loss of speed).
		debug.SetGCPercent(50)
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	root := newRootCommand()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitPassed
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(os.Stderr, "stratbench:", termtext.Text(ee.err.Error()))
		}
		return ee.code
	}
	// Cobra's own errors: unknown flags, wrong argument counts.
	fmt.Fprintln(os.Stderr, "stratbench:", termtext.Text(err.Error()))
	return exitUsage
}

// runFlags are the flags of a backtest run (TUI, --ci and precheck).
type runFlags struct {
	ci, watch, poll bool
	data, from, to  string
	params          []string
	cash, fee, slip float64
	allowShort      bool
	python          string
	sandbox         bool
	output, theme   string
}

func newRootCommand() *cobra.Command {
	var f runFlags
	root := &cobra.Command{
		Use:   "stratbench [flags] [STRATEGY]",
		Short: "A terminal workbench for Python trading strategies",
		Long: `stratbench re-runs a backtest of STRATEGY (default ./strategy.py, or a bundled
example when there is none) every time you save it, with the strategy's hooks in
a supervised Python worker under fixed runtime limits. --ci runs it once,
headless, and prints the report.`,
		Args:          cobra.MaximumNArgs(1),
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			strategy := ""
			if len(args) == 1 {
				strategy = args[0]
			}
			if err := checkOutput(f.output, "text", "json"); err != nil {
				return err
			}
			if !f.ci && (cmd.Flags().Changed("output") || f.watch) {
				return usage(errors.New("--output and --watch go with --ci"))
			}
			if f.ci {
				return runCI(cmd.Context(), f, strategy)
			}
			return runTUI(cmd.Context(), f, strategy)
		},
	}
	fl := root.Flags()
	fl.BoolVar(&f.ci, "ci", false, "run once headless and print the report (exit 0 passed, 1 failed, 2 bad input)")
	fl.BoolVar(&f.watch, "watch", false, "with --ci: re-run on every save, one report per run")
	fl.BoolVar(&f.poll, "poll", false, "watch the strategy by polling instead of file events (network file systems)")
	addMarketFlags(fl, &f)
	fl.StringVar(&f.python, "python", "", "Python interpreter (default $STRATBENCH_PYTHON, $VIRTUAL_ENV/bin/python, python3)")
	fl.BoolVar(&f.sandbox, "sandbox", false, "run the strategy in the sandbox (no network, files, processes or threads)")
	fl.StringVar(&f.output, "output", "text", "report format with --ci: text or json")
	fl.StringVar(&f.theme, "theme", "", "TUI theme: dark, light or high-contrast (default: follow the terminal)")

	root.AddCommand(newJobsCommand(), newStatusCommand(), newLogsCommand(), newPrecheckCommand())
	return root
}

func addMarketFlags(fl interface {
	StringVar(*string, string, string, string)
	StringArrayVar(*[]string, string, []string, string)
	Float64Var(*float64, string, float64, string)
	BoolVar(*bool, string, bool, string)
}, f *runFlags) {
	defaults := backtest.DefaultOptions()
	fl.StringVar(&f.data, "data", "", "bar data, CSV or JSONL (default: the bundled synthetic sample)")
	fl.StringVar(&f.from, "from", "", `first bar time, "2026-09-30 12:00:00" or RFC 3339, UTC`)
	fl.StringVar(&f.to, "to", "", "last bar time (inclusive)")
	fl.StringArrayVar(&f.params, "param", nil, "strategy param override k=v (repeatable)")
	fl.Float64Var(&f.cash, "cash", defaults.Cash, "starting cash")
	fl.Float64Var(&f.fee, "fee-bps", defaults.FeeBps, "fee per fill, in basis points of the notional")
	fl.Float64Var(&f.slip, "slippage-bps", defaults.SlippageBps, "market order slippage, in basis points")
	fl.BoolVar(&f.allowShort, "allow-short", defaults.AllowShort, "allow sells larger than the position")
}

// session holds what every run of one stratbench invocation shares.
type session struct {
	flags    runFlags
	host     *supervisor.Host
	python   *engine.Interpreter
	store    *engine.Store
	cache    *backtest.Cache
	window   backtest.Window
	sandbox  bool
	strategy string
}

func newSession(ctx context.Context, f runFlags, strategy string) (*session, error) {
	// First: no descriptor stratbench inherited may reach a child, the
	// interpreter probe included.
	host, err := supervisor.NewHost()
	if err != nil {
		return nil, err
	}
	store, err := openStore()
	if err != nil {
		return nil, err
	}
	window, err := backtest.ParseWindow(f.from, f.to)
	if err != nil {
		return nil, usage(err)
	}
	s := &session{flags: f, store: store, window: window, cache: backtest.NewCache(1 << 30), strategy: strategy}
	required, err := sandboxRequired()
	if err != nil {
		return nil, usage(err)
	}
	s.sandbox = f.sandbox || required
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
	py, err := engine.FindPython(ctx, f.python)
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
	if s.flags.data == "" {
		data = backtest.Sample()
	} else {
		d, err := s.cache.Load(s.flags.data)
		if err != nil {
			return nil, usage(err)
		}
		data = d
	}
	opts := backtest.Options{Cash: s.flags.cash, FeeBps: s.flags.fee, SlippageBps: s.flags.slip, AllowShort: s.flags.allowShort}
	d, err := backtest.NewDriver(data, s.window, opts)
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
		Params:   s.flags.params,
		Home:     s.store.Home(),
		Limits:   engine.DefaultLimits(),
		Sandbox:  s.sandbox,
		Version:  version,
		Host:     s.host,
	}, d)
}

// resolveStrategy picks the strategy file: the argument, ./strategy.py, or
// the bundled example written to a workspace folder (kept across runs, so
// edits survive). It returns the path and the workspace folder, if used.
func resolveStrategy(arg string) (path, workspace string, err error) {
	if arg != "" {
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

// stopSignals delivers SIGINT, SIGTERM and SIGHUP (the terminal closed),
// which are stop requests, until the returned function is called.
func stopSignals() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	return ch, func() { signal.Stop(ch) }
}

// signalExit maps the signal that stopped a run to its exit code: DESIGN
// §4's 130 and 143, and 129 (128 + 1) for SIGHUP.
func signalExit(sg os.Signal) error {
	switch sg {
	case syscall.SIGTERM:
		return &exitError{code: exitSIGTERM}
	case syscall.SIGHUP:
		return &exitError{code: exitSIGHUP}
	}
	return &exitError{code: exitSIGINT}
}

// headlessOptions are the --ci outputs.
func headlessOptions(output string, signals <-chan os.Signal) headless.Options {
	return headless.Options{Output: output, Stdout: os.Stdout, Stderr: os.Stderr, Progress: progressWriter(), Signals: signals}
}

func runCI(ctx context.Context, f runFlags, strategyArg string) error {
	strategy, _, err := resolveStrategy(strategyArg)
	if err != nil {
		return usage(err)
	}
	if _, err := os.Stat(strategy); err != nil && !f.watch {
		return usage(fmt.Errorf("strategy: %w", err))
	}
	s, err := newSession(ctx, f, strategy)
	if err != nil {
		return err
	}
	signals, stop := stopSignals()
	defer stop()
	if f.watch {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		w, err := watch.New(s.strategy, watch.Options{Poll: f.poll})
		if err != nil {
			return usage(err)
		}
		go w.Run(ctx)
		if sg := headless.Watch(ctx, w.Changes(), s.strategy, s.start, headlessOptions(f.output, signals)); sg != nil {
			return signalExit(sg)
		}
		return nil
	}
	rep, sg, err := headless.Once(ctx, s.start, headlessOptions(f.output, signals))
	switch {
	case err != nil:
		return asExit(err)
	case sg != nil:
		return signalExit(sg)
	case rep.Status != engine.StatusPassed:
		return &exitError{code: exitFailed}
	}
	return nil
}

// checkOutput refuses an --output value that is not one of allowed.
func checkOutput(output string, allowed ...string) error {
	for _, a := range allowed {
		if output == a {
			return nil
		}
	}
	return usage(fmt.Errorf("--output %q: want %s", output, strings.Join(allowed, " or ")))
}

// progressWriter returns stderr when it is a terminal: progress never goes
// to a pipe or a file.
func progressWriter() io.Writer {
	if term.IsTerminal(os.Stderr.Fd()) {
		return os.Stderr
	}
	return nil
}

// asExit maps engine errors to exit codes: usage errors are 2.
func asExit(err error) error {
	var ue *engine.UsageError
	if errors.As(err, &ue) {
		return usage(err)
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{code: exitFailed, err: err}
}

func runTUI(ctx context.Context, f runFlags, strategyArg string) error {
	if f.theme != "" && f.theme != "auto" {
		if _, err := themes.Named(f.theme); err != nil {
			return usage(err)
		}
	}
	strategy, workspace, err := resolveStrategy(strategyArg)
	if err != nil {
		return usage(err)
	}
	s, err := newSession(ctx, f, strategy)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := watch.New(strategy, watch.Options{Poll: f.poll})
	if err != nil {
		return usage(err)
	}
	go w.Run(ctx)
	var jobs startedJobs
	err = ui.Run(ctx, ui.Options{
		Strategy:  strategy,
		Workspace: workspace,
		Theme:     f.theme,
		Sandbox:   s.sandbox,
		Start: func(ctx context.Context) (ui.RunHandle, error) {
			job, err := s.start(ctx)
			if err != nil {
				return nil, err
			}
			jobs.add(job)
			return job, nil
		},
		Changes: w.Changes(),
		Store:   s.store,
		Editor:  os.Getenv("EDITOR"),
	})
	// Every job's final report is on disk before stratbench exits.
	jobs.wait()
	var ie *ui.InterruptedError
	if errors.As(err, &ie) {
		return signalExit(ie.Signal)
	}
	return err
}

// startedJobs are the workbench's unfinished jobs, waited for before
// stratbench exits.
type startedJobs struct {
	mu   sync.Mutex
	jobs []*engine.Job
}

func (s *startedJobs) add(j *engine.Job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	live := s.jobs[:0]
	for _, old := range s.jobs {
		select {
		case <-old.Done():
		default:
			live = append(live, old)
		}
	}
	s.jobs = append(live, j)
}

func (s *startedJobs) wait() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.jobs {
		<-j.Done()
	}
}

func newJobsCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "List past jobs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "text", "json"); err != nil {
				return err
			}
			store, err := openStore()
			if err != nil {
				return err
			}
			reports, err := store.List()
			if err != nil {
				return err
			}
			return headless.WriteJobs(os.Stdout, reports, output)
		},
	}
	cmd.Flags().StringVar(&output, "output", "text", "text or json")
	return cmd
}

func newStatusCommand() *cobra.Command {
	var output, diff string
	cmd := &cobra.Command{
		Use:               "status JOB_ID [--output json] [--diff JOB_ID]",
		Short:             "Show a job's report, or what differs between two jobs",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeJobs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "text", "json"); err != nil {
				return err
			}
			if diff != "" && output != "text" {
				return usage(errors.New("--diff prints text only"))
			}
			store, err := openStore()
			if err != nil {
				return err
			}
			rep, err := store.Load(args[0])
			if err != nil {
				return usage(err)
			}
			if diff != "" {
				other, err := store.Load(diff)
				if err != nil {
					return usage(err)
				}
				return headless.WriteDiff(os.Stdout, rep, other)
			}
			return headless.WriteReport(os.Stdout, rep, output)
		},
	}
	cmd.Flags().StringVar(&output, "output", "text", "text or json")
	cmd.Flags().StringVar(&diff, "diff", "", "compare with another job")
	cmd.RegisterFlagCompletionFunc("diff", completeJobs)
	return cmd
}

func newLogsCommand() *cobra.Command {
	var output string
	var follow bool
	cmd := &cobra.Command{
		Use:               "logs JOB_ID [--follow] [--output jsonl]",
		Short:             "Print a job's log",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeJobs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "text", "jsonl"); err != nil {
				return err
			}
			store, err := openStore()
			if err != nil {
				return err
			}
			// Like tail -f: a signal ends the following, with its exit code.
			signals, stop := stopSignals()
			defer stop()
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			var got os.Signal
			done := make(chan struct{})
			go func() {
				defer close(done)
				select {
				case got = <-signals:
					cancel()
				case <-ctx.Done():
				}
			}()
			err = store.Logs(ctx, args[0], follow, func(l engine.LogLine) error {
				return headless.WriteLogLine(os.Stdout, l, output)
			})
			cancel()
			<-done // got is settled
			if errors.Is(err, engine.ErrUnknownJob) {
				return usage(err)
			}
			if err == nil && got != nil {
				return signalExit(got)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&output, "output", "text", "text or jsonl")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing while the job runs")
	return cmd
}

// Precheck limits (DESIGN §6).
const (
	precheckWindow = 24 * time.Hour
	precheckEvents = 1000
)

func newPrecheckCommand() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "precheck STRATEGY --from T --to T [--param k=v] [--data PATH] [--output json]",
		Short: "Run a short sandboxed backtest and record a pass",
		Long: `precheck runs STRATEGY in the sandbox over a window of at most 24 hours and
1,000 events, and records a pass under $STRATBENCH_HOME/prechecks/, keyed by the
script's content, the exact --param arguments and the stratbench version. An
unchanged script with the same params is not checked again.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(f.output, "text", "json"); err != nil {
				return err
			}
			return runPrecheck(cmd.Context(), f, args[0])
		},
	}
	addMarketFlags(cmd.Flags(), &f)
	cmd.Flags().StringVar(&f.python, "python", "", "Python interpreter")
	cmd.Flags().StringVar(&f.output, "output", "text", "text or json")
	return cmd
}

func runPrecheck(ctx context.Context, f runFlags, strategy string) error {
	if f.from == "" || f.to == "" {
		return usage(errors.New("precheck needs --from and --to"))
	}
	window, err := backtest.ParseWindow(f.from, f.to)
	if err != nil {
		return usage(err)
	}
	if span := window.To.Sub(window.From); span > precheckWindow {
		return usage(fmt.Errorf("precheck window %s → %s is %s; the limit is 24 hours", f.from, f.to, span))
	}
	source, err := os.ReadFile(strategy)
	if err != nil {
		return usage(fmt.Errorf("strategy: %w", err))
	}
	f.sandbox = true
	s, err := newSession(ctx, f, strategy)
	if err != nil {
		return err
	}
	d, err := s.driver()
	if err != nil {
		return err
	}
	setup := d.Setup()
	if n := setup.Data.Events; n > precheckEvents {
		return usage(fmt.Errorf("precheck window has %d events; the limit is 1,000 (narrow --from/--to)", n))
	}
	key := engine.PrecheckKey(source, f.params, version)
	if rec, err := s.store.LoadPrecheck(key); err != nil {
		return err
	} else if rec != nil {
		return headless.WritePrecheck(os.Stdout, engine.PrecheckResult{Status: engine.PrecheckAlready, Record: rec}, f.output)
	}
	signals, stop := stopSignals()
	defer stop()
	// The report is printed below, with the precheck's verdict.
	opts := headlessOptions(f.output, signals)
	opts.Stdout = io.Discard
	rep, sg, err := headless.Once(ctx, s.start, opts)
	if err != nil {
		return asExit(err)
	}
	res, err := s.store.RecordPrecheck(key, f.params, version, setup.Data, rep)
	if err != nil {
		return err
	}
	if err := headless.WritePrecheck(os.Stdout, res, f.output); err != nil {
		return err
	}
	if sg != nil {
		return signalExit(sg)
	}
	if res.Status == engine.PrecheckFailed {
		return &exitError{code: exitFailed}
	}
	return nil
}

func openStore() (*engine.Store, error) {
	home, err := engine.DefaultHome()
	if err != nil {
		return nil, err
	}
	store, err := engine.OpenStore(home)
	if err != nil {
		return nil, err
	}
	if _, err := store.Recover(); err != nil {
		fmt.Fprintln(os.Stderr, "stratbench: warning:", err)
	}
	return store, nil
}

func completeJobs(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	store, err := openStore()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return store.Complete(prefix), cobra.ShellCompDirectiveNoFileComp
}

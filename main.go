// Command stratbench is a terminal workbench for Python trading strategies:
// it re-runs a backtest on every save of strategy.py, with the strategy's hooks
// in a supervised Python worker under fixed runtime limits. --ci runs the same
// thing headless. See README.md and docs/ARCHITECTURE.md.
//
// main only wires: it builds the command tree and hands each command's
// options to the app package, which does the work and whose error becomes
// the exit code.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"stratbench/app"
	"stratbench/internal/termtext"
	"stratbench/sandbox"
	"stratbench/supervisor"
)

func main() {
	// The binary is also the supervisor's init of a process tree and the
	// sandbox's launcher: each returns at once unless started as such.
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

// run executes the command line and returns the exit code.
func run(args []string) int {
	root := newRootCommand()
	root.SetArgs(args)
	code, err := app.ExitCode(root.Execute())
	if err != nil {
		fmt.Fprintln(os.Stderr, "stratbench:", termtext.Text(err.Error()))
	}
	return code
}

func newRootCommand() *cobra.Command {
	o := app.DefaultRunOptions()
	var ci bool
	root := &cobra.Command{
		Use:   "stratbench [flags] [STRATEGY]",
		Short: "A terminal workbench for Python trading strategies",
		Long: `stratbench re-runs a backtest of STRATEGY (default ./strategy.py, or a bundled
example when there is none) every time you save it, with the strategy's hooks in
a supervised Python worker under fixed runtime limits. --ci runs it once,
headless, and prints the report.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				// Before any flag's check: `stratbench sweps --output json`
				// is a mistyped command, not a workbench with --output.
				if err := app.CommandTypo(args[0], cmd.SuggestionsFor(args[0])); err != nil {
					return err
				}
			}
			args, _ = app.SplitReportArg(args, o.Report)
			return cobra.MaximumNArgs(1)(cmd, args)
		},
		Version:       app.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, o.Report = app.SplitReportArg(args, o.Report)
			if len(args) == 1 {
				o.Strategy = args[0]
				o.Suggest = cmd.SuggestionsFor(args[0])
			}
			o.OutputSet = cmd.Flags().Changed("output")
			if ci {
				return app.CI(cmd.Context(), o)
			}
			return app.Workbench(cmd.Context(), o)
		},
	}
	// A mistyped command ("stauts") reaches RunE as a STRATEGY argument;
	// app refuses it with these suggestions.
	root.SuggestionsMinimumDistance = 2
	fl := root.Flags()
	fl.BoolVar(&ci, "ci", false, "run once headless and print the report (exit 0 passed, 1 failed, 2 bad input)")
	fl.BoolVar(&o.Watch, "watch", false, "with --ci: re-run on every save, one report per run")
	addMarketFlags(fl, &o)
	fl.StringVar(&o.Python, "python", "", "Python interpreter (default $STRATBENCH_PYTHON, $VIRTUAL_ENV/bin/python, python3)")
	fl.BoolVar(&o.Sandbox, "sandbox", false, "run the strategy in the sandbox (no network, files, processes or threads)")
	fl.StringVar(&o.Output, "output", "text", "report format with --ci: text or json")
	fl.StringVar(&o.Report, "report", "", "with --ci: also write the job's HTML report, to PATH (--report=PATH) or report.html in the job's folder")
	fl.Lookup("report").NoOptDefVal = app.ReportInJobFolder
	addViewFlags(root, &o, "the workbench")

	root.AddCommand(newJobsCommand(), newStatusCommand(), newLogsCommand(), newPrecheckCommand())
	root.AddCommand(newSweepCommand(), newSweepsCommand(), newPruneCommand(), newKeepCommand())
	root.AddCommand(newReportCommand(), newMonteCarloCommand(), newCheckCommand())
	root.AddCommand(newRayShardCommand())
	root.AddCommand(newDataCommand())
	// Flag typos get suggestions, and flag values their completions.
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		// The arguments parsed before the flag: `stratbench sweeep s.py
		// --grid …` is a mistyped command, and --grid is that command's.
		if typed := cmd.Flags().Args(); cmd == root && len(typed) > 0 {
			if typo := app.CommandTypo(typed[0], root.SuggestionsFor(typed[0])); typo != nil {
				return typo
			}
		}
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		return app.FlagError(err, names)
	})
	root.RegisterFlagCompletionFunc("output", fixedCompletions("text", "json"))
	for _, c := range root.Commands() {
		if f := c.Flags().Lookup("output"); f != nil {
			c.RegisterFlagCompletionFunc("output", fixedCompletions(outputValues(c.Name())...))
		}
		if c.Flags().Lookup("status") != nil {
			c.RegisterFlagCompletionFunc("status", fixedCompletions("passed", "failed", "stopped", "running"))
		}
	}
	return root
}

// fixedCompletions completes a flag's value from a fixed list.
func fixedCompletions(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// outputValues are the --output values of a command.
func outputValues(command string) []string {
	if command == "logs" {
		return []string{"text", "jsonl"}
	}
	return []string{"text", "json"}
}

// addMarketFlags adds the flags of the data and the market.
func addMarketFlags(fl interface {
	StringVar(*string, string, string, string)
	StringArrayVar(*[]string, string, []string, string)
	Float64Var(*float64, string, float64, string)
	BoolVar(*bool, string, bool, string)
}, o *app.RunOptions) {
	fl.StringArrayVar(&o.Data, "data", nil, "bar data: a CSV, JSON Lines or Parquet file, or a folder of them (repeatable; default: the bundled synthetic sample)")
	fl.StringVar(&o.From, "from", "", `first bar time, "2026-09-30 12:00:00" or RFC 3339, UTC`)
	fl.StringVar(&o.To, "to", "", "last bar time (inclusive; a bare date, 2026-09-30, is the end of that day)")
	fl.StringVar(&o.Timeframe, "timeframe", "", "which timeframe of freqtrade's data files (BTC_USDT-1m.feather, …-5m…) a folder stands for: 1m, 5m, 1h…")
	fl.StringArrayVar(&o.Params, "param", nil, "strategy param override k=v (repeatable)")
	fl.Float64Var(&o.Cash, "cash", o.Cash, "starting cash")
	fl.Float64Var(&o.FeeBps, "fee-bps", o.FeeBps, "fee per fill, in basis points of the notional")
	fl.Float64Var(&o.SlippageBps, "slippage-bps", o.SlippageBps, "market order slippage, in basis points")
	fl.BoolVar(&o.AllowShort, "allow-short", o.AllowShort, "allow sells larger than the position")
}

func newJobsCommand() *cobra.Command {
	o := app.JobsOptions{Streams: app.StdStreams()}
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "List past jobs, newest first",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return app.Jobs(o) },
	}
	cmd.Flags().StringVar(&o.Output, "output", "text", "text or json")
	cmd.Flags().StringVar(&o.Sweep, "sweep", "", "list the runs of this sweep (sweep runs are hidden otherwise)")
	cmd.RegisterFlagCompletionFunc("sweep", completeSweeps)
	cmd.Flags().BoolVar(&o.All, "all", false, "list sweep runs too")
	cmd.Flags().IntVarP(&o.Limit, "limit", "n", 0, "list at most N jobs, the newest (0: all)")
	cmd.Flags().StringVar(&o.Status, "status", "", "only jobs of this status: passed, failed, stopped or running")
	cmd.Flags().StringVar(&o.Strategy, "strategy", "", "only jobs whose strategy file name contains this")
	return cmd
}

func newStatusCommand() *cobra.Command {
	o := app.StatusOptions{Streams: app.StdStreams()}
	cmd := &cobra.Command{
		Use:               "status JOB_ID|SWEEP_ID [--output json] [--diff JOB_ID]",
		Short:             "Show a job's report or a sweep's summary, or what differs between two jobs",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeJobsAndSweeps,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			return app.Status(o)
		},
	}
	cmd.Flags().StringVar(&o.Output, "output", "text", "text or json")
	cmd.Flags().StringVar(&o.Diff, "diff", "", "compare with another job: a row per input, param and metric that differs (text or json)")
	cmd.RegisterFlagCompletionFunc("diff", completeJobs)
	return cmd
}

func newLogsCommand() *cobra.Command {
	o := app.LogsOptions{Streams: app.StdStreams()}
	cmd := &cobra.Command{
		Use:               "logs JOB_ID [--follow] [--output jsonl]",
		Short:             "Print a job's log",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeJobs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			return app.Logs(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Output, "output", "text", "text or jsonl")
	cmd.Flags().BoolVarP(&o.Follow, "follow", "f", false, "keep printing while the job runs")
	return cmd
}

func newPrecheckCommand() *cobra.Command {
	o := app.DefaultRunOptions()
	cmd := &cobra.Command{
		Use:   "precheck STRATEGY --from T --to T [--param k=v] [--data PATH] [--output json]",
		Short: "Run a short sandboxed backtest and record a pass",
		Long: `precheck runs STRATEGY in the sandbox over a window of at most 24 hours and
1,000 events, and records a pass under $STRATBENCH_HOME/prechecks/, keyed by the
script's content, the exact --param arguments and the stratbench version. An
unchanged script with the same params is not checked again.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Strategy = args[0]
			return app.Precheck(cmd.Context(), o)
		},
	}
	addMarketFlags(cmd.Flags(), &o)
	cmd.Flags().StringVar(&o.Python, "python", "", "Python interpreter")
	cmd.Flags().StringVar(&o.Output, "output", "text", "text or json")
	return cmd
}

// completeJobs completes job ids; it only reads the store.
func completeJobs(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	return app.Complete(prefix, true, false), cobra.ShellCompDirectiveNoFileComp
}

// completeSweeps completes sweep ids; it only reads the store.
func completeSweeps(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	return app.Complete(prefix, false, true), cobra.ShellCompDirectiveNoFileComp
}

// completeJobsAndSweeps completes the ids `status` takes: jobs, then
// sweeps.
func completeJobsAndSweeps(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	return app.Complete(prefix, true, true), cobra.ShellCompDirectiveNoFileComp
}

func newReportCommand() *cobra.Command {
	o := app.ReportOptions{Streams: app.StdStreams()}
	cmd := &cobra.Command{
		Use:   "report JOB_ID|SWEEP_ID [--out PATH] [--open]",
		Short: "Write the HTML report of a job, a sweep or a walk-forward",
		Long: `report writes one self-contained HTML file (no request leaves it) with the
report of a job, a sweep or a walk-forward, to report.html in its folder unless
--out names another path (a regular file or a new one; - for standard output),
and prints the path.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeJobsAndSweeps,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			return app.Report(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Out, "out", "", "write the report to this path (a regular file or a new one), or - for standard output")
	cmd.Flags().BoolVar(&o.Open, "open", false, "open the report with $BROWSER or xdg-open")
	return cmd
}

// newMonteCarloCommand is `stratbench montecarlo` (app/montecarlo.go).
func newMonteCarloCommand() *cobra.Command {
	o := app.MonteCarloOptions{Streams: app.StdStreams()}
	cmd := &cobra.Command{
		Use:   "montecarlo JOB_ID [--runs N] [--seed S] [--method trades|bootstrap|blocks]",
		Short: "Resample a job's trades or returns: percentiles of return, drawdown and Sharpe",
		Long: `montecarlo draws --runs paths from one job's returns: its closed trades in
random orders (trades), drawn with replacement (bootstrap), or its per-bar
returns in blocks (blocks, the stationary bootstrap), and prints the 5th to
95th percentiles of the total return, the maximum drawdown and the Sharpe
ratio over the paths, and the probability of a loss. The same --seed gives
the same numbers. The result is kept in the job's folder (montecarlo.json),
where the job's report draws the paths.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeJobs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			o.RunsSet = cmd.Flags().Changed("runs")
			return app.MonteCarlo(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&o.Runs, "runs", 1000, "paths to draw (1 to 1,000,000)")
	fl.Uint64Var(&o.Seed, "seed", 0, "the generator's seed")
	fl.StringVar(&o.Method, "method", "trades", "trades (reshuffle the closed trades), bootstrap (draw them with replacement) or blocks (the per-bar returns, stationary bootstrap)")
	fl.StringVar(&o.Output, "output", "text", "text or json")
	cmd.RegisterFlagCompletionFunc("method", fixedCompletions("trades", "bootstrap", "blocks"))
	return cmd
}

// newCheckCommand is `stratbench check` (app/check.go).
func newCheckCommand() *cobra.Command {
	o := app.DefaultRunOptions()
	cmd := &cobra.Command{
		Use:   "check STRATEGY [run flags]",
		Short: "Look for look-ahead, a warm-up longer than the MANIFEST's history, and runs that are not deterministic",
		Long: `check replays STRATEGY's run in ways that must not change its decisions and
names the first event where they do: replays whose data (and data files, for a
strategy that reads them itself) ends right after chosen events (look-ahead),
replays from later starts (warm-up, path dependence), and the same run twice,
cold and from a warm template (determinism). Exit 0 when it found nothing, 1
when it found something, 2 for bad usage.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Strategy = args[0]
			return app.Check(cmd.Context(), o)
		},
	}
	addMarketFlags(cmd.Flags(), &o)
	cmd.Flags().StringVar(&o.Python, "python", "", "Python interpreter")
	cmd.Flags().BoolVar(&o.Sandbox, "sandbox", false, "run the strategy in the sandbox")
	cmd.Flags().StringVar(&o.Output, "output", "text", "text or json")
	return cmd
}

// Sweeps: `sweep`, `sweeps` and `prune` (app/sweep*.go).

func newSweepCommand() *cobra.Command {
	o := app.SweepOptions{RunOptions: app.DefaultRunOptions()}
	cmd := &cobra.Command{
		Use:   "sweep STRATEGY --grid NAME=V1,V2,... [--grid NAME=LO:HI:STEP] [flags] | sweep --resume SWEEP_ID | sweep view [SWEEP_ID]",
		Short: "Run a strategy over a grid of params (and walk-forward), each run an ordinary job",
		Long: `sweep runs STRATEGY once per combination of the --grid values (the last --grid
varies fastest), each run an ordinary supervised job on one of --jobs slots, and
ranks the runs by --metric. Results are appended to
$STRATBENCH_HOME/sweeps/SWEEP_ID/results.jsonl as runs end; --resume runs what
has no result. Exit 0 every run passed, 1 some run failed, 2 bad spec or input,
130/143/129 stopped by a signal, 141 the output's reader went away (resumable).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			args, o.Report = app.SplitReportArg(args, o.Report)
			if len(args) == 1 {
				o.Strategy = args[0]
			}
			o.RandomSet = cmd.Flags().Changed("random")
			o.ResumeSet = cmd.Flags().Changed("resume")
			o.SeedSet = cmd.Flags().Changed("seed")
			return app.Sweep(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	addMarketFlags(fl, &o.RunOptions)
	fl.StringVar(&o.Python, "python", "", "Python interpreter (default $STRATBENCH_PYTHON, $VIRTUAL_ENV/bin/python, python3)")
	fl.BoolVar(&o.Sandbox, "sandbox", false, "run the strategy in the sandbox")
	fl.StringArrayVar(&o.Grid, "grid", nil, "swept param: NAME=V1,V2,... or NAME=LO:HI:STEP (inclusive; repeatable, the last varies fastest)")
	fl.Int64Var(&o.Random, "random", 0, "run N combinations sampled from those the constraint keeps")
	fl.Int64Var(&o.Seed, "seed", 0, "the seed of --random")
	fl.StringVar(&o.Constraint, "constraint", "", "keep combinations where this expression holds, e.g. 'fast < slow'")
	fl.StringVar(&o.Metric, "metric", "", "objective: a key of the report's metrics (default sharpe)")
	fl.BoolVar(&o.Minimize, "minimize", false, "rank lower values of --metric first")
	fl.IntVar(&o.Jobs, "jobs", 0, "concurrent runs (default: this machine's CPU count; with --executor ray, the cluster's CPUs)")
	fl.StringVar(&o.WalkForward, "walk-forward", "", "train=DUR,test=DUR[,step=DUR][,anchored] (30m, 12h, 5d, 2w)")
	fl.StringVar(&o.Executor, "executor", "local", "where the runs run: local or ray")
	fl.StringVar(&o.RayAddress, "ray-address", "", "the Ray dashboard's address, http://HOST:8265 (with --executor ray; default $STRATBENCH_RAY_ADDRESS)")
	fl.StringVar(&o.Resume, "resume", "", "resume sweep SWEEP_ID: run only what has no result")
	cmd.RegisterFlagCompletionFunc("resume", completeSweeps)
	fl.BoolVar(&o.CI, "ci", false, "headless: print the runs and the summary")
	fl.StringVar(&o.Output, "output", "text", "with --ci: text, json (the sweep document) or jsonl (one line per run, then a summary)")
	addViewFlags(cmd, &o.RunOptions, "the sweep view")
	cmd.AddCommand(newSweepViewCommand())
	return cmd
}

// newSweepViewCommand is `sweep view`: the sweep view on a sweep of the
// store, finished or running (cobra tells `sweep view ID` from `sweep
// STRATEGY`: a subcommand's name goes first).
func newSweepViewCommand() *cobra.Command {
	o := app.SweepViewOptions{Streams: app.StdStreams()}
	cmd := &cobra.Command{
		Use:   "view [SWEEP_ID]",
		Short: "Open the sweep view on a past or running sweep (without an id: choose from the list)",
		Long: `view opens the sweep view on a sweep of $STRATBENCH_HOME, finished or not: a
finished sweep as it ended, a running one (in another stratbench) live. It only
watches: q quits and leaves a running sweep running. SWEEP_ID may be a prefix
of one id. Without it, view lists the sweeps, newest first: enter opens one,
esc in the view comes back to the list.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeSweeps,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.ID = args[0]
			}
			return app.SweepView(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Theme, "theme", "", fmt.Sprintf("the sweep view's theme: %s (default: follow the terminal)", strings.Join(app.ThemeNames(), ", ")))
	cmd.RegisterFlagCompletionFunc("theme", fixedCompletions(append([]string{"auto"}, app.ThemeNames()...)...))
	return cmd
}

// addViewFlags adds to cmd the flags of the terminal view it opens (view:
// the workbench, the sweep view): the theme it starts with, and how it
// watches the strategy.
func addViewFlags(cmd *cobra.Command, o *app.RunOptions, view string) {
	fl := cmd.Flags()
	fl.StringVar(&o.Theme, "theme", "", fmt.Sprintf("%s's theme: %s (default: follow the terminal)", view, strings.Join(app.ThemeNames(), ", ")))
	fl.BoolVar(&o.Poll, "poll", false, view+" watches the strategy by polling instead of file events (network file systems)")
	cmd.RegisterFlagCompletionFunc("theme", fixedCompletions(append([]string{"auto"}, app.ThemeNames()...)...))
}

func newSweepsCommand() *cobra.Command {
	o := app.SweepsOptions{Streams: app.StdStreams()}
	cmd := &cobra.Command{
		Use:   "sweeps [--output json]",
		Short: "List past sweeps, newest first",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return app.Sweeps(o) },
	}
	cmd.Flags().StringVar(&o.Output, "output", "text", "text or json")
	return cmd
}

func newPruneCommand() *cobra.Command {
	o := app.PruneOptions{Streams: app.StdStreams(), In: os.Stdin}
	cmd := &cobra.Command{
		Use:   "prune [--older-than DUR] [--keep N] [--sweep ID] [--dry-run] [--yes]",
		Short: "Remove finished jobs and sweeps (never a running or kept one)",
		Long: `prune removes finished jobs and sweeps: never a running one, a job marked with
stratbench keep, or a stopped sweep that can be resumed. At a terminal it asks
before removing anything; elsewhere it removes only with --yes (without it,
it says what it would remove and exits 2). --dry-run lists what would go.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.KeepSet = cmd.Flags().Changed("keep")
			return app.Prune(o)
		},
	}
	cmd.Flags().StringVar(&o.OlderThan, "older-than", "", "only what finished longer ago than this (30m, 12h, 5d, 2w)")
	cmd.Flags().IntVar(&o.Keep, "keep", 0, "keep the N most recent jobs (of their own) and the N most recent sweeps")
	cmd.Flags().StringVar(&o.Sweep, "sweep", "", "only this sweep and its runs' jobs")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "list what would be removed; remove nothing")
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "remove without asking")
	cmd.RegisterFlagCompletionFunc("sweep", completeSweeps)
	return cmd
}

// newKeepCommand is `stratbench keep`: marks jobs that retention and
// prune leave.
func newKeepCommand() *cobra.Command {
	o := app.KeepOptions{Streams: app.StdStreams()}
	cmd := &cobra.Command{
		Use:   "keep [JOB_ID...] [--undo]",
		Short: "Mark jobs to keep: the home's retention budget and prune leave them",
		Long: `keep marks jobs so that the home's retention budget (STRATBENCH_KEEP) and prune
never remove them; --undo removes the mark. Without a job it lists the marked jobs.`,
		ValidArgsFunction: completeJobs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.IDs = args
			return app.Keep(o)
		},
	}
	cmd.Flags().BoolVar(&o.Undo, "undo", false, "remove the mark")
	return cmd
}

// newDataCommand is `stratbench data`: what stratbench reads of bar data,
// and a conversion to one Parquet file.
func newDataCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "data info|convert PATH...",
		Short: "Describe bar data, or convert it to one sorted Parquet file",
		Args:  cobra.NoArgs,
	}
	addFlags := func(c *cobra.Command, o *app.DataOptions) {
		fl := c.Flags()
		fl.StringVar(&o.From, "from", "", `first bar time, "2026-09-30 12:00:00" or RFC 3339, UTC`)
		fl.StringVar(&o.To, "to", "", "last bar time (inclusive; a bare date, 2026-09-30, is the end of that day)")
		fl.StringVar(&o.Timeframe, "timeframe", "", "which timeframe of freqtrade's data files a folder stands for: 1m, 5m, 1h…")
		fl.StringVar(&o.Output, "output", "text", "text or json")
		c.RegisterFlagCompletionFunc("output", fixedCompletions("text", "json"))
	}
	info := app.DataOptions{Streams: app.StdStreams()}
	infoCmd := &cobra.Command{
		Use:   "info PATH... [--from T] [--to T] [--timeframe TF] [--output json]",
		Short: "Per symbol: bars, first and last time, interval, gaps, format, size; and the data's fingerprint",
		Long: `info reads the bar data at PATH (files and folders, as --data takes them) as a
run would, checking it, and prints per symbol its bars, first and last time,
the most common interval between bars, the gaps (longer intervals), its
files' formats and size; per file its format and layout; and the data's
fingerprint: the digest a run's fingerprint hashes (and a sweep records as
its data's) for the same data and window.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			info.Paths = args
			return app.DataInfo(cmd.Context(), info)
		},
	}
	addFlags(infoCmd, &info)
	conv := app.DataOptions{Streams: app.StdStreams()}
	convCmd := &cobra.Command{
		Use:   "convert PATH... --out FILE.parquet [--from T] [--to T] [--timeframe TF] [--output json]",
		Short: "Write the bars of PATH to one Parquet file, sorted by time, for fast --from/--to",
		Long: `convert reads the bar data at PATH (any data --data reads) as a run would,
checking it, and writes its bars inside the window to FILE.parquet sorted by
time then symbol: zstd, row groups of 65,536 rows with statistics, so that a
run with --from and --to reads only the row groups it needs. FILE.parquet is
replaced whole or not at all, and may not be one of the inputs.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			conv.Paths = args
			return app.DataConvert(cmd.Context(), conv)
		},
	}
	addFlags(convCmd, &conv)
	convCmd.Flags().StringVar(&conv.Out, "out", "", "the Parquet file to write")
	cmd.AddCommand(infoCmd, convCmd)
	return cmd
}

// newRayShardCommand is the node side of a sweep on a Ray cluster (hidden:
// the cluster starts it, people do not).
func newRayShardCommand() *cobra.Command {
	o := app.RayShardOptions{Stdin: os.Stdin, Streams: app.StdStreams()}
	cmd := &cobra.Command{
		Use:    "ray-shard --config JSON",
		Short:  "Run a Ray sweep's items on this node (started by the cluster)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE:   func(cmd *cobra.Command, args []string) error { return app.RayShard(cmd.Context(), o) },
	}
	cmd.Flags().StringVar(&o.Config, "config", "", "the shard's configuration (JSON)")
	return cmd
}

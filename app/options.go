package app

import (
	"fmt"
	"io"
	"strings"

	"stratbench/backtest"
	"stratbench/themes"
	"stratbench/ui/components"
	"stratbench/watch"
)

// Streams are where a command writes.
type Streams struct {
	Stdout io.Writer // reports and listings
	Stderr io.Writer // notices and errors
	// Progress receives the progress line of a --ci run (bars done, bars/s,
	// ETA); nil keeps it quiet. It is stderr only when stderr is a
	// terminal: progress never goes to a pipe or a file.
	Progress io.Writer
}

// StdStreams returns the process's standard streams
// (components.StdOutput).
func StdStreams() Streams {
	var s Streams
	s.Stdout, s.Stderr, s.Progress = components.StdOutput()
	return s
}

// RunOptions are the options of a backtest run: the workbench, --ci (with
// --watch) and precheck. Every field is a command-line flag of the same
// name (docs/commands.md).
type RunOptions struct {
	// Strategy is the STRATEGY argument: a path, or "" for ./strategy.py
	// (the workbench falls back to the bundled example in a workspace
	// folder when there is none; --ci refuses "").
	Strategy string
	Watch    bool // --ci --watch: one report per save
	Poll     bool // watch the strategy by polling (network file systems)

	Data      []string // --data: bar data files and folders (repeatable); none for the bundled sample
	From, To  string   // the replay window, both ends inclusive; "" for open
	Timeframe string   // --timeframe: which of freqtrade's timeframes a data folder stands for
	Params    []string // --param k=v, in the order given

	Cash, FeeBps, SlippageBps float64
	AllowShort                bool

	Python  string // interpreter; "" for $STRATBENCH_PYTHON, $VIRTUAL_ENV, python3
	Sandbox bool   // run the worker in the sandbox (STRATBENCH_PYTHON_SANDBOX=required forces it)

	Output string // report format: "text" or "json"
	// Report is --ci --report: where to write the job's HTML report
	// (ReportInJobFolder for report.html in the job's folder); "" for none.
	Report    string
	OutputSet bool   // --output was given (it goes with --ci only)
	Theme     string // the workbench's theme; "" or "auto" follows the terminal

	// Suggest are the commands whose names are close to the STRATEGY
	// argument (main fills it from the command tree): a STRATEGY that is
	// no .py file and has suggestions is a mistyped command.
	Suggest []string

	// recorded is set when the run flags are those a sweep's document
	// records (a resume's): refusals name its fields (run_flags.from), not
	// flags the user did not give.
	recorded bool

	Streams
}

// DefaultRunOptions returns the flags' defaults: the market's (100,000
// cash, no fees, no slippage, no short selling) and text output.
func DefaultRunOptions() RunOptions {
	m := backtest.DefaultOptions()
	return RunOptions{Cash: m.Cash, FeeBps: m.FeeBps, SlippageBps: m.SlippageBps, AllowShort: m.AllowShort,
		Output: "text", Streams: StdStreams()}
}

// market returns the market options of o.
func (o RunOptions) market() backtest.Options {
	return backtest.Options{Cash: o.Cash, FeeBps: o.FeeBps, SlippageBps: o.SlippageBps, AllowShort: o.AllowShort}
}

// flagNames is how the refusals of o's run flags name them.
func (o RunOptions) flagNames() runFlagNames {
	if o.recorded {
		return recordedFlags
	}
	return commandFlags
}

// watchOptions are what a watching command watches: the strategy, the
// Python modules next to it (an imported helpers.py re-runs as the
// strategy does) and the data files.
func (o RunOptions) watchOptions() watch.Options {
	return watch.Options{Poll: o.Poll, Modules: true, Inputs: o.Data}
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

// ThemeNames lists the themes --theme takes besides "auto" (follow the
// terminal), the default first.
func ThemeNames() []string { return themes.Names() }

// checkTheme refuses a --theme that names no theme; "" and "auto" follow
// the terminal.
func checkTheme(name string) error {
	if name == "" || name == "auto" {
		return nil
	}
	if _, err := themes.Named(name); err != nil {
		return usage(err)
	}
	return nil
}

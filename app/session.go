package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"stratbench/engine"
	"stratbench/internal/signals"
	"stratbench/job"
	"stratbench/prune"
	"stratbench/session"
)

// newSession opens the session of strategy's runs with o's flags
// (package session); warm starts the runs' template while the data loads
// (session.Config.Warm), for the commands that run the strategy again at
// every save.
func newSession(ctx context.Context, o RunOptions, strategy string, warm bool) (*session.Session, error) {
	return newSessionWith(ctx, o, strategy, warm, nil)
}

// openSession opens the session for strategy (newSession, with warm)
// under a new signal policy, listening from before the setup
// (signals.Policy.Setup: a stop signal while the interpreter is probed or
// the data loads ends the command with 128 + n, no job made). The caller
// closes both, the session first; on an error there is neither to close.
func openSession(ctx context.Context, o RunOptions, strategy string, warm bool) (*session.Session, *signals.Policy, error) {
	signals := listenSignals()
	var s *session.Session
	err := signals.Setup(ctx, func(ctx context.Context) (err error) {
		s, err = newSession(ctx, o, strategy, warm)
		return err
	})
	if err != nil {
		if s != nil {
			s.Close()
		}
		signals.Close()
		return nil, nil, err
	}
	return s, signals, nil
}

// newSessionWith is newSession that also hands beforeProbe to session.Open:
// what needs only the interpreter starts while it is probed. The
// command's policies are session.OpenUnder's; the store it opens is
// openStore's, under the home's budget (keepBudget).
func newSessionWith(ctx context.Context, o RunOptions, strategy string, warm bool, beforeProbe func(ctx context.Context, s *session.Session, py *engine.Interpreter)) (*session.Session, error) {
	var store *job.Store
	var keep job.Budget
	openStore := func() (st *job.Store, err error) {
		if store, err = openStore(o.Stderr); err == nil {
			keep, err = keepBudget()
		}
		return store, err
	}
	s, err := session.OpenUnder(ctx, session.Config{Strategy: strategy, Python: o.Python, Params: o.Params,
		Sandbox: o.Sandbox, Version: Version, Data: o.Data, Market: o.market(),
		Ended: func(id string) { prune.Retain(store, keep, id) }, // the home's budget, once each run has ended
		Input: o.flagNames().input, Warm: warm}, session.Window{From: o.From, To: o.To, Timeframe: o.Timeframe}, openStore, beforeProbe)
	var pe *session.PythonError
	var ce *session.PolicyError
	switch {
	case errors.As(err, &pe):
		return nil, usage(pe.Err)
	case errors.As(err, &ce):
		return nil, usage(ce.Err)
	}
	return s, err
}

// resolveStrategy picks the strategy file: the argument, or
// session.DefaultStrategy. It returns the path and the workspace folder,
// if used.
func resolveStrategy(arg string, suggest []string) (path, workspace string, err error) {
	if arg != "" {
		if err := checkStrategyArg(arg, suggest); err != nil {
			return "", "", err
		}
		return arg, "", nil
	}
	return session.DefaultStrategy(job.DefaultHome)
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
	return fmt.Errorf("STRATEGY %q is not a Python file (.py); the commands are jobs, status, logs, report, precheck, sweep, sweeps, prune, keep, montecarlo, check and data (stratbench --help)", arg)
}

// CommandTypo is the error for a first argument that is neither a command
// nor a strategy but close to a command's name (suggest: "swep" → sweep),
// when the command line goes on with arguments or flags of that command
// (`stratbench swep strategy.py --grid …`): the parser would otherwise
// say "accepts at most 1 arg(s)" or "unknown flag: --grid". It returns nil
// when arg is no such typo.
func CommandTypo(arg string, suggest []string) error {
	if len(suggest) == 0 || strings.HasSuffix(arg, ".py") {
		return nil
	}
	return usage(checkStrategyArg(arg, suggest))
}

func quoted(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strconv.Quote(v)
	}
	return out
}

// openStore opens STRATBENCH_HOME and cleans up after a stratbench that was
// killed while running jobs (engine.Recover): every command that
// reads or runs jobs starts that way. What recovery could not do is a
// warning on stderr.
func openStore(stderr io.Writer) (*job.Store, error) {
	home, err := job.DefaultHome()
	if err != nil {
		return nil, err
	}
	store, err := job.OpenStore(home)
	if err != nil {
		return nil, err
	}
	if _, err := engine.Recover(store); err != nil {
		fmt.Fprintln(stderr, "stratbench: warning:", err)
	}
	return store, nil
}

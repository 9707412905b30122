package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/x/term"

	"stratbench/engine"
	"stratbench/job"
	"stratbench/python"
	"stratbench/ui/components"
	"stratbench/ui/workbench"
	"stratbench/watch"
)

// Workbench runs the workbench on the terminal: a run of the strategy at
// start and on every save, until the user quits (nil) or a signal stops it
// (128 + n, once the run in flight stopped and its job is saved).
func Workbench(ctx context.Context, o RunOptions) error {
	if err := checkOutput(o.Output, "text", "json"); err != nil {
		return err
	}
	if o.OutputSet || o.Watch || o.Report != "" {
		return usage(errors.New("--output, --watch and --report go with --ci"))
	}
	if err := checkTheme(o.Theme); err != nil {
		return err
	}
	example := false
	if o.Strategy == "" && hasTerminal() && term.IsTerminal(os.Stdin.Fd()) {
		// First launch in an empty folder: offer the example here, where
		// the user will look for it, rather than in the state folder.
		if path, err := offerExample(".", os.Stdin, o.Stderr); err != nil {
			return err
		} else if path != "" {
			o.Strategy, example = path, true
		}
	}
	strategy, workspace, err := resolveStrategy(o.Strategy, o.Suggest)
	if err != nil {
		return usage(err)
	}
	if !hasTerminal() {
		return usage(fmt.Errorf("the workbench needs a terminal, and there is none here: run it headless with --ci (stratbench --ci %s)", strategy))
	}
	if _, err := os.Stat(strategy); err != nil {
		// A mistyped STRATEGY: say so, offer the nearest .py file, and
		// wait for the file only when asked to.
		interactive := term.IsTerminal(os.Stdin.Fd())
		if strategy, err = missingStrategy(strategy, err, interactive, os.Stdin, o.Stderr); err != nil {
			return err
		}
	}
	// A signal before the workbench opens ends it there (128 + n, no job).
	s, signals, err := openSession(ctx, o, strategy)
	if err != nil {
		return err
	}
	defer signals.Close()
	defer s.Close()
	s.KeepWarm()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := watch.New(strategy, o.watchOptions())
	if err != nil {
		return usage(err)
	}
	go w.Run(ctx)

	// The signal policy, as the workbench takes it: the first signal stops
	// the run in flight and quits once it has ended (as q does), a second
	// quits at once (as a second q does; the run is killed).
	interrupts := make(chan components.Interrupt, 2)
	defer signals.Serve(func() { send(interrupts, components.InterruptStop) }, func() { send(interrupts, components.InterruptKill) })()

	err = workbench.Run(ctx, workbench.Options{
		Strategy:  strategy,
		Workspace: workspace,
		Example:   example,
		Theme:     o.Theme,
		Sandbox:   s.Sandbox(),
		Start: func(ctx context.Context, breaks []job.Breakpoint) (workbench.RunHandle, error) {
			job, err := s.StartWith(ctx, &engine.Debug{Breakpoints: breaks})
			if err != nil {
				return nil, err
			}
			return job, nil
		},
		Changes: s.RefreshOn(ctx, w.Changes()),
		Store:   s.Store(),
		Editor:  editorSetting(os.Getenv),
		Opener:  opener(),
		Report: func(ctx context.Context, id string) (string, error) {
			return writeJobReport(ctx, s.Store(), id, "")
		},
		Interrupts: interrupts,
	})
	// Every job's final report is on disk before stratbench exits.
	s.Wait()
	if err != nil {
		return err
	}
	return signals.Exit()
}

// offerExample asks, in a folder that is empty, whether to write the
// bundled example there as strategy.py, and does when the answer is yes
// (or empty). It returns the path written, or "" when it asked nothing or
// the answer was no.
func offerExample(dir string, in io.Reader, out io.Writer) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) > 0 {
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil
	}
	fmt.Fprintf(out, "No strategy here. Write the example strategy to %s? [Y/n] ", filepath.Join(abs, "strategy.py"))
	answer, _ := bufio.NewReader(in).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "", "y", "yes":
	default:
		return "", nil
	}
	path := filepath.Join(dir, "strategy.py")
	if err := os.WriteFile(path, python.ExampleStrategy(), 0o644); err != nil {
		return "", fmt.Errorf("write the example strategy: %w", err)
	}
	return path, nil
}

// missingStrategy answers a STRATEGY that cannot be read (statErr): at a
// terminal (interactive) it says there is no such file and asks whether
// to open the nearest .py file of its folder instead, to wait for the file
// to be created, or to quit, and returns the path to open; elsewhere, and
// on quit, it is bad usage naming the nearest file.
func missingStrategy(path string, statErr error, interactive bool, in io.Reader, out io.Writer) (string, error) {
	refusal := usage(noStrategyFile(path, statErr))
	if !errors.Is(statErr, fs.ErrNotExist) || !interactive {
		return "", refusal
	}
	near := nearestPy(path)
	if near != "" {
		fmt.Fprintf(out, "No strategy %s here. Open %s instead [o], create %s and wait for its first save [c], or quit [q]? [O/c/q] ",
			path, near, path)
	} else {
		fmt.Fprintf(out, "No strategy %s here. Create it and wait for its first save [c], or quit [q]? [c/Q] ", path)
	}
	answer, _ := bufio.NewReader(in).ReadString('\n')
	switch a := strings.ToLower(strings.TrimSpace(answer)); {
	case near != "" && (a == "" || a == "o" || a == "open" || a == "y" || a == "yes"):
		return near, nil
	case a == "c" || a == "create":
		return path, nil
	}
	return "", refusal
}

// editorSetting is the editor e opens: STRATBENCH_EDITOR (a template with
// {file} and {line}), then $VISUAL, then $EDITOR, as terminal tools take
// them.
func editorSetting(getenv func(string) string) string {
	for _, name := range []string{"STRATBENCH_EDITOR", "VISUAL", "EDITOR"} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
	}
	return ""
}

// send delivers i unless the workbench no longer reads: it has quit.
func send(ch chan<- components.Interrupt, i components.Interrupt) {
	select {
	case ch <- i:
	default:
	}
}

// opener is the command that opens an artifact: $STRATBENCH_OPEN, else
// xdg-open when it is installed, else none.
func opener() string {
	if o := os.Getenv("STRATBENCH_OPEN"); o != "" {
		return o
	}
	if path, err := exec.LookPath("xdg-open"); err == nil {
		return path
	}
	return ""
}

package workbench

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/vt"

	"stratbench/job"
	"stratbench/themes"
	"stratbench/ui/components"
)

// screenWriter feeds the program's output to a terminal emulator. The
// renderer relies on the tty's ONLCR when its input is not a tty, so bare
// newlines become CR LF here, as a tty would make them. vt.SafeEmulator
// does not lock String, hence a lock of our own.
type screenWriter struct {
	mu  *sync.Mutex
	emu *vt.Emulator
}

func (w screenWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.emu.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n"))); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w screenWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.emu.String()
}

// vtSession is the real program on an 80×24 emulated terminal.
type vtSession struct {
	t          *testing.T
	screen     screenWriter
	keys       *os.File
	run        *fakeRun
	done       chan error
	cancel     context.CancelFunc
	interrupts chan components.Interrupt
}

func startVT(t *testing.T, set ...func(*Options)) *vtSession {
	t.Helper()
	dir := t.TempDir()
	strategy := filepath.Join(dir, "strategy.py")
	if err := os.WriteFile(strategy, []byte("pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	emu := vt.NewEmulator(80, 24)
	// The emulator answers the renderer's terminal queries on its input
	// pipe, which blocks until read: drain it until the test ends.
	go io.Copy(io.Discard, emu)
	t.Cleanup(func() { emu.InputPipe().(*io.PipeWriter).Close() })

	s := &vtSession{t: t, screen: screenWriter{&sync.Mutex{}, emu}, run: newFakeRun(testJob, 64),
		done: make(chan error, 1), interrupts: make(chan components.Interrupt, 1)}
	opts := Options{Strategy: strategy, Start: func(context.Context, []job.Breakpoint) (RunHandle, error) { return s.run, nil }}
	for _, f := range set {
		f(&opts)
	}
	// The keys come through a pipe of the system's, as a terminal's
	// descriptor: a program the workbench hands the terminal to (an
	// opener) gets it as its standard input, with no copying in between.
	keysR, keysW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keysR.Close() })
	s.keys = keysW
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	runCtx, stopRuns := context.WithCancel(context.Background())
	t.Cleanup(stopRuns)
	m := newModel(runCtx, opts, themes.Plain(), false)
	go func() {
		s.done <- runProgram(ctx, s.interrupts, m, tea.WithInput(keysR), tea.WithOutput(s.screen),
			tea.WithWindowSize(80, 24), tea.WithColorProfile(colorprofile.Ascii), tea.WithoutSignalHandler(), tea.WithFPS(components.FPS))
	}()
	t.Cleanup(func() {
		cancel()
		keysW.Close()
	})
	return s
}

// waitFor waits until the screen shows every one of texts.
func (s *vtSession) waitFor(texts ...string) {
	s.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		scr := s.screen.String()
		missing := ""
		for _, want := range texts {
			if !strings.Contains(scr, want) {
				missing = want
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never showed %q:\n%s", missing, scr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *vtSession) press(keys string) {
	s.t.Helper()
	if _, err := io.WriteString(s.keys, keys); err != nil {
		s.t.Fatal(err)
	}
}

func (s *vtSession) wait() error {
	s.t.Helper()
	select {
	case err := <-s.done:
		return err
	case <-time.After(10 * time.Second):
		s.t.Fatal("the program did not end")
		return nil
	}
}

// TestScreen drives the real program on an emulated 80×24 terminal: a run
// streams, keys switch panes, the run passes, q quits.
func TestScreen(t *testing.T) {
	s := startVT(t)
	for _, ev := range runningEvents(testJob) {
		s.run.ch <- ev
	}
	s.waitFor("● RUNNING", "job "+testJob, "[3 Logs]", "bar 1030 BUY 10 @ 104.50", "25%")
	s.press("2")
	s.waitFor("[2 Procs]", "python3 -I bridge.py strategy.py")
	s.run.ch <- job.Finished{JobID: testJob, Report: passedReport(testJob), Equity: equityCurve(100)}
	close(s.run.ch)
	s.waitFor("✓ PASSED", "return 4.12 %")
	s.press("5")
	s.waitFor("[5 Results]", "equity curve (100 points)", "final_equity")
	s.press("?")
	s.waitFor("Keys · ? or esc closes")
	s.press("q")
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
}

// TestScreenInterruptStopsRun delivers a stop request (app's answer to a
// first signal) mid-run: the run is asked to stop, and the program ends
// when the stream does. (app's signal policy maps the signal to the exit
// code: TestSignalPolicy.)
func TestScreenInterruptStopsRun(t *testing.T) {
	s := startVT(t)
	for _, ev := range runningEvents(testJob) {
		s.run.ch <- ev
	}
	s.waitFor("● RUNNING")
	s.interrupts <- components.InterruptStop
	s.waitFor("■ STOPPING", "then the workbench quits")
	if s.run.stops() != 1 {
		t.Fatalf("the run got %d stop requests", s.run.stops())
	}
	rep := passedReport(testJob)
	rep.Status = job.StatusStopped
	s.run.ch <- job.Finished{JobID: testJob, Report: rep}
	close(s.run.ch)
	if err := s.wait(); err != nil {
		t.Fatalf("Run returned %v after a stop request, want nil", err)
	}
}

// TestScreenContextEnds cancels Run's context mid-run: the same graceful
// stop, and Run returns the context's error.
func TestScreenContextEnds(t *testing.T) {
	s := startVT(t)
	s.run.ch <- jobStarted(testJob)
	s.waitFor("● RUNNING")
	s.cancel()
	s.waitFor("■ STOPPING")
	close(s.run.ch)
	if err := s.wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
}

// TestScreenKillQuits: the kill request (app's answer to a second signal)
// does not wait for the run.
func TestScreenKillQuits(t *testing.T) {
	s := startVT(t)
	s.run.ch <- jobStarted(testJob)
	s.waitFor("● RUNNING")
	s.interrupts <- components.InterruptStop
	s.waitFor("■ STOPPING")
	s.interrupts <- components.InterruptKill
	if err := s.wait(); err != nil {
		t.Fatalf("Run returned %v", err)
	}
	if s.run.stops() < 1 {
		t.Error("the run was never asked to stop")
	}
}

// TestScreenInterruptEndsTheOpener: an opener that never ends and ignores
// SIGINT and SIGTERM (o opened the report with it) does not keep the
// workbench from a stop request (app's answer to a signal): while the
// opener has the terminal the program takes no message, so the request
// ends the opener first, and then the program quits.
func TestScreenInterruptEndsTheOpener(t *testing.T) {
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	opener := filepath.Join(dir, "opener")
	script := "#!/bin/sh\ntrap '' INT TERM HUP\necho $$ > " + started + ".tmp\nmv " + started + ".tmp " + started + "\nexec sleep 3600\n"
	if err := os.WriteFile(opener, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startVT(t, func(o *Options) {
		o.Opener = opener
		o.Report = func(_ context.Context, id string) (string, error) { return filepath.Join(dir, id, "report.html"), nil }
	})
	s.run.ch <- jobStarted(testJob)
	s.run.ch <- job.Finished{JobID: testJob, Report: passedReport(testJob)}
	close(s.run.ch)
	s.waitFor("PASSED")
	s.press("o")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(started); err == nil {
			// Whatever the outcome, the opener does not outlive the test.
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the opener never started:\n%s", s.screen.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.interrupts <- components.InterruptStop
	if err := s.wait(); err != nil {
		t.Fatalf("Run returned %v", err)
	}
}

package e2e

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"stratbench/internal/e2etest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestStopSignalDuringTheProbe: a stop signal while a command sets up
// (here: the interpreter probe, an interpreter that never answers) ends
// it with 128 + n, the probe killed, no job started. Without the signal
// policy over the setup stratbench dies of the signal (a parent sees
// "signal: interrupt", not exit 130) and the probe is left running.
func TestStopSignalDuringTheProbe(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		terminal bool // the workbench needs one
	}{
		{name: "ci", args: []string{"--ci"}},
		{name: "ci-watch", args: []string{"--ci", "--watch"}},
		{name: "precheck", args: []string{"precheck", "--from", "2026-01-05 00:00:00", "--to", "2026-01-05 01:00:00"}},
		{name: "workbench", terminal: true},
		{name: "sweep", args: []string{"sweep", "--ci", "--grid", "threshold=1,2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			// The hung interpreter: it says which process it is, on a
			// FIFO the test reads (its write is the event the test waits
			// for), then never answers the probe.
			dir := t.TempDir()
			fifo := filepath.Join(dir, "probe.pid")
			if err := unix.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			python := filepath.Join(dir, "python3")
			script := fmt.Sprintf("#!/bin/sh\necho $$ > '%s'\nexec sleep 600\n", fifo)
			if err := os.WriteFile(python, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			probed := make(chan int, 1)
			go func() {
				// Opens when the probe opens it, and reads to its close.
				b, _ := os.ReadFile(fifo)
				pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				probed <- pid
			}()
			t.Cleanup(func() {
				// A probe that never came: the reader's open returns.
				if w, err := os.OpenFile(fifo, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
			})
			args := append(tc.args, "--python", python)
			if tc.name == "precheck" || tc.name == "sweep" {
				args = append(args[:1], append([]string{e2etest.Strategy("ok_counter.py")}, args[1:]...)...)
			} else {
				args = append(args, e2etest.Strategy("ok_counter.py"))
			}
			cmd := e.Command(args...)
			if tc.terminal {
				pty := openTerminal(t)
				cmd.Stdin, cmd.Stdout, cmd.Stderr = pty, pty, pty
			}
			e.Launch(cmd)
			probe := 0
			t.Cleanup(func() {
				if probe > 0 {
					syscall.Kill(probe, syscall.SIGKILL) // a probe stratbench left
				}
			})
			select {
			case probe = <-probed:
			case <-time.After(30 * time.Second):
				t.Fatal("the interpreter was not probed within 30s")
			}
			if probe <= 0 {
				t.Fatal("the probe did not say which process it is")
			}
			cmd.Process.Signal(syscall.SIGINT)
			if code := e.ExitCode(cmd.Wait()); code != 130 {
				t.Fatalf("exit %d (%v), want 130", code, cmd.ProcessState)
			}
			if n := e.FolderEntries("jobs") + e.FolderEntries("sweeps"); n != 0 {
				t.Errorf("%d job or sweep folders after a stop during the probe", n)
			}
			e.assertNoLeftovers([]int{probe}, "")
		})
	}
}

// openTerminal opens a pseudo-terminal and returns its terminal side; what
// is written to it is read and dropped until the test ends.
func openTerminal(t *testing.T) *os.File {
	t.Helper()
	terminal, master := openPTY(t)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		io.Copy(io.Discard, master) // ends with EIO once the terminal side is closed everywhere
	}()
	t.Cleanup(func() {
		terminal.Close()
		master.Close()
		<-drained
	})
	return terminal
}

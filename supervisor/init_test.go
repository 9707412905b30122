package supervisor

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/supervisor/internal/procfs"
)

// TestInitEndsWhenStratbenchGoes: the init ends, and its program with it,
// when its control socket says that stratbench is gone, even where no
// parent-death signal fires (here none was set).
func TestInitEndsWhenStratbenchGoes(t *testing.T) {
	forEachTracking(t, func(t *testing.T, want TreeTracking) {
		ctl, initCtl, err := controlSocket()
		if err != nil {
			t.Fatal(err)
		}
		defer ctl.Close()
		args := initArgs(3, want)
		cmd := exec.Command("/proc/self/exe", args[1:]...)
		cmd.ExtraFiles = []*os.File{initCtl}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if want == TrackingPIDNamespace {
			nsAttempts(os.Geteuid(), os.Getegid())[0].attr(cmd.SysProcAttr)
		}
		if err := cmd.Start(); err != nil {
			if nsRefused(err) {
				t.Skipf("namespaces refused here: %v", err)
			}
			t.Fatal(err)
		}
		initCtl.Close()
		exited := make(chan struct{})
		go func() {
			cmd.Wait()
			close(exited)
		}()
		defer func() {
			cmd.Process.Kill()
			<-exited
		}()

		b, err := json.Marshal(initConfig{Path: "/bin/sleep", Argv: []string{"sleep", "300"}, Env: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ctl.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(ctl).ReadString('\n')
		var m initMessage
		if err != nil || json.Unmarshal([]byte(line), &m) != nil || m.Started <= 0 {
			t.Fatalf("the init said %q, %v; want the program's pid", line, err)
		}
		if _, err := ctl.Write([]byte{'\n'}); err != nil {
			t.Fatal(err)
		}
		child := onlyChild(t, cmd.Process.Pid)
		childFD, err := unix.PidfdOpen(child, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(childFD)

		ctl.Close() // stratbench is gone
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Fatal("the init outlived the end of its control socket by 10 s")
		}
		if exited, err := pidfdWait(uintptr(childFD), 10*time.Second); !exited || err != nil {
			t.Fatalf("the program outlived its init by 10 s (poll: %v)", err)
		}
	})
}

// onlyChild returns the one child of pid.
func onlyChild(t *testing.T, pid int) int {
	t.Helper()
	r := procfs.NewReader()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		p, err := r.Open(pid)
		if err != nil {
			t.Fatal(err)
		}
		st, err := p.Status(r)
		var kids []int
		if err == nil {
			kids, err = p.Children(r, st.Threads, nil)
		}
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(kids) == 1 {
			return kids[0]
		}
	}
	t.Fatalf("%d has not exactly one child", pid)
	return 0
}

// TestStopSignalsReachTheProgram: SIGTERM, SIGINT and SIGHUP sent to the
// init reach the program; other signals are ignored and do not end the
// init (a Go program dies of SIGUSR1 unless it handles it).
func TestStopSignalsReachTheProgram(t *testing.T) {
	// sigwait, not handlers: CPython runs a handler only between
	// bytecodes, so a signal that lands between print and the call
	// that sleeps would wait for the sleep to end.
	const program = `import os, signal
wanted = {signal.SIGTERM, signal.SIGUSR1}
signal.pthread_sigmask(signal.SIG_BLOCK, wanted)
print("ready", flush=True)
while True:
    sig = signal.sigwait(wanted)
    os.write(1, b"got %s\n" % signal.Signals(sig).name.encode())
    if sig == signal.SIGTERM:
        os._exit(7)
`
	forEachTracking(t, func(t *testing.T, want TreeTracking) {
		h := newHost(t)
		c := newCollector()
		p := startIn(t, h, Spec{Path: python(t), Args: []string{"-c", program}, Env: []string{}, Output: c.output}, want)
		c.waitFor(t, "ready")
		initID := identify(t, p.initPID)
		if err := unix.Kill(p.initPID, unix.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		if err := unix.Kill(p.initPID, unix.SIGTERM); err != nil {
			t.Fatal(err)
		}
		res := waitDone(t, p, 30*time.Second)
		if res.ExitCode != 7 || res.Killed || res.InitLost {
			t.Fatalf("result %+v, want exit 7 from the program, on SIGTERM; lines %v", res, c.snapshot())
		}
		c.waitFor(t, "got SIGTERM")
		for _, l := range c.snapshot() {
			if strings.Contains(l.Text, "SIGUSR1") {
				t.Errorf("SIGUSR1 was forwarded: %q", l.Text)
			}
		}
		if alive(initID) {
			t.Error("the init outlived its tree")
		}
	})
}

// FuzzInitConfig: the init refuses a config it cannot run, whatever the
// bytes, and never panics.
func FuzzInitConfig(f *testing.F) {
	f.Add([]byte(`{"path":"/bin/true","argv":["true"],"env":[],"files":2}`))
	f.Add([]byte(`{"path":"/bin/true","argv":[],"files":-1}`))
	f.Add([]byte(`{"path":"/bin/true","argv":["true"],"private_tmp_bytes":1048576,"tmp_mounts":[{"path":"/tmp/a/../../etc","writable":true}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := parseInitConfig(b)
		if err != nil {
			return
		}
		if cfg.Path == "" || len(cfg.Argv) == 0 || cfg.Files < 0 || cfg.FileSizeBytes < 0 || cfg.PrivateTmpBytes < 0 {
			t.Fatalf("accepted %q as %+v", b, cfg)
		}
		for _, m := range cfg.TmpMounts {
			// A kept path is attached where the host has it: only below
			// the private /tmp, never over the rest of the tree's view.
			if cfg.PrivateTmpBytes == 0 || m.Path != filepath.Clean(m.Path) || !strings.HasPrefix(m.Path, "/tmp/") {
				t.Fatalf("accepted %q as %+v", b, cfg)
			}
		}
	})
}

// TestInitSurvivesSignalsFromInside: the program sends its init every
// signal. In a PID namespace the init lives on whatever it gets: the kernel
// drops SIGKILL, SIGSTOP and the signals left at their default action for
// the namespace's init. In the fallback those (SIGKILL, the stop signals,
// 32 and 34 and up) are the hole TestFallbackInitKilledFromInside
// documents, and are not sent; the init survives the rest.
func TestInitSurvivesSignalsFromInside(t *testing.T) {
	const program = `import os, signal, sys
forwarded = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
signal.pthread_sigmask(signal.SIG_BLOCK, forwarded)  # sigwait below: no race with a handler
skip = () if sys.argv[1] == "pidns" else (signal.SIGKILL, signal.SIGSTOP, signal.SIGTSTP, signal.SIGTTIN,
                                          signal.SIGTTOU, 32, *range(34, signal.SIGRTMAX + 1))
for n in range(1, signal.SIGRTMAX + 1):
    if n not in skip:
        os.kill(os.getppid(), n)
back = set()
while back != forwarded:
    back.add(signal.sigwait(forwarded))  # the init forwards them
print("sent", flush=True)
while True:
    signal.pause()
`
	forEachTracking(t, func(t *testing.T, want TreeTracking) {
		h := newHost(t)
		c := newCollector()
		p := startIn(t, h, Spec{Path: python(t), Args: []string{"-c", program, want.String()}, Env: []string{}, Output: c.output}, want)
		initID := identify(t, p.initPID)
		// The init handled the signals it forwarded back; a fatal one
		// would have ended it by the next sample.
		sent := c.waitFor(t, "sent")
		waitSample(t, p, func(s Sample) bool { return s.Time.After(sent.Time) })
		select {
		case <-p.Done():
			t.Fatalf("the tree ended: %+v, lines %v", p.Wait(), c.snapshot())
		default:
		}
		if !alive(initID) {
			t.Fatal("the init died of a signal from its program")
		}
		p.Kill()
		if res := p.Wait(); res.InitLost || !res.Killed {
			t.Errorf("result %+v, want killed by Kill with the init's report", res)
		}
	})
}

// TestProgramStartsWithDefaultSignals: the init handles signals, but the
// program starts with every signal at its default: none ignored, none
// blocked, whatever stratbench itself was started with (under nohup it
// ignores SIGHUP; an ignored signal would survive execve into the worker).
func TestProgramStartsWithDefaultSignals(t *testing.T) {
	args := []string{"-E", "^Sig(Ign|Blk):", "/proc/self/status"}
	const defaults = "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000"
	forEachTracking(t, func(t *testing.T, want TreeTracking) {
		h := newHost(t)
		c := newCollector()
		p := startIn(t, h, Spec{Path: "/bin/grep", Args: args, Env: []string{}, Output: c.output}, want)
		waitDone(t, p, 30*time.Second)
		var got []string
		for _, l := range c.snapshot() {
			got = append(got, l.Text)
		}
		if strings.Join(got, "\n") != defaults {
			t.Errorf("under the init:\n%s\nwant every signal at its default:\n%s", strings.Join(got, "\n"), defaults)
		}
	})
}

package supervisor

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
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
		cmd := exec.Command("/proc/self/exe", initArg, "3")
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

		b, err := json.Marshal(initConfig{Tracking: want, Path: "/bin/sleep", Argv: []string{"sleep", "300"}, Env: []string{}})
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
		fds := []unix.PollFd{{Fd: int32(childFD), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, 10_000); n != 1 || err != nil {
			t.Fatalf("the program outlived its init by 10 s (poll: %d, %v)", n, err)
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
	const program = `import signal, sys, time
def stop(sig, frame):
    print("got", signal.Signals(sig).name, flush=True)
    sys.exit(7)
signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGUSR1, lambda *a: print("got SIGUSR1", flush=True))
print("ready", flush=True)
time.sleep(60)
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
			t.Fatalf("result %+v, want exit 7 from the program's SIGTERM handler", res)
		}
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
	f.Add([]byte(`{"tracking":1,"path":"/bin/true","argv":["true"],"env":[],"files":2}`))
	f.Add([]byte(`{"tracking":3,"path":"/bin/true","argv":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := parseInitConfig(b)
		if err != nil {
			return
		}
		if cfg.Path == "" || len(cfg.Argv) == 0 || cfg.Files < 0 || cfg.FileSizeBytes < 0 || cfg.PrivateTmpBytes < 0 ||
			cfg.Tracking != TrackingPIDNamespace && cfg.Tracking != TrackingFallback {
			t.Fatalf("accepted %q as %+v", b, cfg)
		}
	})
}

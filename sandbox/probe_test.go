//go:build linux && amd64

package sandbox

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	pybridge "stratbench/python"
)

// probeResult is one line of testdata/probe.py.
type probeResult struct {
	Action    string `json:"action"`
	OK        bool   `json:"ok"`
	Error     string `json:"error"`
	Errno     int    `json:"errno"`
	FDs       []int  `json:"fds"`
	Effective uint64 `json:"effective"`
	Limit     []int  `json:"limit"`
}

// probeEnv is what the probe attacks: listeners, a secret home, a victim
// process, a descriptor leaked without close-on-exec, a secret variable.
type probeEnv struct {
	py         string
	policy     Policy
	script     string
	cfg        string
	strayFD    int
	secretEnv  string
	privateTmp string
}

const probeSecretEnv = "STRATBENCH_PROBE_SECRET"

func newProbeEnv(t *testing.T) *probeEnv {
	t.Helper()
	base := t.TempDir()
	dir := func(name string) string {
		d := filepath.Join(base, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	scriptDir, artifacts, privateTmp, home := dir("strategy"), dir("artifacts"), dir("tmp"), dir("home")
	src, err := os.ReadFile(filepath.Join("testdata", "probe.py"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(scriptDir, "probe.py")
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_test"), []byte("SECRET KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	tcp := listen(t, "tcp", "127.0.0.1:0")
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	unixPath := filepath.Join(base, "sock")
	listen(t, "unix", unixPath)
	abstract := fmt.Sprintf("stratbench-probe-%d", os.Getpid())
	listen(t, "unix", "@"+abstract)

	victim := exec.Command("sleep", "600")
	if err := victim.Start(); err != nil {
		t.Fatalf("start victim: %v", err)
	}
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })

	// A descriptor without close-on-exec, as stratbench may inherit one
	// from its own parent: os/exec passes it on to every child.
	stray, err := unix.Open(filepath.Join(base, "stray"), unix.O_RDWR|unix.O_CREAT, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(stray) })

	t.Setenv(probeSecretEnv, "hunter2")

	// The probe puts the exec filter in force with the bridge's own function.
	bridge, err := pybridge.InstallBridge(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	py, p := pythonPolicy(t, []string{scriptDir, filepath.Dir(bridge)}, []string{artifacts, privateTmp}, map[string]string{"TMPDIR": privateTmp})
	p.KeepFDs = 6
	loader, err := Interpreter(py)
	if err != nil || loader == "" {
		t.Fatalf("the interpreter's loader: %q, %v", loader, err)
	}

	cfg, err := json.Marshal(map[string]any{
		"tcp_port":      tcp.Addr().(*net.TCPAddr).Port,
		"udp_port":      udp.LocalAddr().(*net.UDPAddr).Port,
		"unix_path":     unixPath,
		"unix_abstract": abstract,
		"home":          home,
		"artifacts":     artifacts,
		"victim_pid":    victim.Process.Pid,
		"secret_env":    probeSecretEnv,
		"bridge":        bridge,
		"loader":        loader,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &probeEnv{py: py, policy: p, script: script, cfg: string(cfg), strayFD: stray, secretEnv: probeSecretEnv, privateTmp: privateTmp}
}

// listen opens a listener that accepts and closes connections until the
// test ends.
func listen(t *testing.T, network, addr string) net.Listener {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatalf("listen %s %s: %v", network, addr, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close(); <-done })
	return l
}

// run runs the probe, sandboxed or not, and returns its results by action.
// Both runs inherit this process's environment (with the secret) and get
// the same protocol descriptors: two pipes and, like the host's state page,
// a memory file of one page as fds 3, 4 and 5.
func (e *probeEnv) run(t *testing.T, sandboxed bool) map[string]probeResult {
	t.Helper()
	toWorker, hostEnd := pipe(t)
	fromWorker, workerEnd := pipe(t)
	memfd, err := unix.MemfdCreate("probe-page", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	page := os.NewFile(uintptr(memfd), "probe-page")
	defer page.Close()
	if err := page.Truncate(4096); err != nil {
		t.Fatal(err)
	}
	if _, err := page.WriteString("page!"); err != nil {
		t.Fatal(err)
	}
	if _, err := hostEnd.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	hostEnd.Close()

	args := []string{"-I", "-B", e.script, e.cfg}
	env := append(os.Environ(), "TMPDIR="+e.privateTmp)
	cmd := exec.Command(e.py, args...)
	if sandboxed {
		path, execArgs, err := Command(e.policy, e.py, args)
		if err != nil {
			t.Fatalf("Command: %v", err)
		}
		cmd = exec.Command(path, execArgs...)
	}
	// fromWorker's write end must be closed here for ReadAll to end.
	type reply struct {
		b   []byte
		err error
	}
	replies := make(chan reply, 1)
	go func() {
		b, err := io.ReadAll(fromWorker)
		replies <- reply{b, err}
	}()
	stdout, stderr, code := run(t, cmd, env, []*os.File{toWorker, workerEnd, page})
	toWorker.Close()
	workerEnd.Close()
	r := <-replies
	if r.err != nil {
		t.Fatalf("read worker pipe: %v", r.err)
	}
	if got := string(r.b); got != "pong:ping" {
		t.Errorf("sandboxed=%v: protocol pipe reply %q, want %q", sandboxed, got, "pong:ping")
	}
	if code != 0 {
		t.Fatalf("sandboxed=%v: probe exited %d; stderr:\n%s", sandboxed, code, stderr)
	}
	results := map[string]probeResult{}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var r probeResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("sandboxed=%v: probe line %q: %v", sandboxed, sc.Text(), err)
		}
		results[r.Action] = r
	}
	return results
}

func pipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// Forbidden actions: refused in the sandbox with the given error type, and
// allowed without it. Where the host may refuse an action by its own policy
// (Yama, io_uring or user-namespace sysctls, container profiles), the
// baseline is only logged.
// A non-zero errno must be the error's too: EPERM tells seccomp's refusal
// from Landlock's EACCES.
var forbiddenActions = []struct {
	action        string
	sandboxError  string
	hostDependent bool
	errno         unix.Errno
}{
	{"tcp_connect", "PermissionError", false, 0},
	{"tcp_bind", "PermissionError", false, 0},
	{"udp_send", "PermissionError", false, 0},
	{"unix_path_connect", "PermissionError", false, 0},
	{"unix_abstract_connect", "PermissionError", false, 0},
	{"socketpair", "PermissionError", false, 0},
	{"read_etc_passwd", "PermissionError", false, 0},
	{"list_root", "PermissionError", false, 0},
	{"list_home", "PermissionError", false, 0},
	{"read_home_secret", "PermissionError", false, 0},
	{"chmod_home_secret", "PermissionError", false, 0},
	{"write_script_dir", "PermissionError", false, 0},
	{"write_tmp", "PermissionError", false, 0},
	{"fork", "PermissionError", false, 0},
	{"subprocess", "PermissionError", false, 0},
	{"thread", "RuntimeError", false, 0},
	{"concurrent_futures", "RuntimeError", false, 0},
	{"secret_env", "LookupError", false, 0},
	{"alloc_700mib", "MemoryError", false, 0},
	{"kill_parent", "PermissionError", false, 0},
	{"read_parent_environ", "PermissionError", false, 0},
	{"renice_parent", "PermissionError", false, 0},
	{"prlimit_parent", "PermissionError", false, 0},
	{"shmget", "PermissionError", false, 0},
	{"memfd_create", "PermissionError", false, unix.EPERM},
	{"open_2200_files", "OSError", true, unix.EMFILE},
	{"inotify_watch_home", "PermissionError", false, unix.EPERM},
	{"exec_loader", "PermissionError", false, unix.EPERM},
	{"exec_memfd", "PermissionError", false, unix.EPERM},
	{"execveat_empty_path", "PermissionError", false, unix.EPERM},
	{"posix_spawn", "PermissionError", false, unix.EPERM},
	{"execv", "PermissionError", false, unix.EPERM},
	{"ptrace_victim", "PermissionError", true, 0},
	{"mq_open", "PermissionError", true, 0},
	{"io_uring_setup", "PermissionError", true, 0},
	{"keyctl", "PermissionError", true, 0},
	{"unshare", "PermissionError", true, 0},
}

// Allowed actions work in both runs.
var allowedActions = []string{
	"write_artifacts", "private_tmp", "read_script", "list_script_dir", "dev_null", "imports",
	"ctypes_callback", "sleep", "getpid", "select", "setitimer", "protocol_fds",
}

func TestProbeSandboxRefusesWhatBaselineAllows(t *testing.T) {
	requireSandbox(t)
	e := newProbeEnv(t)
	baseline := e.run(t, false)
	sandboxed := e.run(t, true)
	defer func() {
		if t.Failed() {
			for _, a := range slices.Sorted(maps.Keys(sandboxed)) {
				t.Logf("%-22s sandboxed %+v, baseline %+v", a, sandboxed[a], baseline[a])
			}
		}
	}()

	for _, c := range forbiddenActions {
		b, okB := baseline[c.action]
		s, okS := sandboxed[c.action]
		if !okB || !okS {
			t.Errorf("%s: missing from the probe output (baseline %v, sandboxed %v)", c.action, okB, okS)
			continue
		}
		switch {
		case s.OK:
			t.Errorf("%s: allowed in the sandbox", c.action)
		case !strings.HasPrefix(s.Error, c.sandboxError):
			t.Errorf("%s: refused in the sandbox with %q, want %s", c.action, s.Error, c.sandboxError)
		case c.errno != 0 && s.Errno != int(c.errno):
			t.Errorf("%s: refused in the sandbox with %q (errno %d), want %s (%d)", c.action, s.Error, s.Errno, unix.ErrnoName(c.errno), c.errno)
		}
		switch {
		case b.OK:
		case c.hostDependent:
			t.Logf("%s: this host refuses it without the sandbox too (%s)", c.action, b.Error)
		default:
			t.Errorf("%s: refused without the sandbox (%s), so the test cannot show the sandbox refuses it", c.action, b.Error)
		}
	}
	for _, action := range allowedActions {
		for name, results := range map[string]map[string]probeResult{"baseline": baseline, "sandboxed": sandboxed} {
			if r, ok := results[action]; !ok || !r.OK {
				t.Errorf("%s: failed in the %s run: %+v", action, name, r)
			}
		}
	}

	if got := sandboxed["clone3"].Errno; got != int(unix.ENOSYS) {
		t.Errorf("clone3 in the sandbox: errno %d, want ENOSYS (%d)", got, unix.ENOSYS)
	}
	if got := baseline["clone3"].Errno; got != int(unix.EINVAL) {
		t.Errorf("clone3 without the sandbox: errno %d, want EINVAL (%d)", got, unix.EINVAL)
	}

	if got, want := sandboxed["fds"].FDs, []int{0, 1, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("open descriptors in the sandbox: %v, want %v", got, want)
	}
	if got := baseline["fds"].FDs; !slices.Contains(got, e.strayFD) {
		t.Errorf("open descriptors without the sandbox: %v, want the stray fd %d among them", got, e.strayFD)
	}

	if got, want := sandboxed["descriptor_limit"].Limit, []int{DefaultOpenFiles, DefaultOpenFiles}; !slices.Equal(got, want) {
		t.Errorf("descriptor limit (soft, hard) in the sandbox: %v, want %v", got, want)
	}

	if s := sandboxed["capabilities"]; s.OK {
		t.Errorf("capabilities in the sandbox: effective set %#x, want empty", s.Effective)
	}
	if os.Geteuid() == 0 && !baseline["capabilities"].OK {
		t.Errorf("capabilities without the sandbox as root: effective set empty, want some")
	}
}

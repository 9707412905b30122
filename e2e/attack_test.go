package e2e

// Attack tests: every strategy in testdata/attacks/ is a hostile strategy
// written for one attack class, run through the real binary with the real
// limits, as root and as an unprivileged user, with and without the
// sandbox, and with the fallback tree tracking forced. Each file says in
// its header what must happen:
//
//	# attack: what it tries
//	# sandbox: no | yes | both        (which sandbox settings to run)
//	# expect: exit=1 status=failed failure.kind=timeout failure.hook=on_data
//	# expect[MODE]: ...               (replaces expect for one mode)
//	# within: 6.5                     (seconds from the strategy's "ATTACK <unix time>" log line to the job's end)
//	# args: --param n=3               (extra command-line arguments)
//	# text: clean                     (the text outputs carry no control sequence)
//	# message: some text              (failure.message contains it; message[MODE] too)
//	# log: some text                  (a system line of the job's log contains it; log[MODE] too, empty for none)
//	# leaks[MODE]: sysv devshm        (what the mode leaves on the host, as documented; see checkHost)
//	# artifacts-disk[MODE]: 1048576   (the most disk space the job's artifacts may take, in bytes)
//
// MODE is one of root, root+sandbox, user, user+sandbox, fallback. expect
// compares paths into the JSON report (a.b.c) with a value (path=value, or
// for numbers path>N, path<=N); exit is the exit code. After every run the
// harness checks that the job is saved with the same outcome, that
// stratbench's own peak RSS stayed under 256 MiB, that no process of the
// tree survives (strategy processes hold a file of the job's artifacts
// folder open, ctx.artifact_path("beacon-…"), and any process of the
// machine that still holds one is a survivor, whatever it did to its
// environment, session or pid namespace), and that nothing outside the
// home changed: the attacks' folder, and no System V object or /dev/shm
// file named after the job (helpers/tag.py names them) is left.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/internal/e2etest"
	"stratbench/internal/proctest"
)

// attackSpec is the header of an attack strategy.
type attackSpec struct {
	file    string
	attack  string
	sandbox string // no, yes, both
	expect  map[string][]string
	within  time.Duration
	args    []string
	text    bool
	// per mode ("" for every mode without its own): message, log, leaks,
	// artifacts-disk
	extra map[string]map[string]string
}

// pick returns the header key's value for mode: its own, else the
// default, and whether there is one.
func (s attackSpec) pick(key, mode string) (string, bool) {
	if v, ok := s.extra[key][mode]; ok {
		return v, true
	}
	v, ok := s.extra[key][""]
	return v, ok
}

// attackModes are the ways each attack runs.
var attackModes = []struct {
	name         string
	sandbox      bool
	unprivileged bool
	fallback     bool
}{
	{"root", false, false, false},
	{"root+sandbox", true, false, false},
	{"user", false, true, false},
	{"user+sandbox", true, true, false},
	{"fallback", false, false, true},
}

// maxHostRSS bounds stratbench's own peak resident memory under attack.
const maxHostRSS = 256 << 20

func parseAttack(t *testing.T, path string) attackSpec {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spec := attackSpec{file: path, sandbox: "no", expect: map[string][]string{}, extra: map[string]map[string]string{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "#") {
			break
		}
		key, value, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ":")
		if !ok {
			continue
		}
		value = strings.TrimSpace(value)
		switch {
		case key == "attack":
			spec.attack = value
		case key == "sandbox":
			spec.sandbox = value
		case key == "expect":
			spec.expect[""] = strings.Fields(value)
		case strings.HasPrefix(key, "expect[") && strings.HasSuffix(key, "]"):
			spec.expect[key[len("expect["):len(key)-1]] = strings.Fields(value)
		case key == "within":
			s, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("%s: within: %v", path, err)
			}
			spec.within = time.Duration(s * float64(time.Second))
		case key == "args":
			spec.args = strings.Fields(value)
		case key == "text":
			spec.text = value == "clean"
		default:
			name, mode, _ := strings.Cut(strings.TrimSuffix(key, "]"), "[")
			switch name {
			case "message", "log", "leaks", "artifacts-disk":
				if spec.extra[name] == nil {
					spec.extra[name] = map[string]string{}
				}
				spec.extra[name][mode] = value
			}
		}
	}
	if spec.attack == "" || len(spec.expect[""]) == 0 {
		t.Fatalf("%s: the header needs an attack and an expect line", path)
	}
	switch spec.sandbox {
	case "no", "yes", "both":
	default:
		t.Fatalf("%s: sandbox %q, want no, yes or both", path, spec.sandbox)
	}
	return spec
}

func (s attackSpec) runs(sandboxed bool) bool {
	return s.sandbox == "both" || s.sandbox == "yes" == sandboxed
}

func TestAttacks(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "attacks", "*.py"))
	if len(files) == 0 {
		t.Fatal("no attack strategies in testdata/attacks")
	}
	for _, file := range files {
		spec := parseAttack(t, file)
		t.Run(strings.TrimSuffix(filepath.Base(file), ".py"), func(t *testing.T) {
			for _, mode := range attackModes {
				if !spec.runs(mode.sandbox) {
					continue
				}
				t.Run(mode.name, func(t *testing.T) {
					t.Parallel()
					e := newAttackEnv(t, mode.unprivileged, mode.fallback)
					expect := spec.expect[""]
					if e, ok := spec.expect[mode.name]; ok {
						expect = e
					}
					args := []string{"--ci", "--output", "json"}
					if mode.sandbox {
						args = append(args, "--sandbox")
					}
					args = append(append(args, spec.args...), spec.file)
					before := snapshot(t, filepath.Dir(spec.file))
					r := e.run(args...)
					e.check(spec, mode.name, expect, r)
					if after := snapshot(t, filepath.Dir(spec.file)); !slices.Equal(after, before) {
						t.Errorf("the attacks' folder changed during the run:\nbefore %s\nafter  %s", before, after)
					}
					if spec.text {
						// The --ci text report of the same run.
						text := []string{"--ci"}
						if mode.sandbox {
							text = append(text, "--sandbox")
						}
						e.checkClean("--ci (text)", e.plain(append(append(text, spec.args...), spec.file)...))
					}
				})
			}
		})
	}
}

// attackEnv is one isolated installation for an attack run.
type attackEnv struct {
	t            *testing.T
	home, tmp    string
	userHome     string
	unprivileged bool
	fallback     bool
}

// attackUID is the unprivileged user the "user" modes run as.
const attackUID = 65534

func newAttackEnv(t *testing.T, unprivileged, fallback bool) *attackEnv {
	t.Helper()
	e2etest.SkipShort(t)
	e := &attackEnv{t: t, home: t.TempDir(), tmp: t.TempDir(), userHome: t.TempDir(), unprivileged: unprivileged, fallback: fallback}
	if unprivileged {
		if os.Getuid() != 0 {
			t.Skip("the unprivileged modes need root to switch users")
		}
		if _, err := exec.LookPath("setpriv"); err != nil {
			t.Skip("setpriv is missing")
		}
		if _, err := os.Stat(systemPython); err != nil {
			t.Skipf("%s is missing", systemPython)
		}
		for _, dir := range []string{e.home, e.tmp, e.userHome} {
			if err := os.Chown(dir, attackUID, attackUID); err != nil {
				t.Fatal(err)
			}
		}
		// The binary's folder and the test's temporary parents are 0700.
		for dir := filepath.Dir(e2etest.Binary()); dir != "/" && dir != os.TempDir(); dir = filepath.Dir(dir) {
			os.Chmod(dir, 0o755)
		}
		for _, dir := range []string{e.home, e.tmp, e.userHome} {
			os.Chmod(filepath.Dir(dir), 0o755)
		}
	}
	return e
}

// systemPython is an interpreter every user can run (pyenv's lives under
// /root, which only root can read).
const systemPython = "/usr/bin/python3"

func (e *attackEnv) command(args ...string) *exec.Cmd {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "NO_COLOR=1",
		"STRATBENCH_HOME=" + e.home, "TMPDIR=" + e.tmp}
	var cmd *exec.Cmd
	if e.unprivileged {
		env = append(env, "HOME="+e.userHome, "STRATBENCH_PYTHON="+systemPython)
		uid := strconv.Itoa(attackUID)
		cmd = exec.Command("setpriv", append([]string{"--reuid=" + uid, "--regid=" + uid, "--clear-groups", "--", e2etest.Binary()}, args...)...)
	} else {
		env = append(env, "HOME="+os.Getenv("HOME"), "PATH="+os.Getenv("PATH"))
		if p := os.Getenv("STRATBENCH_PYTHON"); p != "" {
			env = append(env, "STRATBENCH_PYTHON="+p)
		}
		cmd = exec.Command(e2etest.Binary(), args...)
	}
	if e.fallback {
		env = append(env, "STRATBENCH_TREE_TRACKING=fallback")
	}
	cmd.Env = env
	return cmd
}

type attackResult struct {
	e2etest.Result
	peakRSS int64 // stratbench's own peak resident memory, in bytes
}

// run runs stratbench and follows its own peak resident memory while it
// runs (with setpriv, stratbench is setpriv's pid after its exec).
func (e *attackEnv) run(args ...string) attackResult {
	e.t.Helper()
	var r attackResult
	r.Result = watchRun(e.t, e.command(args...), 20*time.Millisecond, func(pid int) { r.peakRSS = max(r.peakRSS, peakRSS(pid)) }, nil)
	return r
}

func (e *attackEnv) check(spec attackSpec, mode string, expect []string, r attackResult) {
	t := e.t
	t.Helper()
	var rep map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("exit %d, report is not JSON: %v\nstdout: %s\nstderr: %s", r.Code, err, r.Stdout, r.Stderr)
	}
	for _, kv := range expect {
		path, op, want, ok := cutExpect(kv)
		if !ok {
			t.Fatalf("%s: expect %q is not path=value, path>N or path<=N", spec.file, kv)
		}
		var got string
		if path == "exit" {
			got = strconv.Itoa(r.Code)
		} else {
			got = lookup(rep, path)
		}
		if !compare(got, op, want) {
			t.Errorf("%s = %s, want %s%s (exit %d)\nfailure: %s\nresources: %s\nmetadata: %s\nstderr: %s", path, got, op, want, r.Code,
				lookup(rep, "failure"), lookup(rep, "resources"), lookup(rep, "metadata"), r.Stderr)
		}
	}
	if want, ok := spec.pick("message", mode); ok && lookup(rep, "failure") != "null" {
		if msg := lookup(rep, "failure.message"); !strings.Contains(msg, want) {
			t.Errorf("failure.message %q, want it to contain %q", msg, want)
		}
	}
	jobID := lookup(rep, "job_id")
	jobDir := filepath.Join(e.home, "jobs", jobID)
	if want, ok := spec.pick("log", mode); ok && want != "" {
		if !hasSystemLine(t, filepath.Join(jobDir, "logs.jsonl"), want) {
			t.Errorf("no system line of the job's log contains %q", want)
		}
	}
	if v, ok := spec.pick("artifacts-disk", mode); ok {
		most, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s: artifacts-disk %q: %v", spec.file, v, err)
		}
		if used := diskBytes(filepath.Join(jobDir, "artifacts")); used > most {
			t.Errorf("the job's artifacts take %d bytes of disk, over %d", used, most)
		}
	}
	leaks, _ := spec.pick("leaks", mode)
	checkHost(t, jobID, strings.Fields(leaks))
	// The job is saved, with the same outcome.
	saved, err := os.ReadFile(filepath.Join(jobDir, "job.json"))
	if err != nil {
		t.Fatalf("job not saved: %v", err)
	}
	var savedRep map[string]any
	if err := json.Unmarshal(saved, &savedRep); err != nil {
		t.Fatalf("job.json: %v", err)
	}
	for _, path := range []string{"status", "failure.kind", "failure.hook", "orders_hash"} {
		if a, b := lookup(savedRep, path), lookup(rep, path); a != b {
			t.Errorf("job.json %s = %s, stdout says %s", path, a, b)
		}
	}
	if r.peakRSS > maxHostRSS {
		t.Errorf("stratbench's peak RSS %d MiB, over %d MiB", r.peakRSS>>20, maxHostRSS>>20)
	}
	if spec.within > 0 {
		e.checkWithin(spec, jobDir, rep)
	}
	if survivors := holders(filepath.Join(jobDir, "artifacts")); len(survivors) > 0 {
		t.Errorf("processes of the tree survived the run: %v", survivors)
	}
	if spec.text {
		e.checkText(jobID, r)
	}
}

// checkWithin checks that the job ended within spec.within of the
// strategy's "ATTACK <unix time>" line.
func (e *attackEnv) checkWithin(spec attackSpec, jobDir string, rep map[string]any) {
	t := e.t
	t.Helper()
	logs, err := os.ReadFile(filepath.Join(jobDir, "logs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`"ATTACK ([0-9.]+)"`).FindSubmatch(logs)
	if m == nil {
		t.Fatalf("the strategy never printed its ATTACK line; logs:\n%s", logs)
	}
	secs, _ := strconv.ParseFloat(string(m[1]), 64)
	started := time.Unix(0, int64(secs*1e9))
	finished, err := time.Parse(time.RFC3339Nano, lookup(rep, "finished_at"))
	if err != nil {
		t.Fatalf("finished_at: %v", err)
	}
	if took := finished.Sub(started); took > spec.within || took < 0 {
		t.Errorf("the job ended %v after the attack started, want within %v", took.Round(time.Millisecond), spec.within)
	}
}

// checkText runs the text outputs on the job and checks that no control
// character of the strategy's reaches the terminal.
func (e *attackEnv) checkText(jobID string, r attackResult) {
	t := e.t
	t.Helper()
	for _, args := range [][]string{{"status", jobID}, {"logs", jobID}, {"jobs"}} {
		e.checkClean(strings.Join(args, " "), e.plain(args...))
	}
}

// checkClean checks that an output carries no control character but
// newlines and tabs.
func (e *attackEnv) checkClean(name string, r attackResult) {
	e.t.Helper()
	out := r.Stdout + r.Stderr
	for i, c := range out {
		if c == '\n' || c == '\t' {
			continue
		}
		if c < 0x20 || c == 0x7f || c >= 0x80 && c < 0xa0 {
			e.t.Errorf("%s: control character %U at byte %d: %q", name, c, i, out[max(0, i-20):min(len(out), i+20)])
			return
		}
	}
}

// lookup returns the value at a dotted path of a decoded JSON document, as
// text ("null" when absent).
func lookup(doc map[string]any, path string) string {
	var v any = doc
	for _, key := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return "null"
		}
		v = m[key]
	}
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// cutExpect splits an expectation into its path, operator and value.
func cutExpect(kv string) (path, op, value string, ok bool) {
	for _, op := range []string{"<=", ">", "="} {
		if path, value, ok := strings.Cut(kv, op); ok {
			return path, op, value, true
		}
	}
	return "", "", "", false
}

// compare compares a report's value with an expectation's.
func compare(got, op, want string) bool {
	if op == "=" {
		return got == want
	}
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	if op == ">" {
		return g > w
	}
	return g <= w
}

// hasSystemLine reports whether a system line of the job's log contains
// text.
func hasSystemLine(t *testing.T, logs, text string) bool {
	t.Helper()
	f, err := os.Open(logs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l struct{ Stream, Line string }
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Stream == "system" && strings.Contains(l.Line, text) {
			return true
		}
	}
	return false
}

// diskBytes returns the disk space the files under dir take (allocated
// blocks, a file of several names once).
func diskBytes(dir string) int64 {
	var sum int64
	seen := map[uint64]bool{}
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok && !seen[st.Ino] {
				seen[st.Ino] = true
				sum += st.Blocks * 512
			}
		}
		return nil
	})
	return sum
}

// checkHost checks that a job left nothing on the host outside its home: no
// System V object whose key is the job's (helpers/tag.py), no /dev/shm file
// whose name holds its id; except what leaks names ("sysv", "devshm"), which
// the mode leaves as documented and must be there. Whatever is found is
// removed.
func checkHost(t *testing.T, jobID string, leaks []string) {
	t.Helper()
	key := int64(crc32.ChecksumIEEE([]byte(jobID)) & 0x7fffffff)
	var sysv, devshm []string
	for _, kind := range []struct {
		file string
		rm   func(id int)
	}{
		{"shm", func(id int) { unix.SysvShmCtl(id, unix.IPC_RMID, nil) }},
		{"msg", func(id int) { unix.Syscall(unix.SYS_MSGCTL, uintptr(id), unix.IPC_RMID, 0) }},
		{"sem", func(id int) { unix.Syscall6(unix.SYS_SEMCTL, uintptr(id), 0, unix.IPC_RMID, 0, 0, 0) }},
	} {
		data, _ := os.ReadFile("/proc/sysvipc/" + kind.file)
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			if k, err := strconv.ParseInt(f[0], 10, 64); err == nil && k == key {
				sysv = append(sysv, kind.file+" "+f[1])
				if id, err := strconv.Atoi(f[1]); err == nil {
					kind.rm(id)
				}
			}
		}
	}
	entries, _ := os.ReadDir("/dev/shm")
	for _, e := range entries {
		if strings.Contains(e.Name(), jobID) {
			devshm = append(devshm, e.Name())
			os.Remove(filepath.Join("/dev/shm", e.Name()))
		}
	}
	for _, c := range []struct {
		name  string
		found []string
	}{{"sysv", sysv}, {"devshm", devshm}} {
		switch leaked := slices.Contains(leaks, c.name); {
		case leaked && len(c.found) == 0:
			t.Errorf("nothing %s named after the job is left, where the mode documents that it stays: the attack did not run", c.name)
		case !leaked && len(c.found) > 0:
			t.Errorf("the job left %v on the host (%s)", c.found, c.name)
		}
	}
}

// plain runs a job command and returns its output.
func (e *attackEnv) plain(args ...string) attackResult {
	e.t.Helper()
	return attackResult{Result: e2etest.RunCmd(e.t, e.command(args...))}
}

// holders returns the live processes that hold a file under dir open (or
// work in it).
func holders(dir string) []string {
	var found []string
	procs, _ := proctest.Processes(func(proctest.Proc) bool { return true })
	for _, p := range procs {
		for _, f := range p.Files() {
			if strings.HasPrefix(f, dir+"/") {
				found = append(found, fmt.Sprintf("%d (%s)", p.PID, filepath.Base(f)))
				break
			}
		}
	}
	return found
}

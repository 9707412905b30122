package procfs

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParseStat(t *testing.T) {
	// comm with spaces and parentheses, as a process can name itself.
	line := "4242 (a) (b c) S 17 4242 4242 0 -1 4194560 153 0 0 0 1 2 0 0 20 0 3 0 987654 12345678 321 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
	s, err := ParseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{PID: 4242, Comm: "a) (b c", State: 'S', PPID: 17, PGID: 4242, SID: 4242, Threads: 3, StartTime: 987654, RSSPages: 321}
	if s != want {
		t.Fatalf("ParseStat = %+v, want %+v", s, want)
	}
	for _, bad := range []string{"", "12 (x", "12 (x) S 1", "x (y) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22", "12 (x) SS 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22"} {
		if _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q) succeeded", bad)
		}
	}
}

func TestParseStatus(t *testing.T) {
	text := "Name:\tpython3.11\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t7\nPPid:\t3\nVmPeak:\t  3060 kB\nVmHWM:\t    1776 kB\nVmRSS:\t    1000 kB\nThreads:\t2\n"
	s, err := ParseStatus([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want := Status{Name: "python3.11", State: 'S', PPID: 3, Threads: 2, RSS: 1000 << 10, Peak: 1776 << 10}
	if s != want {
		t.Fatalf("ParseStatus = %+v, want %+v", s, want)
	}
	zombie, err := ParseStatus([]byte("Name:\tsh\nState:\tZ (zombie)\nPPid:\t1\nThreads:\t1\n"))
	if err != nil || !zombie.Zombie() || zombie.RSS != 0 {
		t.Fatalf("zombie status = %+v, %v", zombie, err)
	}
	for _, bad := range []string{"", "Name:\tx\n", "State:\tS\nVmRSS:\t12 MB\n", "State:\tS\nPPid:\tx\n"} {
		if _, err := ParseStatus([]byte(bad)); err == nil {
			t.Errorf("ParseStatus(%q) succeeded", bad)
		}
	}
}

func TestParseNSPIDs(t *testing.T) {
	text := "Name:\tsleep\nNStgid:\t4242\t7\t1\nNSpid:\t4242\t7\t1\nNSpgid:\t4242\t7\t1\n"
	got, err := ParseNSPIDs([]byte(text), []int{9})
	if err != nil || !slices.Equal(got, []int{9, 4242, 7, 1}) {
		t.Fatalf("ParseNSPIDs = %v, %v; want the NSpid values appended to [9]", got, err)
	}
	for _, bad := range []string{"", "Name:\tx\n", "NSpid:\n", "NSpid:\t12\tx\n"} {
		if got, err := ParseNSPIDs([]byte(bad), nil); err == nil {
			t.Errorf("ParseNSPIDs(%q) = %v, want an error", bad, got)
		}
	}
	self, err := NewReader().NSPIDs(os.Getpid(), nil)
	if err != nil || len(self) == 0 || self[0] != os.Getpid() {
		t.Fatalf("own NSpid %v, %v: want our pid first", self, err)
	}
}

func TestParsePIDList(t *testing.T) {
	var got []int
	if err := ParsePIDList([]byte("12 345 6 \n"), func(p int) { got = append(got, p) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int{12, 345, 6}) {
		t.Fatalf("got %v", got)
	}
	if err := ParsePIDList([]byte("12 x"), func(int) {}); err == nil {
		t.Fatal("bad list accepted")
	}
}

func TestEnvScannerChunks(t *testing.T) {
	env := []byte("A=1\x00STRAT=no\x00STRATBENCH_X=\x00STRATBENCH_TREE=42.7\x00Z=9\x00")
	for chunk := 1; chunk <= len(env); chunk++ {
		s := envScanner{prefix: "STRATBENCH_TREE="}
		var v string
		var ok bool
		for i := 0; i < len(env) && !ok; i += chunk {
			v, ok = s.feed(env[i:min(i+chunk, len(env))])
		}
		if !ok || v != "42.7" {
			t.Fatalf("chunk %d: got %q %v", chunk, v, ok)
		}
	}
	s := envScanner{prefix: "B="}
	if _, ok := s.feed([]byte("AB=1\x00BB=2\x00")); ok {
		t.Fatal("matched a key that only contains the wanted one")
	}
	if v, ok := s.finish(); ok {
		t.Fatalf("finish found %q", v)
	}
	s = envScanner{prefix: "B="}
	s.feed([]byte("A=1\x00B=last"))
	if v, ok := s.finish(); !ok || v != "last" {
		t.Fatalf("unterminated last entry: %q %v", v, ok)
	}
}

// TestProcOfRealProcess pins a real child and reads everything the sampler reads.
func TestProcOfRealProcess(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 30 & read x")
	cmd.Env = []string{"STRATBENCH_TREE=abc", "X=1"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	r := NewReader()
	p, err := r.Open(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Stat.PID != cmd.Process.Pid || p.Stat.PPID != os.Getpid() || p.Stat.StartTime == 0 {
		t.Fatalf("stat %+v", p.Stat)
	}
	var kids []int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		// the shell forks sleep right after it starts
		if kids, err = p.Children(r, 1, kids[:0]); err != nil {
			t.Fatal(err)
		}
		if len(kids) == 1 {
			break
		}
	}
	if len(kids) != 1 {
		t.Fatalf("children %v, want the sleep", kids)
	}
	st, err := p.Status(r)
	if err != nil || st.PPID != os.Getpid() || st.Peak <= 0 || st.RSS <= 0 || st.Threads != 1 {
		t.Fatalf("status %+v, %v", st, err)
	}
	fd, err := p.DupClearRefs()
	if err != nil || fd < 0 {
		t.Fatalf("DupClearRefs = %d, %v", fd, err)
	}
	if err := ResetPeak(fd); err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	if v, ok, err := p.Getenv(r, "STRATBENCH_TREE"); err != nil || !ok || v != "abc" {
		t.Fatalf("Getenv = %q %v %v", v, ok, err)
	}
	if _, ok, _ := r.Getenv(cmd.Process.Pid, "HOME"); ok {
		t.Fatal("found a variable that is not set")
	}
	if c, err := p.Cmdline(r); err != nil || c != "/bin/sh -c sleep 30 & read x" {
		t.Fatalf("Cmdline = %q, %v", c, err)
	}
	pids, err := r.PIDs(nil)
	if err != nil || !slices.Contains(pids, cmd.Process.Pid) || !slices.Contains(pids, os.Getpid()) {
		t.Fatalf("PIDs misses the child or us: %v", err)
	}
	stdin.Close()
	cmd.Wait()
	if p.Alive(r) {
		t.Fatal("reaped process still alive through its pinned fds")
	}
	if _, err := p.Status(r); !Gone(err) {
		t.Fatalf("Status of a reaped process: %v, want a Gone error", err)
	}
}

func TestNumericDirents(t *testing.T) {
	var b []byte
	for _, name := range []string{".", "..", "12", "self", "7", "-3", "0"} {
		rec := make([]byte, 19+len(name)+1)
		rec = append(rec[:19], name...)
		rec = append(rec, 0)
		for len(rec)%8 != 0 {
			rec = append(rec, 0)
		}
		rec[16], rec[17] = byte(len(rec)), byte(len(rec)>>8)
		b = append(b, rec...)
	}
	if got := appendNumericDirents(b, nil); !slices.Equal(got, []int{12, 7}) {
		t.Fatalf("got %v", got)
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("4242 (a) (b c) S 17 4242 4242 0 -1 4194560 153 0 0 0 1 2 0 0 20 0 3 0 987654 12345678 321 1 1"))
	f.Add([]byte("1 (x) Z 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseStat(b)
		if err == nil && (s.State == 0 || !bytes.Contains(b, []byte(s.Comm))) {
			t.Fatalf("accepted %q as %+v", b, s)
		}
	})
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("Name:\tpython3.11\nState:\tS (sleeping)\nPPid:\t3\nVmHWM:\t    1776 kB\nVmRSS:\t    1000 kB\nThreads:\t2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseStatus(b)
		if err == nil && (s.RSS < 0 || s.Peak < 0 || s.State == 0) {
			t.Fatalf("accepted %q as %+v", b, s)
		}
	})
}

func FuzzParseNSPIDs(f *testing.F) {
	f.Add([]byte("NSpid:\t4242\t7\t1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		pids, err := ParseNSPIDs(b, nil)
		if err == nil && (len(pids) == 0 || slices.ContainsFunc(pids, func(p int) bool { return p <= 0 })) {
			t.Fatalf("accepted %q as %v", b, pids)
		}
	})
}

func FuzzParsePIDList(f *testing.F) {
	f.Add([]byte("1 2 3 \n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ParsePIDList(b, func(p int) {
			if p <= 0 {
				t.Fatalf("pid %d from %q", p, b)
			}
		})
	})
}

func FuzzEnvScanner(f *testing.F) {
	f.Add([]byte("A=1\x00K=v\x00"), 3)
	f.Fuzz(func(t *testing.T, env []byte, chunk int) {
		if chunk <= 0 {
			chunk = 1
		}
		// The reference: split on NUL and look for the first "K=" entry.
		want, wantOK := "", false
		for _, e := range strings.Split(string(env), "\x00") {
			if v, ok := strings.CutPrefix(e, "K="); ok {
				want, wantOK = v[:min(len(v), maxEnvValue)], true
				break
			}
		}
		s := envScanner{prefix: "K="}
		got, ok := "", false
		for i := 0; i < len(env) && !ok; i += chunk {
			got, ok = s.feed(env[i:min(i+chunk, len(env))])
		}
		if !ok {
			got, ok = s.finish()
		}
		if ok != wantOK || got != want {
			t.Fatalf("env %q: got %q %v, want %q %v", env, got, ok, want, wantOK)
		}
	})
}

func TestParseCaps(t *testing.T) {
	status := []byte("Name:\tpython3\nCapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\nCapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000000\n")
	c, err := ParseCaps(status)
	if err != nil || c != (Caps{Permitted: 0x1ffffffffff, Effective: 0x1ffffffffff}) {
		t.Errorf("ParseCaps: %+v, %v", c, err)
	}
	for _, bad := range []string{"", "CapPrm:\t0\nCapEff:\t0\n", "CapPrm:\tzz\nCapEff:\t0\nCapAmb:\t0\n"} {
		if c, err := ParseCaps([]byte(bad)); err == nil {
			t.Errorf("ParseCaps(%q) = %+v, want an error", bad, c)
		}
	}
	self, err := NewReader().Open(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	if _, err := self.Caps(NewReader()); err != nil {
		t.Errorf("own caps: %v", err)
	}
	ns, err := self.NSPIDs(NewReader(), nil)
	if err != nil || ns[0] != os.Getpid() {
		t.Errorf("own NSpid: %v, %v", ns, err)
	}
	if _, _, err := self.Exe(); err != nil {
		t.Errorf("own exe: %v", err)
	}
}

func FuzzParseCaps(f *testing.F) {
	f.Add([]byte("CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapAmb:\t0000000000000000\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseCaps(b)
	})
}

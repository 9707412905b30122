package supervisor

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fakeStratbenchEnv makes the test binary a stand-in stratbench (see
// fakeStratbench); its value is the state file.
const fakeStratbenchEnv = "STRATBENCH_SUPERVISOR_TEST_FAKE"

// fakeStratbench supervises escape.py with a state file, prints
// "ready ROOT ESCAPEE TRACKING" once the state file lists the escapee, and
// waits to be killed.
func fakeStratbench(stateFile string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "fake stratbench:", err)
		return 1
	}
	h, err := NewHost()
	if err != nil {
		return fail(err)
	}
	escapee := make(chan int, 1)
	p, err := h.Start(context.Background(), Spec{
		Path:      os.Getenv("STRATBENCH_PYTHON"),
		Args:      []string{os.Getenv("STRATBENCH_SUPERVISOR_TEST_SCRIPT")},
		StateFile: stateFile,
		Output: func(l Line) {
			if pid, ok := strings.CutPrefix(l.Text, "escapee "); ok {
				n, _ := strconv.Atoi(pid)
				escapee <- n
			}
		},
	})
	if err != nil {
		return fail(err)
	}
	esc, err := hostPIDOf(p, <-escapee)
	if err != nil {
		return fail(err)
	}
	if p.TreeTracking() == TrackingPIDNamespace {
		// No state file in a PID namespace: nothing would be left to sweep.
		fmt.Println("ready", p.PID(), esc, p.TreeTracking())
		time.Sleep(time.Hour)
	}
	for range 500 {
		if rec, err := readState(stateFile); err == nil && slices.ContainsFunc(rec.Procs, func(p ProcID) bool { return p.PID == esc }) {
			fmt.Println("ready", p.PID(), esc, p.TreeTracking())
			time.Sleep(time.Hour)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fail(fmt.Errorf("state file never listed the escapee %d", esc))
}

// TestSweepAfterStratbenchWasKilled kills a stratbench that supervises a
// tree with an escapee. In a PID namespace the escapee dies with it (the
// init's parent-death signal ends the namespace); in the fallback it
// survives, reparented away from the dead init, until Sweep finds it.
func TestSweepAfterStratbenchWasKilled(t *testing.T) {
	forEachTracking(t, func(t *testing.T, want TreeTracking) {
		dir := t.TempDir()
		stateFile := filepath.Join(dir, "job1", "procs.json")
		if err := os.Mkdir(filepath.Dir(stateFile), 0o755); err != nil {
			t.Fatal(err)
		}
		fake := exec.Command(os.Args[0], "-test.run=^$")
		fake.Env = append(os.Environ(), fakeStratbenchEnv+"="+stateFile, "STRATBENCH_PYTHON="+python(t),
			"STRATBENCH_SUPERVISOR_TEST_SCRIPT="+script(t, "escape.py"))
		fake.Stderr = os.Stderr
		out, err := fake.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := fake.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			fake.Process.Kill()
			fake.Wait()
			t.Fatalf("fake stratbench: %v", err)
		}
		var root, esc int
		var tracking string
		if _, err := fmt.Sscanf(line, "ready %d %d %s", &root, &esc, &tracking); err != nil {
			t.Fatalf("fake stratbench said %q: %v", line, err)
		}
		if tracking != want.String() {
			fake.Process.Kill()
			fake.Wait()
			t.Skipf("tree tracking %s here, not %s", tracking, want)
		}
		escID := identify(t, esc)
		escFD, err := unix.PidfdOpen(esc, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(escFD)

		// A crash: no chance to clean up.
		fake.Process.Signal(syscall.SIGKILL)
		fake.Wait()
		if want == TrackingPIDNamespace {
			// The escapee must end, without Sweep: a pidfd becomes
			// readable when its process exits.
			if exited, err := pidfdWait(uintptr(escFD), 10*time.Second); !exited || err != nil {
				t.Fatalf("the escapee outlived stratbench's death by 10 s (poll: %v)", err)
			}
		} else {
			// The root dies of its init's death (parent-death
			// signals); the setsid'd escapee lives on. Give it the
			// time a namespace would need to die (the pidns case
			// above takes milliseconds).
			time.Sleep(200 * time.Millisecond)
			if !alive(escID) {
				t.Fatal("the escapee died with stratbench in the fallback: the test would prove nothing")
			}
		}

		swept, err := Sweep(filepath.Join(dir, "*", "procs.json"))
		if err != nil {
			t.Fatal(err)
		}
		if want == TrackingPIDNamespace {
			// No state file was written: there is nothing to sweep.
			if len(swept) != 0 {
				t.Fatalf("Sweep = %+v, want nothing in a PID namespace", swept)
			}
			return
		}
		if len(swept) != 1 || swept[0].StateFile != stateFile || swept[0].Killed < 1 {
			t.Fatalf("Sweep = %+v, want the state file with at least 1 killed", swept)
		}
		if alive(escID) {
			t.Fatal("the escapee survived Sweep")
		}
		if _, err := os.Stat(stateFile); !os.IsNotExist(err) {
			t.Fatalf("state file still there: %v", err)
		}
	})
}

func TestSweepLeavesLiveAndReusedAlone(t *testing.T) {
	victim := exec.Command("/bin/sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		victim.Process.Kill()
		victim.Wait()
	}()
	victimID := identify(t, victim.Process.Pid)
	self := identify(t, os.Getpid())
	// A stratbench that is dead: a process that has exited and was reaped.
	gone := exec.Command("/bin/true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := ProcID{gone.Process.Pid, self.Start + 1}

	dir := t.TempDir()
	write := func(name string, rec stateRecord) string {
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	live := write("live", stateRecord{Version: stateVersion, Supervisor: self, Marker: "t.1", Procs: []ProcID{victimID}})
	// The recorded pid now belongs to another process (the start time differs).
	reused := write("reused", stateRecord{Version: stateVersion, Supervisor: dead, Marker: "t.2",
		Procs: []ProcID{{victimID.PID, victimID.Start + 7}}})
	corrupt := filepath.Join(dir, "corrupt.json")
	if err := os.WriteFile(corrupt, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}

	swept, err := Sweep(filepath.Join(dir, "*.json"))
	if err == nil || !strings.Contains(err.Error(), corrupt) {
		t.Errorf("Sweep error %v, want one naming %s", err, corrupt)
	}
	if len(swept) != 1 || swept[0].StateFile != reused || swept[0].Killed != 0 {
		t.Fatalf("Sweep = %+v, want only %s with nothing killed", swept, reused)
	}
	if !alive(victimID) {
		t.Fatal("Sweep killed a process it must not touch")
	}
	for _, path := range []string{live, corrupt} {
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// TestStateFileFollowsTree: under the fallback tracking the state file
// names the tree's processes as they come and is gone with the tree; in a
// PID namespace there is none.
func TestStateFileFollowsTree(t *testing.T) {
	t.Run("pidns", func(t *testing.T) {
		t.Setenv(TrackingEnv, "auto")
		h := newHost(t)
		c := newCollector()
		spec := pySpec(t, c, "escape.py")
		spec.StateFile = filepath.Join(t.TempDir(), "procs.json")
		p := startIn(t, h, spec, TrackingPIDNamespace)
		waitEscapee(t, c, p, "escapee")
		waitSample(t, p, func(Sample) bool { return true })
		if _, err := os.Stat(spec.StateFile); !os.IsNotExist(err) {
			t.Errorf("a state file in a PID namespace: %v", err)
		}
		p.Kill()
	})
	t.Setenv(TrackingEnv, "fallback")
	h := newHost(t)
	c := newCollector()
	spec := pySpec(t, c, "escape.py")
	spec.StateFile = filepath.Join(t.TempDir(), "procs.json")
	p := start(t, h, spec)
	esc := waitEscapee(t, c, p, "escapee").PID
	want := []ProcID{identify(t, p.initPID), identify(t, p.PID()), identify(t, esc)}
	slices.SortFunc(want, func(a, b ProcID) int { return a.PID - b.PID })
	// The escapee's parent exits right after forking it, and the state file
	// may name it until the next sample sees it gone: wait for the file to
	// settle on the three processes that stay.
	var rec stateRecord
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var err error
		if rec, err = readState(spec.StateFile); err == nil && slices.Equal(rec.Procs, want) {
			break
		}
	}
	if !slices.Equal(rec.Procs, want) || rec.Supervisor != identify(t, os.Getpid()) || rec.Marker != p.marker {
		t.Fatalf("state %+v, want procs %v", rec, want)
	}
	p.Kill()
	if _, err := os.Stat(spec.StateFile); !os.IsNotExist(err) {
		t.Fatalf("state file left after the tree ended: %v", err)
	}
}

func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"version":1,"supervisor":{"pid":10,"start":5},"marker":"10.5.1","procs":[{"pid":11,"start":6}]}`))
	f.Add([]byte(`{"version":1,"supervisor":{"pid":-1,"start":5},"marker":"x","procs":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := parseState(b)
		if err != nil {
			return
		}
		if rec.Supervisor.PID <= 0 || rec.Marker == "" || slices.ContainsFunc(rec.Procs, func(p ProcID) bool { return p.PID <= 0 }) {
			t.Fatalf("accepted %q as %+v", b, rec)
		}
	})
}

func TestOwnerAlive(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	if self.PID != os.Getpid() || !self.Alive() {
		t.Fatalf("self %+v not alive", self)
	}
	if (ProcID{PID: self.PID, Start: self.Start + 1}).Alive() {
		t.Fatal("a reused pid (other start time) counts as alive")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if (ProcID{PID: cmd.Process.Pid, Start: 1}).Alive() {
		t.Fatal("an exited process counts as alive")
	}
}

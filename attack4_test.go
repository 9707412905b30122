package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Attacks of h-attack4 on the surfaces of turn 3 (disk policy, check,
// montecarlo, debugger, local fills, warm re-runs). Each test here failed
// when it was written: it shows a break, not a fix.

// startPrompt starts `stratbench prune args...` at a terminal and returns
// once it asks its question; answer types the answer and waits for it.
func (e *env) startPrompt(args ...string) (answer func(string) result) {
	e.t.Helper()
	terminal, typist := openPTY(e.t)
	cmd := e.command(append([]string{"prune"}, args...)...)
	var out strings.Builder
	stderr, err := cmd.StderrPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout = terminal, &out
	e.launch(cmd)
	// The question ends without a newline: read up to its "? [y/N] ".
	rd := bufio.NewReader(stderr)
	var asked strings.Builder
	for !strings.Contains(asked.String(), "[y/N]") {
		b, err := rd.ReadByte()
		if err != nil {
			e.t.Fatalf("prune ended before asking: %v\n%s%s", err, asked.String(), out.String())
		}
		asked.WriteByte(b)
	}
	return func(a string) result {
		e.t.Helper()
		if _, err := typist.WriteString(a + "\n"); err != nil {
			e.t.Fatal(err)
		}
		rest, _ := readAll(rd)
		return result{e.exitCode(cmd.Wait()), out.String(), asked.String() + rest}
	}
}

func readAll(rd *bufio.Reader) (string, error) {
	b, err := io.ReadAll(rd)
	return string(b), err
}

// TestAttack4PruneRemovesJobKeptWhileAsking: prune decides what to remove,
// asks, and removes what it decided once answered, without looking again:
// a job marked with `stratbench keep` while the question waits (another
// terminal) is removed, though prune "never removes a kept job"
// (docs/commands.md, "The home's budget, keep and prune").
func TestAttack4PruneRemovesJobKeptWhileAsking(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for range 2 {
		ids = append(ids, e.quickJob())
	}
	answer := e.startPrompt()
	if r := e.run("keep", ids[0]); r.code != 0 {
		t.Fatalf("keep: exit %d %s", r.code, r.stderr)
	}
	r := answer("y")
	if _, err := os.Stat(filepath.Join(e.home, "jobs", ids[0])); err != nil {
		t.Fatalf("prune removed %s, marked with keep before the answer: %v\nexit %d\n%s%s", ids[0], err, r.code, r.stdout, r.stderr)
	}
}

// TestAttack4PruneRemovesSweepResumedWhileAsking: the same for a stopped
// sweep resumed while prune --older-than waits at its question: prune
// removes the running sweep's folder, and the resumed sweep fails
// (prune "never removes a running job or sweep").
func TestAttack4PruneRemovesSweepResumedWhileAsking(t *testing.T) {
	e := newEnv(t)
	sw := filepath.Join(e.tmp, "sw.py")
	if err := os.WriteFile(sw, []byte("import time\nMANIFEST = {\"name\": \"sw\", \"params\": {\"k\": 1}}\n"+
		"def on_data(ctx, h):\n    time.sleep(0.001)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A sweep stopped after its first runs.
	cmd := e.command("sweep", sw, "--ci", "--grid", "k=1:40:1", "--jobs", "1", "--to", "2026-01-05 02:00:00", "--output", "jsonl")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	e.launch(cmd)
	sc := bufio.NewScanner(stdout)
	for n := 0; n < 2 && sc.Scan(); n++ {
	}
	cmd.Process.Signal(os.Interrupt)
	for sc.Scan() {
	}
	if code := e.exitCode(cmd.Wait()); code != 130 {
		t.Fatalf("the stopped sweep: exit %d", code)
	}
	sweeps, _ := os.ReadDir(filepath.Join(e.home, "sweeps"))
	if len(sweeps) != 1 {
		t.Fatalf("%d sweeps", len(sweeps))
	}
	id := sweeps[0].Name()
	answer := e.startPrompt("--older-than", "1ms")
	// Resumed meanwhile: running once its runs' jobs appear.
	resume := e.command("sweep", "--resume", id, "--ci", "--output", "jsonl")
	rout, err := resume.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var rerr strings.Builder
	resume.Stderr = &rerr
	e.launch(resume)
	rsc := bufio.NewScanner(rout)
	if !rsc.Scan() {
		t.Fatalf("the resumed sweep printed nothing: %s", rerr.String())
	}
	r := answer("y")
	for rsc.Scan() {
	}
	code := e.exitCode(resume.Wait())
	if _, err := os.Stat(filepath.Join(e.home, "sweeps", id)); err != nil || code != 0 {
		t.Fatalf("prune removed the sweep %s resumed while it asked (%v); the resume: exit %d %s\nprune: exit %d\n%s%s",
			id, err, code, rerr.String(), r.code, r.stdout, r.stderr)
	}
}

// TestAttack4RetentionRemovesJobStillReporting: with a tight budget
// (STRATBENCH_KEEP=1), runs that end at once remove each other's jobs
// while those runs still write their --report: the run of a passed job
// exits 2 ("unknown job", or the report's write fails) and its job is
// gone. "The job that just ran counts but always stays" holds only for
// the run's own retention (docs/commands.md). A race: 12 runs at once
// lost 1 to 3 jobs in every try on a 2-core machine.
func TestAttack4RetentionRemovesJobStillReporting(t *testing.T) {
	e := newEnv(t)
	const runs = 12
	type out struct {
		code int
		err  string
	}
	results := make(chan out, runs)
	for range runs {
		go func() {
			cmd := e.command("--ci", strategy("ok_counter.py"), "--to", "2026-01-05 01:00:00", "--report")
			cmd.Env = append(cmd.Env, "STRATBENCH_KEEP=1")
			var errb strings.Builder
			cmd.Stderr = &errb
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				code = -1
			}
			results <- out{code, errb.String()}
		}()
	}
	for range runs {
		if r := <-results; r.code != 0 {
			t.Errorf("a run exited %d: %s", r.code, r.err)
		}
	}
}

package e2e

// End-to-end tests of what the sweep commands say to a user who gets
// something wrong: a sweep's files edited or damaged by hand, a flag
// forgotten or given without the one it goes with, and the hints they
// print.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"stratbench/internal/e2etest"
	"stratbench/sweep"
)

// editDocument rewrites sweep id's sweep.json through edit (see editJSON).
func (e *env) editDocument(id string, edit func(doc map[string]any)) {
	e.T.Helper()
	editJSON(e.T, filepath.Join(e.Home, "sweeps", id, sweep.DocumentFile), edit)
}

// sweepFiles returns the content of sweep id's sweep.json and
// results.jsonl.
func (e *env) sweepFiles(id string) (doc, results []byte) {
	e.T.Helper()
	dir := filepath.Join(e.Home, "sweeps", id)
	doc, err := os.ReadFile(filepath.Join(dir, sweep.DocumentFile))
	if err != nil {
		e.T.Fatal(err)
	}
	if results, err = os.ReadFile(filepath.Join(dir, sweep.ResultsFile)); err != nil {
		e.T.Fatal(err)
	}
	return doc, results
}

// TestSweepResumeRefusesAnEditedSpec: a resume checks every kept result's
// params against the plan's for its index. A grid edited in sweep.json
// after runs #0 and #1 finished (fast=5,10,15 × slow=20,30 made fast=5 ×
// slow=20,25,30) gives index 1 to slow=25, while the kept #1 ran slow=30:
// the resume is refused, exit 2, naming results.jsonl, the line, the index
// and both params, and nothing runs or is written (it used to keep the old
// #1 as the new one and run fast=5, slow=30 again as #2). A value of the
// document that is no good (a metric, a window) is named as sweep.json's
// field, not as a flag the user never gave.
func TestSweepResumeRefusesAnEditedSpec(t *testing.T) {
	e := newEnv(t)
	r := e.Run("sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--jobs", "1", "--from", "2026-01-05", "--to", "2026-01-05 02:00:00",
		"--grid", "fast=5,10,15", "--grid", "slow=20,30")
	if r.Code != 0 {
		t.Fatalf("the sweep: exit %d\n%s", r.Code, r.Stderr)
	}
	id := e2etest.DecodeSweep(t, r.Stdout).SweepID
	// What a sweep stopped after #0 and #1 leaves: their results lines,
	// and a document saved as stopped.
	resultsPath := filepath.Join(e.Home, "sweeps", id, sweep.ResultsFile)
	var kept []string
	for _, res := range e.ReadResults(id) {
		if res.Index <= 1 {
			line, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			kept = append(kept, string(line))
		}
	}
	slices.Sort(kept) // "index" comes first: #0 then #1
	if len(kept) != 2 {
		t.Fatalf("%d results of #0 and #1", len(kept))
	}
	if err := os.WriteFile(resultsPath, []byte(strings.Join(kept, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.editDocument(id, func(doc map[string]any) {
		doc["status"] = "stopped"
		doc["spec"].(map[string]any)["grid"] = json.RawMessage(`{"fast": [5], "slow": [20, 25, 30]}`)
	})
	jobs := e.FolderEntries("jobs")
	docBefore, resultsBefore := e.sweepFiles(id)

	r = e.Run("sweep", "--resume", id, "--ci")
	want := "results.jsonl line 2: index 1 ran fast=5, slow=30, and the sweep's plan has fast=5, slow=25 at index 1"
	if r.Code != 2 || !strings.Contains(r.Stderr, resultsPath) || !strings.Contains(r.Stderr, want) ||
		!strings.Contains(r.Stderr, "start a new sweep") {
		t.Fatalf("resume after the grid was edited: exit %d, want 2 with %q\nstdout: %s\nstderr: %s", r.Code, want, r.Stdout, r.Stderr)
	}
	if docAfter, resultsAfter := e.sweepFiles(id); !bytes.Equal(docAfter, docBefore) || !bytes.Equal(resultsAfter, resultsBefore) ||
		e.FolderEntries("jobs") != jobs {
		t.Fatalf("the refused resume wrote: sweep.json changed %v, results.jsonl changed %v, %d jobs (before %d)",
			!bytes.Equal(docAfter, docBefore), !bytes.Equal(resultsAfter, resultsBefore), e.FolderEntries("jobs"), jobs)
	}

	// A metric that is none, read from the document.
	e.editDocument(id, func(doc map[string]any) {
		spec := doc["spec"].(map[string]any)
		spec["grid"] = json.RawMessage(`{"fast": [5, 10, 15], "slow": [20, 30]}`)
		spec["metric"] = "nonsense"
	})
	r = e.Run("sweep", "--resume", id, "--ci")
	want = filepath.Join(e.Home, "sweeps", id, sweep.DocumentFile) + ": spec.metric nonsense: not a metric of the job report"
	if r.Code != 2 || !strings.Contains(r.Stderr, want) || strings.Contains(r.Stderr, "--metric") {
		t.Fatalf("resume with a metric that is none: exit %d, want 2 with %q (and no --metric)\n%s", r.Code, want, r.Stderr)
	}
	// The same for a run flag: a window the user did not type.
	e.editDocument(id, func(doc map[string]any) {
		doc["spec"].(map[string]any)["metric"] = "sharpe"
		doc["run_flags"].(map[string]any)["from"] = "garbage"
	})
	r = e.Run("sweep", "--resume", id, "--ci")
	want = filepath.Join(e.Home, "sweeps", id, sweep.DocumentFile) + `: run_flags.from: parse time "garbage"`
	if r.Code != 2 || !strings.Contains(r.Stderr, want) || strings.Contains(r.Stderr, "--from") {
		t.Fatalf("resume with a window that is none: exit %d, want 2 with %q (and no --from)\n%s", r.Code, want, r.Stderr)
	}
	// The grid as it was: the resume runs the four runs left.
	e.editDocument(id, func(doc map[string]any) { doc["run_flags"].(map[string]any)["from"] = "2026-01-05" })
	if r = e.Run("sweep", "--resume", id, "--ci", "--output", "json"); r.Code != 0 {
		t.Fatalf("resume of the sweep as it was: exit %d\n%s", r.Code, r.Stderr)
	}
	if doc := e2etest.DecodeSweep(t, r.Stdout); doc.Counts.Done != 6 || e.FolderEntries("jobs") != jobs+4 {
		t.Fatalf("resume of the sweep as it was: counts %+v, %d jobs (before %d)", doc.Counts, e.FolderEntries("jobs"), jobs)
	}
}

// TestSweepUnreadableDocument: a sweep.json cut short (here to 300 bytes)
// is bad input, not a failed run: a resume and status exit 2 naming the
// file and what to do (they exited 1, "load sweep …: unexpected end of
// JSON input"); sweeps lists the others and says on stderr that it left
// this one out, naming its folder (it left it out without a word); prune
// keeps it and says so, and prune --sweep removes it with its jobs.
func TestSweepUnreadableDocument(t *testing.T) {
	e := newEnv(t)
	r := e.Run("sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--jobs", "1", "--from", "2026-01-05", "--to", "2026-01-05 02:00:00",
		"--grid", "fast=3,4")
	if r.Code != 0 {
		t.Fatalf("the sweep: exit %d\n%s", r.Code, r.Stderr)
	}
	id := e2etest.DecodeSweep(t, r.Stdout).SweepID
	dir := filepath.Join(e.Home, "sweeps", id)
	path := filepath.Join(dir, sweep.DocumentFile)
	if err := os.Truncate(path, 300); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"sweep", "--resume", id, "--ci"}, {"status", id}, {"status", id, "--output", "json"}} {
		r := e.Run(args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, path+" is not a readable sweep document (unexpected end of JSON input): it was cut short or edited by hand") ||
			!strings.Contains(r.Stderr, "`stratbench prune --sweep "+id+"` removes this one") || r.Stdout != "" {
			t.Errorf("%s: exit %d, want 2 naming %s and a hint\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, path, r.Stdout, r.Stderr)
		}
	}
	for _, output := range []string{"text", "json"} {
		r := e.Run("sweeps", "--output", output)
		want := "stratbench: sweeps: left out " + id + " (folder " + dir + "): its sweep.json cannot be read (unexpected end of JSON input)"
		if r.Code != 0 || !strings.Contains(r.Stderr, want) {
			t.Errorf("sweeps --output %s: exit %d, want 0 with %q on stderr\nstdout: %s\nstderr: %s", output, r.Code, want, r.Stdout, r.Stderr)
		}
		if output == "json" && strings.TrimSpace(r.Stdout) != "[]" {
			t.Errorf("sweeps --output json: %s, want an empty list", r.Stdout)
		}
	}
	jobs := e.FolderEntries("jobs")
	r = e.Run("prune", "--yes")
	if r.Code != 0 || !strings.Contains(r.Stdout, "kept 1 sweep whose sweep.json cannot be read; prune --sweep ID removes one: "+id) ||
		e.FolderEntries("sweeps") != 1 || e.FolderEntries("jobs") != jobs {
		t.Fatalf("prune: exit %d, %d sweeps and %d jobs left (want 1 and %d)\n%s%s", r.Code, e.FolderEntries("sweeps"), e.FolderEntries("jobs"), jobs, r.Stdout, r.Stderr)
	}
	r = e.Run("prune", "--yes", "--sweep", id)
	if r.Code != 0 || !strings.Contains(r.Stdout, "removed 1 sweep and 2 jobs") || e.FolderEntries("sweeps") != 0 || e.FolderEntries("jobs") != 0 {
		t.Fatalf("prune --sweep: exit %d, %d sweeps and %d jobs left\n%s%s", r.Code, e.FolderEntries("sweeps"), e.FolderEntries("jobs"), r.Stdout, r.Stderr)
	}
}

// TestSweepResumeHintAsItRan: a sweep stopped under --ci prints the
// command that resumes it headless, with its --output (on stderr for the
// JSON outputs, whose stdout is data), and that command, pasted, resumes
// it; it printed `stratbench sweep --resume ID`, which opens the sweep
// view, or in a script fails for want of a terminal.
func TestSweepResumeHintAsItRan(t *testing.T) {
	e := newEnv(t)
	for _, output := range []string{"text", "jsonl"} {
		p := e.StartSweep("sweep", e2etest.SweepStrategy, "--ci", "--output", output, "--jobs", "1", "--from", "2026-01-05", "--to", "2026-01-05 02:00:00",
			"--grid", "fast=3,4,5", "--param", "slow_ms=3")
		e.waitForRunInFlight(60*time.Second, e.jobIDs()...)
		p.Cmd.Process.Signal(syscall.SIGINT)
		var lines []string
		for l := range p.Lines {
			lines = append(lines, l)
		}
		p.Cmd.Wait()
		if code := p.Cmd.ProcessState.ExitCode(); code != 130 {
			t.Fatalf("--output %s: exit %d, want 130\n%s", output, code, p.Stderr.String())
		}
		ids, _ := filepath.Glob(filepath.Join(e.Home, "sweeps", "sw-*"))
		slices.Sort(ids)
		id := filepath.Base(ids[len(ids)-1])
		var hint string
		switch output {
		case "text":
			hint = lines[len(lines)-1]
		default:
			hint = strings.TrimSpace(p.Stderr.String())
			hint = hint[strings.LastIndex(hint, "\n")+1:]
		}
		cmd := "stratbench sweep --resume " + id + " --ci"
		if output != "text" {
			cmd += " --output " + output
		}
		if !strings.HasSuffix(hint, "resume: "+cmd) {
			t.Fatalf("--output %s: the hint is %q, want it to end with %q", output, hint, "resume: "+cmd)
		}
		// Pasted, without a terminal: it resumes the sweep to its end.
		r := e.Run(strings.Fields(cmd)[1:]...)
		if r.Code != 0 || len(e.ReadResults(id)) != 3 {
			t.Fatalf("%s: exit %d, %d results\n%s", cmd, r.Code, len(e.ReadResults(id)), r.Stderr)
		}
	}
}

// TestSweepResumeSaysWhatIsLeft: a resumed sweep's first line counts the
// runs this session runs, of the whole (it said "3 runs" for a sweep with
// one done).
func TestSweepResumeSaysWhatIsLeft(t *testing.T) {
	e := newEnv(t)
	p := e.StartSweep("sweep", e2etest.SweepStrategy, "--ci", "--jobs", "1", "--from", "2026-01-05", "--to", "2026-01-05 02:00:00",
		"--grid", "fast=3,4,5", "--param", "slow_ms=3")
	for l := range p.Lines {
		if strings.HasPrefix(l, "#0 ") {
			break // one run done; the next is under way (its bars take 3 ms each)
		}
	}
	p.Cmd.Process.Signal(syscall.SIGINT)
	for range p.Lines {
	}
	if err := p.Cmd.Wait(); p.Cmd.ProcessState.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, p.Stderr.String())
	}
	ids, _ := filepath.Glob(filepath.Join(e.Home, "sweeps", "sw-*"))
	if len(ids) != 1 || len(e.ReadResults(filepath.Base(ids[0]))) != 1 {
		t.Fatalf("sweeps %v, want one with one result", ids)
	}
	id := filepath.Base(ids[0])
	r := e.Run("sweep", "--resume", id, "--ci")
	want := "resuming sweep " + id + ": 2 of 3 runs left of "
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, want) {
		t.Fatalf("resume: exit %d, want 0 and a first line starting %q\n%s%s", r.Code, want, r.Stdout, r.Stderr)
	}
}

// TestSweepDocumentKeys: the sweep document has the keys docs/sweeps.md
// ("The sweep folder and document") lists, null where it says null, in
// sweep.json, in --output json (and status --output json) and in the jsonl
// summary line (without runs); a results line has the keys of its own.
func TestSweepDocumentKeys(t *testing.T) {
	e := newEnv(t)
	r := e.Run("sweep", e2etest.SweepStrategy, "--ci", "--output", "jsonl", "--jobs", "1", "--from", "2026-01-05", "--to", "2026-01-05 02:00:00",
		"--grid", "fast=3,4")
	if r.Code != 0 {
		t.Fatalf("the sweep: exit %d\n%s", r.Code, r.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	var summary struct {
		Sweep map[string]json.RawMessage `json:"sweep"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &summary); err != nil {
		t.Fatal(err)
	}
	var id string
	json.Unmarshal(summary.Sweep["sweep_id"], &id)
	docFile, _ := e.sweepFiles(id)
	docs := map[string][]byte{"sweep.json": docFile, "status --output json": []byte(e.Run("status", id, "--output", "json").Stdout)}
	top := []string{"sweep_id", "status", "strategy", "data", "spec", "executor", "counts", "best", "runs", "started_at", "finished_at", "duration_ms"}
	objects := map[string][]string{
		"strategy": {"path", "sha256"},
		"data":     {"source", "from", "to", "fingerprint"},
		"spec":     {"grid", "params", "constraint", "random", "seed", "metric", "minimize", "jobs", "walk_forward"},
		"executor": {"kind"},
		"counts":   {"total", "done", "passed", "failed"},
		"best":     {"index", "params", "metric", "value", "job_id"},
	}
	nulls := map[string][]string{"spec": {"constraint", "random", "walk_forward"}}
	check := func(name string, doc map[string]json.RawMessage, keys []string) {
		t.Helper()
		for _, k := range keys {
			if _, ok := doc[k]; !ok {
				t.Errorf("%s: no %q", name, k)
			}
		}
		for obj, keys := range objects {
			var o map[string]json.RawMessage
			if err := json.Unmarshal(doc[obj], &o); err != nil {
				t.Errorf("%s: %s is not an object: %s", name, obj, doc[obj])
				continue
			}
			for _, k := range keys {
				if _, ok := o[k]; !ok {
					t.Errorf("%s: no %s.%s", name, obj, k)
				}
			}
			for _, k := range nulls[obj] {
				if string(o[k]) != "null" {
					t.Errorf("%s: %s.%s is %s, want null", name, obj, k, o[k])
				}
			}
		}
		if _, ok := doc["walk_forward"]; ok {
			t.Errorf("%s: a plain sweep's document has walk_forward (the document gains it with a walk-forward)", name)
		}
	}
	for name, body := range docs {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		check(name, doc, top)
	}
	check("summary line", summary.Sweep, slices.DeleteFunc(slices.Clone(top), func(k string) bool { return k == "runs" }))
	if _, ok := summary.Sweep["runs"]; ok {
		t.Errorf("the summary line has runs")
	}
	var line map[string]json.RawMessage
	if err := json.Unmarshal([]byte(lines[0]), &line); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"index", "fold", "phase", "params", "job_id", "status", "failure_kind", "metrics", "fingerprint", "orders_hash", "duration_ms"} {
		if _, ok := line[k]; !ok {
			t.Errorf("results line: no %q: %s", k, lines[0])
		}
	}
}

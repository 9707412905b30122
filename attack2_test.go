package main

// Breaks found by the adversarial pass h-attack2 (round 3 of hardening,
// issues 34 and 35). Each test states the promise it checks; on main at
// the time of the pass, every one of them fails.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stratbench/internal/testenv"
	"stratbench/sweep"
)

// TestAttackSweepRunEqualsCIWithBLAS: docs/sweeps.md promises that a
// sweep run's fingerprint, orders hash and metrics are exactly those of
// the same --ci run. A sweep with --jobs 2 sets OMP_NUM_THREADS and
// friends for its runs (threadEnv) while --ci leaves them unset, so a
// numpy reduction (OpenBLAS splits a long dot product over its pool)
// rounds differently and a strategy that decides on it orders otherwise:
// same fingerprint, another orders hash.
func TestAttackSweepRunEqualsCIWithBLAS(t *testing.T) {
	e := newEnv(t)
	py := testenv.Python(t, "numpy")
	s := filepath.Join("testdata", "attacks2", "blas_threads.py")
	ci := e.run("--ci", "--output", "json", "--python", py, "--param", "k=1", s)
	if ci.code != 0 {
		t.Fatalf("--ci: exit %d: %s", ci.code, ci.stderr)
	}
	rep := decodeReport(t, ci.stdout)
	sw := e.run("sweep", s, "--ci", "--output", "json", "--python", py, "--grid", "k=1,2", "--jobs", "2")
	if sw.code != 0 {
		t.Fatalf("sweep: exit %d: %s", sw.code, sw.stderr)
	}
	var doc sweep.Document
	if err := json.Unmarshal([]byte(sw.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, run := range doc.Runs {
		if run.Fingerprint != rep.Fingerprint {
			continue
		}
		if run.OrdersHash != rep.OrdersHash {
			t.Errorf("sweep run #%d has --ci's fingerprint %s but orders hash %s, --ci %s",
				run.Index, run.Fingerprint, run.OrdersHash, rep.OrdersHash)
		}
		return
	}
	t.Fatalf("no sweep run has --ci's fingerprint %s", rep.Fingerprint)
}

// attackHome makes a home with one finished sweep of two runs (its jobs)
// and returns the sweep's id.
func attackHome(t *testing.T, e *env) string {
	t.Helper()
	r := e.run("sweep", sweepStrategy, "--ci", "--output", "json", "--grid", "fast=3,4", "--jobs", "1")
	if r.code != 0 {
		t.Fatalf("sweep: exit %d: %s", r.code, r.stderr)
	}
	var doc sweep.Document
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.SweepID
}

// editSweep rewrites sweep.json's top-level fields through a JSON map.
func editSweep(t *testing.T, e *env, id string, edit func(map[string]any)) {
	t.Helper()
	path := filepath.Join(e.home, "sweeps", id, "sweep.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAttackLogLineUnbounded: nothing read from the home may size an
// allocation. A job's logs.jsonl of one 400 MB line without a newline
// (a record stratbench never writes: an output line is cut at 64 KiB)
// makes `logs`, `logs --follow` and `report` hold the whole line: 2.3 GB
// of RSS for an 800 MB file, and exit 0 with nothing said.
func TestAttackLogLineUnbounded(t *testing.T) {
	e := newEnv(t)
	attackHome(t, e)
	ids, err := os.ReadDir(filepath.Join(e.home, "jobs"))
	if err != nil || len(ids) == 0 {
		t.Fatal(err, ids)
	}
	id := ids[0].Name()
	if err := os.WriteFile(filepath.Join(e.home, "jobs", id, "logs.jsonl"), bytes.Repeat([]byte("a"), 400<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"logs", id}, {"report", id}} {
		r := e.runBounded(e.command(args...))
		t.Logf("%v: exit %d, peak %d MiB, stderr %q", args, r.code, r.peak>>20, r.stderr)
		if r.peak > maxHostRSS {
			t.Errorf("%v: stratbench's peak RSS %d MiB, over %d MiB", args, r.peak>>20, maxHostRSS>>20)
		}
	}
}

// TestAttackResultsUnbounded: a sweep.json saying "running" and a
// results.jsonl of 24 lines of 12 MB each (each line under the 16 MiB
// line limit, its metrics verbatim) make `status SWEEP`, `sweeps` and
// `prune` hold them all: stratbench's memory grows with the file (500 MiB
// for 300 MB, 2.2 GB for 1.5 GB; `sweep --resume` 940 MiB for 300 MB).
func TestAttackResultsUnbounded(t *testing.T) {
	e := newEnv(t)
	id := attackHome(t, e)
	editSweep(t, e, id, func(m map[string]any) { m["status"] = "running"; m["finished_at"] = nil })
	f, err := os.Create(filepath.Join(e.home, "sweeps", id, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	big := "[" + strings.Repeat("1,", 6<<20) + "1]"
	for i := range 24 {
		fmt.Fprintf(f, `{"index":%d,"fold":null,"phase":null,"params":{"fast":3},"job_id":"x","status":"passed","failure_kind":null,"metrics":{"sharpe":1,"x":%s},"fingerprint":"a","orders_hash":"b","duration_ms":1}`+"\n", i, big)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"status", id}, {"sweeps"}} {
		r := e.runBounded(e.command(args...))
		t.Logf("%v: exit %d, peak %d MiB", args, r.code, r.peak>>20)
		if r.peak > maxHostRSS {
			t.Errorf("%v: stratbench's peak RSS %d MiB, over %d MiB", args, r.peak>>20, maxHostRSS>>20)
		}
	}
}

// TestAttackPruneReadsOutsideTheHome: a record must not name a path that
// stratbench reads. prune hashes the file that a stopped sweep's
// sweep.json names as its strategy, whole, to tell whether the sweep is
// still resumable: named a sparse file of 8 TiB outside the home, prune
// reads it for as long as it takes (minutes to hours; a larger one, days).
func TestAttackPruneReadsOutsideTheHome(t *testing.T) {
	e := newEnv(t)
	id := attackHome(t, e)
	sparse := filepath.Join(t.TempDir(), "strategy.py")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(8 << 40); err != nil {
		t.Skip("no sparse file of 8 TiB here:", err)
	}
	f.Close()
	editSweep(t, e, id, func(m map[string]any) {
		m["status"] = "stopped"
		m["strategy"].(map[string]any)["path"] = sparse
	})
	r := e.runBounded(e.command("prune"))
	if r.code != 0 {
		t.Errorf("prune: exit %d: %s", r.code, r.stderr)
	}
}

// TestAttackJobsListUnbounded: `jobs` and `prune` hold every job's report
// at once (Store.Checked), each up to the 32 MiB a job.json may take: 20
// forged jobs whose failure traceback is 30 MB take them to about 1 GB of
// RSS, and the memory grows with the number of jobs.
func TestAttackJobsListUnbounded(t *testing.T) {
	e := newEnv(t)
	attackHome(t, e)
	ids, err := os.ReadDir(filepath.Join(e.home, "jobs"))
	if err != nil || len(ids) == 0 {
		t.Fatal(err, ids)
	}
	b, err := os.ReadFile(filepath.Join(e.home, "jobs", ids[0].Name(), "job.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "sweep")
	m["status"] = "failed"
	m["failure"] = map[string]any{"kind": "exception", "hook": "on_data", "message": "m", "traceback": strings.Repeat("x", 30<<20)}
	for i := range 20 {
		id := fmt.Sprintf("20261206-0500%02d.000-ab%02d", i, i)
		m["job_id"] = id
		if err := os.MkdirAll(filepath.Join(e.home, "jobs", id), 0o755); err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(m)
		if err := os.WriteFile(filepath.Join(e.home, "jobs", id, "job.json"), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"jobs"}, {"prune", "--older-than", "1000d"}} {
		r := e.runBounded(e.command(args...))
		t.Logf("%v: exit %d, peak %d MiB", args, r.code, r.peak>>20)
		if r.peak > maxHostRSS {
			t.Errorf("%v: stratbench's peak RSS %d MiB, over %d MiB", args, r.peak>>20, maxHostRSS>>20)
		}
	}
}

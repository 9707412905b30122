package e2e

// The robustness block's cost (docs/BENCHMARKS.md): a 1,000-run sweep of
// 20,000 bars, its runs made in the test (each job folder holds an equity
// record of 20,000 events, as a run of the bars writes it), finished by a
// resume that has nothing left to run, so that the command does what a
// sweep does when its last run ends: tally, compute the block, save.
// Against the same resume with the first run's record gone (the block is
// then given up at once), the difference is the block's. Run it with
// STRATBENCH_ROBUSTNESS_BENCH=1 (it writes 1.3 GB):
//
//	STRATBENCH_ROBUSTNESS_BENCH=1 go test -run TestRobustnessBench -v -timeout 30m .

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"stratbench/internal/e2etest"
	"stratbench/sweep"
)

func TestRobustnessBench(t *testing.T) {
	if os.Getenv("STRATBENCH_ROBUSTNESS_BENCH") == "" {
		t.Skip("set STRATBENCH_ROBUSTNESS_BENCH=1 to measure the robustness block")
	}
	const runs, bars = 1000, 20_000
	e := newEnv(t)
	data := randomWalk(t, 5, bars, 4, 0)
	// A sweep of two runs gives the folder, the document and the data's
	// fingerprint; the test makes it one of 1,000 runs, stopped.
	r := e.Run("sweep", randomTrader, "--ci", "--output", "json", "--jobs", "2", "--data", data, "--allow-short", "--grid", "seed=0:1:1")
	if r.Code != 0 {
		t.Fatalf("the sweep: exit %d\n%s", r.Code, r.Stderr)
	}
	doc := e2etest.DecodeSweep(t, r.Stdout)
	dir := filepath.Join(e.Home, "sweeps", doc.SweepID)
	var raw map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, sweep.DocumentFile))
	json.Unmarshal(b, &raw)
	seeds := make([]int, runs)
	for i := range seeds {
		seeds[i] = i
	}
	raw["status"] = "stopped"
	raw["spec"].(map[string]any)["grid"] = map[string]any{"seed": seeds}
	raw["counts"] = map[string]any{"total": runs, "done": runs, "passed": runs, "failed": 0}
	b, _ = json.Marshal(raw)
	if err := os.WriteFile(filepath.Join(dir, sweep.DocumentFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	results, err := os.Create(filepath.Join(dir, sweep.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	made := time.Now()
	g := rand.New(rand.NewPCG(9, 9))
	for i := range runs {
		id := fmt.Sprintf("20261206-000000.000-%04d", i)
		line, _ := json.Marshal(sweep.Result{Index: int64(i), Params: sweep.Params{{Name: "seed", Value: int64(i)}}, JobID: id,
			Status: sweep.RunPassed, Metrics: json.RawMessage(fmt.Sprintf(`{"start_equity": 10000, "sharpe": %v}`, g.Float64())),
			Fingerprint: "fp", OrdersHash: "oh", DurationMS: 1})
		results.Write(append(line, '\n'))
		art := filepath.Join(e.Home, "jobs", id, "artifacts")
		if err := os.MkdirAll(art, 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(art, "equity.csv"))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		w.WriteString("event,time,equity,cash,symbol,close\n")
		eq := 10_000.0
		for k := range bars {
			eq *= 1 + 0.005*g.NormFloat64()
			buf := strconv.AppendInt(nil, int64(k), 10)
			buf = append(buf, ',')
			buf = start.Add(time.Duration(k)*time.Minute).AppendFormat(buf, time.RFC3339)
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, eq, 'f', -1, 64)
			buf = append(buf, ",5000,RW,100.25\n"...)
			w.Write(buf)
		}
		w.Flush()
		f.Close()
	}
	results.Close()
	t.Logf("made %d job folders of %d events in %s", runs, bars, time.Since(made).Round(time.Second))

	resume := func() (wall, cpu time.Duration, rssKiB int64, d *sweep.Document) {
		// Back to stopped, as the test made it.
		if err := os.WriteFile(filepath.Join(dir, sweep.DocumentFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := e.Command("sweep", "--resume", doc.SweepID, "--ci", "--output", "json")
		began := time.Now()
		out, err := cmd.Output()
		wall = time.Since(began)
		if err != nil {
			t.Fatalf("resume: %v", err)
		}
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		rssKiB = cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
		return wall, cpu, rssKiB, e2etest.DecodeSweep(t, string(out))
	}
	first := filepath.Join(e.Home, "jobs", "20261206-000000.000-0000", "artifacts", "equity.csv")
	for round := range 2 {
		os.Rename(first, first+".away")
		wall0, cpu0, rss0, d0 := resume()
		os.Rename(first+".away", first)
		if d0.Robustness != nil {
			t.Fatal("the block was computed without the first run's record")
		}
		wall, cpu, rss, d := resume()
		if d.Robustness == nil {
			t.Fatalf("no block: %s", d.RobustnessReason)
		}
		rb := d.Robustness
		t.Logf("round %d: without the block %s wall, %s CPU, peak RSS %.1f MiB; with it %s wall, %s CPU, peak RSS %.1f MiB (%d trials, %d periods, %d blocks, PBO %.3f, DSR %.3f)",
			round, wall0.Round(time.Millisecond), cpu0.Round(time.Millisecond), float64(rss0)/1024,
			wall.Round(time.Millisecond), cpu.Round(time.Millisecond), float64(rss)/1024, rb.Trials, rb.Periods, rb.Blocks, rb.PBO, rb.DeflatedSharpe)
		t.Logf("BENCH robustness-1000x20000: %s wall, %s CPU more; peak RSS %.1f MiB (%+.1f MiB)", (wall - wall0).Round(time.Millisecond),
			(cpu - cpu0).Round(time.Millisecond), float64(rss)/1024, float64(rss-rss0)/1024)
	}
}

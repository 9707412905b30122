// Command raybench measures a sweep on a local two-node Ray cluster against
// the same sweep run locally, on this machine:
//
//	go build -o /tmp/stratbench . && go run ./bench/raybench -binary /tmp/stratbench
//
// The cluster is the tests' (internal/raytest, the Ray of .venv-test: run
// ./test.sh once to install it): a head without CPUs and one worker node
// with 2 CPUs, so the cluster has the 2 slots that `--jobs 2` gives the
// local sweep. The sweep is 24 combinations of bench/sweep/cpu.py (a
// CPU-bound pure-Python strategy) over the same bars. It prints the wall
// time of each, the time to the first result, the mean run time (the
// reports' duration_ms), what Ray adds (the set-up before the first
// result, then the overhead per run and slot), and the load average (a
// busy machine says little).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"stratbench/internal/raytest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "raybench:", err)
		os.Exit(1)
	}
}

type sweepTiming struct {
	wall, firstResult time.Duration
	runs              int
	runMS             int64 // sum of the runs' duration_ms
	fingerprints      map[int64]string
}

func run() error {
	binary := flag.String("binary", "", "the stratbench binary (linux/amd64)")
	bars := flag.Int("bars", 2000, "bars of the generated data")
	flag.Parse()
	if *binary == "" {
		return errors.New("-binary is required")
	}
	bin, err := filepath.Abs(*binary)
	if err != nil {
		return err
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	venv := filepath.Join(root, ".venv-test", "bin")
	if _, err := os.Stat(filepath.Join(venv, "ray")); err != nil {
		return fmt.Errorf("no Ray in .venv-test (run ./test.sh once): %w", err)
	}
	tmp, err := os.MkdirTemp("", "raybench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	data := filepath.Join(tmp, "bars.csv")
	gen := exec.Command("python3", filepath.Join(root, "bench", "gen_bars.py"), fmt.Sprint(*bars), data)
	gen.Stderr = os.Stderr
	if err := gen.Run(); err != nil {
		return fmt.Errorf("generating bars: %w", err)
	}
	args := []string{"sweep", filepath.Join(root, "bench", "sweep", "cpu.py"), "--ci", "--output", "jsonl", "--data", data,
		"--grid", "k=1:24:1"}
	if err := checkGrid(root); err != nil {
		return err
	}

	fmt.Printf("load before: %s\n", load())
	local, err := timeSweep(bin, filepath.Join(tmp, "home-local"), append(args, "--jobs", "2"))
	if err != nil {
		return fmt.Errorf("local sweep: %w", err)
	}
	fmt.Printf("local --jobs 2: %d runs in %v (first result after %v), mean run %v; load %s\n",
		local.runs, local.wall.Round(time.Millisecond), local.firstResult.Round(time.Millisecond), mean(local), load())

	began := time.Now()
	c, err := raytest.StartCluster(context.Background(), venv, raytest.Options{
		HeadCPUs: 0, Workers: []raytest.WorkerOptions{{Name: "node2", CPUs: 2}},
		Env: []string{"TMPDIR=" + tmp},
	})
	if err != nil {
		return err
	}
	defer func() {
		rep, err := c.Stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "raybench: stopping the cluster:", err)
		}
		fmt.Printf("cluster stopped in %v, %d processes lingered\n", rep.Took.Round(time.Millisecond), rep.Lingering)
		os.RemoveAll(c.Dir)
	}()
	fmt.Printf("cluster (head + node2 with 2 CPUs) started in %v\n", time.Since(began).Round(time.Millisecond))
	for i, what := range []string{"first (package uploaded)", "second (package already there)"} {
		home := filepath.Join(tmp, fmt.Sprintf("home-ray-%d", i))
		r, err := timeSweep(bin, home, append(args, "--executor", "ray", "--ray-address", c.Dashboard))
		if err != nil {
			return fmt.Errorf("ray sweep: %w", err)
		}
		same := 0
		for idx, fp := range r.fingerprints {
			if local.fingerprints[idx] == fp {
				same++
			}
		}
		// The set-up is the wait for the first result beyond the local
		// one's; the per-run overhead is what the runs after the first
		// took beyond the local runs after the first, per slot.
		setup := r.firstResult - local.firstResult
		perRun := ((r.wall - r.firstResult) - (local.wall - local.firstResult)) * 2 / time.Duration(r.runs-1)
		fmt.Printf("ray, %s: %d runs in %v (first result after %v), mean run %v, %d/%d fingerprints as local; "+
			"Ray adds %v of set-up, then %v per run per slot; load %s\n",
			what, r.runs, r.wall.Round(time.Millisecond), r.firstResult.Round(time.Millisecond), mean(r), same, r.runs,
			setup.Round(time.Millisecond), perRun.Round(time.Millisecond), load())
	}
	return nil
}

// checkGrid makes sure the strategy declares k, the param the grid sweeps.
func checkGrid(root string) error {
	src, err := os.ReadFile(filepath.Join(root, "bench", "sweep", "cpu.py"))
	if err != nil {
		return err
	}
	if !strings.Contains(string(src), `"k"`) {
		return errors.New(`bench/sweep/cpu.py declares no param "k"`)
	}
	return nil
}

func timeSweep(bin, home string, args []string) (*sweepTiming, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "STRATBENCH_HOME="+home)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	t := &sweepTiming{fingerprints: map[int64]string{}}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Type        string `json:"type"`
			Index       int64  `json:"index"`
			Fingerprint string `json:"fingerprint"`
			DurationMS  int64  `json:"duration_ms"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Type == "summary" {
			continue
		}
		if t.runs == 0 {
			t.firstResult = time.Since(began)
		}
		t.runs++
		t.runMS += line.DurationMS
		t.fingerprints[line.Index] = line.Fingerprint
	}
	if err := cmd.Wait(); err != nil {
		return nil, err
	}
	t.wall = time.Since(began)
	return t, nil
}

func mean(t *sweepTiming) time.Duration {
	if t.runs == 0 {
		return 0
	}
	return (time.Duration(t.runMS/int64(t.runs)) * time.Millisecond).Round(time.Millisecond)
}

func load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}

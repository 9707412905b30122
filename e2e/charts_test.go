package e2e

// The sandbox's private /tmp, and charts saved as artifacts, through the real
// binary: the /tmp is a 256 MiB tmpfs of each run's own, full with ENOSPC,
// never on the host's disk; matplotlib (plt.show() included) and Plotly
// write their files with and without the sandbox, with the packages of the
// tests' environment (./test.sh).

import (
	"bytes"
	"encoding/json"
	"image/png"
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

	"stratbench/internal/e2etest"
	"stratbench/internal/testenv"
)

// tmpProbe is the metadata of testdata/strategies/private_tmp.py.
type tmpProbe struct {
	TmpBytes   int64  `json:"tmp_bytes"`
	Tmpdir     string `json:"tmpdir"`
	Tempdir    string `json:"tempdir"`
	HostFile   string `json:"host_file"`
	Path       string `json:"path"`
	ENOSPC     bool   `json:"enospc"`
	WroteBytes int64  `json:"wrote_bytes"`
}

// TestSandboxPrivateTmp runs two sandboxed strategies at once, each filling
// its /tmp and holding the file: one writes 300 MiB and gets ENOSPC after
// 256 MiB, the other 200 MiB beside it without error (a shared /tmp would
// have been full). Meanwhile the host's disk has not lost what they hold,
// and neither sees the host's /tmp (a file the test put there). The
// strategy's folder lies under the host's /tmp too, as a test's does.
func TestSandboxPrivateTmp(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "strategy.py")
	e2etest.CopyFileTo(t, e2etest.Strategy("private_tmp.py"), script)
	hostFile := filepath.Join(e.Tmp, "host-secret")
	if err := os.WriteFile(hostFile, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	goFile := filepath.Join(dir, "go")
	freeBefore := hostFree(t, e.Home, "/tmp")

	type run struct {
		cmd *exec.Cmd
		out bytes.Buffer
	}
	runs := map[int]*run{300: {}, 200: {}}
	for mib, r := range runs {
		r.cmd = e.Command("--ci", "--output", "json", "--sandbox", "--to", "2026-01-05 01:00:00", script,
			"--param", "fill_mib="+strconv.Itoa(mib), "--param", "host_file="+hostFile, "--param", "hold="+goFile)
		r.cmd.Stdout = &r.out
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	waitForLogs(t, e.Home, "holding", len(runs), 30*time.Second)
	freeHolding := hostFree(t, e.Home, "/tmp")
	if err := os.WriteFile(goFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// 456 MiB are held in the two /tmp folders now; other work on the
	// machine may write meanwhile (a parallel go test -race wrote 141 MiB
	// in these seconds once). Had the files reached the host's disk, it
	// would have lost all 456 MiB: losing less than half of that proves
	// they did not.
	t.Logf("host free space: %d MiB before, %d MiB while the runs hold their files", freeBefore>>20, freeHolding>>20)
	if freeBefore-freeHolding > 228<<20 {
		t.Errorf("the host's disk lost %d MiB while the sandboxes held 456 MiB in /tmp", (freeBefore-freeHolding)>>20)
	}
	for mib, r := range runs {
		if err := r.cmd.Wait(); err != nil {
			t.Fatalf("fill %d MiB: %v\n%s", mib, err, r.out.String())
		}
		rep := e2etest.DecodeReport(t, r.out.String())
		var got tmpProbe
		if err := json.Unmarshal(rep.Metadata, &got); err != nil {
			t.Fatal(err)
		}
		t.Logf("fill %d MiB: %+v", mib, got)
		if rep.Status != "passed" || rep.Failure != nil {
			t.Errorf("fill %d MiB: status %s, failure %+v; a full /tmp is the strategy's problem, not a failure", mib, rep.Status, rep.Failure)
		}
		if got.TmpBytes != 256<<20 || got.Tmpdir != "/tmp" || got.Tempdir != "/tmp" {
			t.Errorf("fill %d MiB: /tmp of %d bytes, TMPDIR %q, tempfile's folder %q; want a 256 MiB /tmp for both", mib, got.TmpBytes, got.Tmpdir, got.Tempdir)
		}
		if got.HostFile != "FileNotFoundError" {
			t.Errorf("fill %d MiB: reading the host's %s: %s, want FileNotFoundError", mib, hostFile, got.HostFile)
		}
		if _, err := os.Stat(got.Path); !os.IsNotExist(err) {
			t.Errorf("fill %d MiB: the sandbox's %s is on the host: %v", mib, got.Path, err)
		}
		switch mib {
		case 300:
			if !got.ENOSPC || got.WroteBytes < 250<<20 || got.WroteBytes > 256<<20 {
				t.Errorf("300 MiB: ENOSPC %v after %d bytes, want ENOSPC after about 256 MiB", got.ENOSPC, got.WroteBytes)
			}
		case 200:
			if got.ENOSPC || got.WroteBytes != 200<<20 {
				t.Errorf("200 MiB beside the full one: ENOSPC %v after %d bytes, want all written (a /tmp of its own)", got.ENOSPC, got.WroteBytes)
			}
		}
		if rep.Resources.PeakMemoryBytes < int64(min(mib, 256)-10)<<20 {
			t.Errorf("fill %d MiB: peak memory %d MiB, want the /tmp counted in it", mib, rep.Resources.PeakMemoryBytes>>20)
		}
	}
	e.assertNoLeftovers(nil, "pidns")
}

// TestSandboxStrategyDirectlyInTmp: a strategy whose folder is /tmp itself
// would make the whole host's /tmp readable in the sandbox: the run refuses.
func TestSandboxStrategyDirectlyInTmp(t *testing.T) {
	e := newEnv(t)
	f, err := os.CreateTemp("/tmp", "stratbench-direct-*.py")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f.Name())
	f.Close()
	e2etest.CopyFileTo(t, e2etest.Strategy("ok_counter.py"), f.Name())
	r := e.Run("--ci", "--sandbox", f.Name())
	if r.Code != 2 || !strings.Contains(r.Stderr, "/tmp, private in the sandbox, would be a folder it reads") {
		t.Fatalf("exit %d, stderr %q; want exit 2 naming /tmp", r.Code, r.Stderr)
	}
}

// TestMatplotlibChart: with and without the sandbox, plt.show() returns and
// equity.png is a PNG image; the backend is Agg, and the sandbox's
// matplotlib folder is in its private /tmp.
func TestMatplotlibChart(t *testing.T) {
	py := testenv.Python(t, "matplotlib")
	sandboxModes(t, py, []string{"--to", "2026-01-05 02:00:00"}, func(t *testing.T, e *env, args []string, sandboxed bool) {
		cmd := e.Command(append(args, e2etest.Strategy("chart_matplotlib.py"))...)
		// The user's own choice of backend would win: none here.
		cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "MPLBACKEND=") })
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		rep := e2etest.DecodeReport(t, string(out))
		var got struct{ Backend, Configdir, Png string }
		if err := json.Unmarshal(rep.Metadata, &got); err != nil {
			t.Fatal(err)
		}
		if rep.Status != "passed" || got.Backend != "Agg" {
			t.Fatalf("status %s, backend %q, failure %+v", rep.Status, got.Backend, rep.Failure)
		}
		if sandboxed && got.Configdir != "/tmp/matplotlib" {
			t.Errorf("matplotlib's folder %q, want /tmp/matplotlib (the private /tmp)", got.Configdir)
		}
		if logs := e.Run("logs", rep.JobID); !strings.Contains(logs.Stdout, "show returned") {
			t.Errorf("no line after plt.show():\n%s", logs.Stdout)
		}
		f, err := os.Open(filepath.Join(e.Home, "jobs", rep.JobID, "artifacts", "equity.png"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Fatalf("equity.png: %v", err)
		}
		if b := img.Bounds(); b.Dx() != 480 || b.Dy() != 240 {
			t.Errorf("equity.png is %v, want 480×240 (6×3 inches at 80 dpi)", b)
		}
		assertStatusLists(t, e, rep.JobID, "equity.png")
	})
}

// TestPlotlyChart: in the sandbox (no network), Plotly writes a
// self-contained HTML chart: plotly.js inside, no script from the network.
func TestPlotlyChart(t *testing.T) {
	py := testenv.Python(t, "plotly")
	e := newEnv(t)
	r := e.Run("--ci", "--output", "json", "--sandbox", "--python", py, "--to", "2026-01-05 02:00:00", e2etest.Strategy("chart_plotly.py"))
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	rep := e2etest.DecodeReport(t, r.Stdout)
	html, err := os.ReadFile(filepath.Join(e.Home, "jobs", rep.JobID, "artifacts", "chart.html"))
	if err != nil {
		t.Fatal(err)
	}
	if remote := regexp.MustCompile(`(?i)<script[^>]*\ssrc=["']?(https?:)?//`).Find(html); remote != nil {
		t.Errorf("chart.html loads a script from the network: %s", remote)
	}
	// plotly.js itself, embedded (its bundle registers window.Plotly).
	assertStatusLists(t, e, rep.JobID, "chart.html")
	if len(html) < 1<<20 || !bytes.Contains(html, []byte("Plotly.newPlot")) || !bytes.Contains(html, []byte("plotly.js v")) {
		t.Errorf("chart.html (%d bytes) does not embed plotly.js", len(html))
	}
}

type statusArtifact struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// assertStatusLists checks that `status JOB --output json` lists the file
// among the job's artifacts with its size on disk, the cap beside them, and
// that the text output names it too.
func assertStatusLists(t *testing.T, e *env, id, name string) {
	t.Helper()
	r := e.Run("status", id, "--output", "json")
	if r.Code != 0 {
		t.Fatalf("status: exit %d\n%s", r.Code, r.Stderr)
	}
	var got struct {
		JobID     string `json:"job_id"`
		Artifacts struct {
			Dir      string           `json:"dir"`
			Files    []statusArtifact `json:"files"`
			CapBytes int64            `json:"cap_bytes"`
		} `json:"artifacts"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.Home, "jobs", id, "artifacts")
	info, err := os.Stat(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(got.Artifacts.Files, func(f statusArtifact) bool { return f.Name == name })
	if got.JobID != id || got.Artifacts.Dir != dir || i < 0 || got.Artifacts.Files[i].Bytes != info.Size() || got.Artifacts.CapBytes != 2<<30 {
		t.Errorf("status JSON lists %+v, want %s of %d bytes in %s", got, name, info.Size(), dir)
	}
	if text := e.Run("status", id); !strings.Contains(text.Stdout, "artifacts    "+dir) || !strings.Contains(text.Stdout, name) {
		t.Errorf("status text does not list %s:\n%s", name, text.Stdout)
	}
}

// hostFree returns the space available to unprivileged users on the file
// systems of paths, each file system counted once.
func hostFree(t *testing.T, paths ...string) int64 {
	t.Helper()
	var free int64
	seen := map[uint64]bool{}
	for _, path := range paths {
		var st syscall.Stat_t
		var fs syscall.Statfs_t
		if err := syscall.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Statfs(path, &fs); err != nil {
			t.Fatal(err)
		}
		if !seen[st.Dev] {
			seen[st.Dev] = true
			free += int64(fs.Bavail) * fs.Bsize
		}
	}
	return free
}

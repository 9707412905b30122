package ray

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"stratbench/internal/leakcheck"
	"stratbench/internal/raytest"
	"stratbench/internal/testenv"
)

// The package's integration tests share one real cluster: a head without
// CPUs (as production heads are set up) and a worker, node2, with 2 CPUs.
// It starts with the first test that needs it and stops after the last;
// TestMain then fails if any process of it is left, or any goroutine of
// this package or of an HTTP connection.
var shared struct {
	once    sync.Once
	cluster *raytest.Cluster
	err     error
	skip    string
}

// cluster returns the shared cluster, starting it on first use.
func cluster(t *testing.T) *raytest.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts a Ray cluster")
	}
	py := testenv.Python(t, "ray", "ray.dashboard.modules.job") // skips (or fails) without the environment
	shared.once.Do(func() {
		shared.cluster, shared.err = raytest.StartCluster(context.Background(), filepath.Dir(py), raytest.Options{
			HeadCPUs: 0,
			Workers:  []raytest.WorkerOptions{{Name: "node2", CPUs: 2}},
		})
		if shared.err == nil {
			pss, n, _ := shared.cluster.Memory()
			fmt.Fprintf(os.Stderr, "ray tests: cluster (head + node2) started in %v; %d processes, PSS %.0f MiB\n",
				shared.cluster.StartTook.Round(time.Millisecond), n, float64(pss)/(1<<20))
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.cluster
}

func TestMain(m *testing.M) {
	if helper := os.Getenv(helperEnv); helper != "" {
		os.Exit(runHelper(helper))
	}
	code := m.Run()
	if c := shared.cluster; c != nil {
		pss, n, _ := c.Memory()
		rep, err := c.Stop()
		fmt.Fprintf(os.Stderr, "ray tests: before stopping, %d processes, PSS %.0f MiB; stopped in %v\n", n, float64(pss)/(1<<20), rep.Took.Round(time.Millisecond))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
		if ps, _ := c.Processes(); len(ps) > 0 {
			fmt.Fprintf(os.Stderr, "ray tests: %d processes of the cluster left: %+v\n", len(ps), ps)
			code = 1
		}
		os.RemoveAll(c.Dir)
	}
	// Goroutines of this package, of an HTTP connection or a WebSocket.
	if leaked := leakcheck.Leaked("stratbench/sweep/ray", "net/http.(*persistConn)", "golang.org/x/net/websocket",
		"stratbench/internal/raytest"); leaked != "" {
		fmt.Fprintf(os.Stderr, "ray tests: goroutines leaked:\n%s\n", leaked)
		code = 1
	}
	os.Exit(code)
}

// The test binary is also the binary of the packages the tests send to the
// cluster, and runs on the node as a helper (the os/exec way): with
// helperEnv set, TestMain runs the helper instead of the tests.
const helperEnv = "STRATBENCH_RAY_TEST_HELPER"

// helperLine starts the line a helper prints with its findings.
const helperLine = "HELPER "

// helperReport is what the "verify" helper prints.
type helperReport struct {
	Files      int    `json:"files"`
	Bytes      int64  `json:"bytes"`
	Node       string `json:"node"` // the node's tag, set by raytest
	Executable bool   `json:"executable"`
	Data       []string
}

// runHelper runs on a node, in the job's working directory.
func runHelper(mode string) int {
	switch mode {
	case "verify":
		// Check the unpacked package against its manifest, file by file.
		raw, err := os.ReadFile(PackageManifest)
		if err != nil {
			fmt.Println("helper:", err)
			return 1
		}
		var man Manifest
		if err := json.Unmarshal(raw, &man); err != nil {
			fmt.Println("helper: manifest:", err)
			return 1
		}
		rep := helperReport{Node: os.Getenv(raytest.NodeTagEnv), Data: man.Data}
		for _, e := range man.Files {
			f, err := os.Open(filepath.FromSlash(e.Path))
			if err != nil {
				fmt.Println("helper:", err)
				return 1
			}
			h := sha256.New()
			n, err := io.Copy(h, f)
			f.Close()
			if err != nil || n != e.Size || hex.EncodeToString(h.Sum(nil)) != e.SHA256 {
				fmt.Printf("helper: %s: %d bytes (%v), not as the manifest says (%d bytes)\n", e.Path, n, err, e.Size)
				return 1
			}
			rep.Files++
			rep.Bytes += n
		}
		if fi, err := os.Stat(man.Binary); err == nil && fi.Mode()&0o111 != 0 {
			rep.Executable = true
		}
		out, _ := json.Marshal(rep)
		fmt.Println(helperLine + string(out))
		return 0
	}
	if mode == "shard" {
		return runShard()
	}
	fmt.Println("helper: unknown mode", mode)
	return 2
}

// shardPayload is what the stand-in shard takes for a run.
type shardPayload struct {
	MS       int    `json:"ms"`        // work that long, or
	Gate     string `json:"gate"`      // until this file exists
	FinishMS int    `json:"finish_ms"` // on a stop, take that long (on_finish) before answering
	MarkDir  string `json:"mark_dir"`  // write running-INDEX-NODE there when the run starts
}

// runShard is a stand-in for stratbench's shard mode, speaking the slot
// protocol on stdin and stdout: "ready" once started; for each "run", a
// "result" after the work, or after FinishMS when a "stop" comes first
// (status "stopped", on_finish true); EOF ends it.
func runShard() int {
	node := os.Getenv(raytest.NodeTagEnv)
	if i := strings.LastIndexByte(node, '/'); i >= 0 {
		node = node[i+1:]
	}
	type message struct {
		Type    string          `json:"type"`
		Key     RunKey          `json:"key"`
		Payload json.RawMessage `json:"payload"`
	}
	in := make(chan message)
	// The reader's owner is this process: it ends at EOF.
	go func() {
		defer close(in)
		s := bufio.NewScanner(os.Stdin)
		s.Buffer(make([]byte, 1<<20), 16<<20)
		for s.Scan() {
			var m message
			if err := json.Unmarshal(s.Bytes(), &m); err != nil {
				fmt.Fprintln(os.Stderr, "shard:", err)
				os.Exit(2)
			}
			in <- m
		}
	}()
	out := json.NewEncoder(os.Stdout)
	out.Encode(map[string]any{"type": "ready", "node": node})
	for m := range in {
		switch m.Type {
		case "stop":
			continue // nothing runs
		case "run":
		default:
			fmt.Fprintln(os.Stderr, "shard: unknown message", m.Type)
			return 2
		}
		var p shardPayload
		if err := json.Unmarshal(m.Payload, &p); err != nil {
			fmt.Fprintln(os.Stderr, "shard: payload:", err)
			return 2
		}
		if p.MarkDir != "" {
			os.WriteFile(filepath.Join(p.MarkDir, fmt.Sprintf("running-%d-%s", m.Key.Index, node)), nil, 0o644)
		}
		status, onFinish := "passed", false
		deadline := time.Now().Add(time.Duration(p.MS) * time.Millisecond)
		tick := time.NewTicker(20 * time.Millisecond)
	work:
		for {
			select {
			case s, ok := <-in:
				if !ok {
					return 0 // the slot is gone
				}
				if s.Type == "stop" {
					time.Sleep(time.Duration(p.FinishMS) * time.Millisecond)
					status, onFinish = "stopped", true
					break work
				}
			case <-tick.C:
				if p.Gate != "" {
					if _, err := os.Stat(p.Gate); err == nil {
						break work
					}
				} else if time.Now().After(deadline) {
					break work
				}
			}
		}
		tick.Stop()
		out.Encode(map[string]any{"type": "result", "key": m.Key, "result": map[string]any{
			"status": status, "on_finish": onFinish, "node": node, "index": m.Key.Index,
			"python": os.Getenv("STRATBENCH_RAY_PYTHON"),
		}})
	}
	return 0
}

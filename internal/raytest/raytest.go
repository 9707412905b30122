// Package raytest starts real Ray clusters on this machine for tests: a head
// node and worker nodes, each a `ray start --block` child process, with the
// Ray of the tests' virtual environment (internal/testenv).
//
// Each cluster has a temporary folder of its own, shared by its nodes (Ray's
// job log endpoints read a job's log from the folder of the cluster's
// session, so nodes on one machine must share it), ports chosen free on
// this machine, and its dashboard bound to 127.0.0.1. Every process of the
// cluster carries the cluster's tag in its environment (and the node's),
// which Ray passes on to the processes it starts, job entrypoints included:
// that is how Kill finds every process of a node, and how Stop proves that
// nothing is left (a process counts as the cluster's when its environment
// carries the tag, or its command line or an open file names the
// cluster's folder; Ray's agents rewrite their command line and
// environment, but keep their logs open there).
//
// A cluster started with Options.Token uses Ray's token authentication
// (RAY_AUTH_MODE=token): its nodes read the token from a file of the
// cluster's folder, and it refuses requests without it.
//
// Waits are on conditions (the dashboard answers, a node is registered
// alive, a process is gone), each with a timeout and a message naming what
// did not happen.
//
// The file is long because a cluster's life is one sequence (ports, head,
// workers, waits, kill, stop, proof that nothing is left) whose parts share
// the cluster's tag and folder; it is test support, not product code.
package raytest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"stratbench/internal/proctest"
	"stratbench/internal/testenv"
)

// Environment variables that tag the cluster's processes.
const (
	ClusterTagEnv = "STRATBENCH_RAYTEST_CLUSTER"
	NodeTagEnv    = "STRATBENCH_RAYTEST_NODE"
)

// NodeResource is how much of its own custom resource each worker node
// advertises: a resource named after the node, so a test can pin work to it
// (entrypoint_resources {"node2": 1}) and many pieces at once.
const NodeResource = 1000

// Options describe a cluster.
type Options struct {
	// HeadCPUs is what the head advertises. Zero: none, as production
	// heads are usually set up, so that only jobs meant for the head (that
	// reserve nothing) run there.
	HeadCPUs int
	// Workers are started after the head, in order.
	Workers []WorkerOptions
	// StartTimeout bounds the start of each node (default 120 s).
	StartTimeout time.Duration
	// StopGrace is how long Stop lets Ray shut down on SIGTERM before it
	// kills what is left (default 30 s; Ray drains a node for up to 30 s).
	StopGrace time.Duration
	// Env is added to the environment of every Ray process.
	Env []string
	// Token, when set, starts the cluster with Ray's token authentication
	// (RAY_AUTH_MODE=token): every node reads the token from a file of the
	// cluster's folder (RAY_AUTH_TOKEN_PATH, mode 0600), never from its
	// environment or command line, and the cluster's own requests (the
	// waits, Nodes) send it. Ray refuses requests without it (401) or with
	// another (403).
	Token string
	// Logf, when set, is told what the cluster did besides the usual (a
	// node started again). Start sets it to the test's Logf.
	Logf func(format string, args ...any)
}

// WorkerOptions describe a worker node.
type WorkerOptions struct {
	Name string // letters, digits, '_' or '-'; also the node's resource
	CPUs int
}

// Node is one node of a cluster.
type Node struct {
	Name string // "head" or the worker's name
	ID   string // Ray's node id, once registered
	Head bool

	cmd    *exec.Cmd
	out    string        // the file with `ray start`'s output
	exited chan struct{} // closed when `ray start` has exited
	err    error         // its exit status, valid after exited
}

// Cluster is a running local cluster.
type Cluster struct {
	Dashboard string // http://127.0.0.1:PORT
	GCS       string // HOST:PORT, for `ray start --address`
	Dir       string // the cluster's temporary folder
	Bin       string // the folder of the `ray` and `python` used
	Head      *Node
	Workers   []*Node
	// TokenFile is the file the nodes read the token from (Options.Token
	// set), else "".
	TokenFile string
	// StartTook is how long Start took, head and workers.
	StartTook time.Duration

	retired []*Node // workers whose start failed and was tried again
	// workerPorts chooses the ports of a worker's attempt (freePorts when
	// nil); a test of the retry gives the first attempt a taken one.
	workerPorts func(n int) ([]int, error)
	tag         string
	opts        Options
	http        *http.Client
	mu          sync.Mutex // guards stopped
	stopped     bool
}

// Start starts a cluster and registers its Stop (with the check that no
// process is left) as a cleanup of t. The test is skipped without the
// virtual environment (or fails, under ./test.sh).
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	py := testenv.Python(t, "ray", "ray.dashboard.modules.job")
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	c, err := StartCluster(context.Background(), filepath.Dir(py), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		report, err := c.Stop()
		if err != nil {
			t.Error(err)
		}
		if t.Failed() || err != nil {
			t.Logf("raytest: stop took %v; output of the nodes:\n%s", report.Took, c.Output())
		}
		os.RemoveAll(c.Dir)
	})
	return c
}

// StartCluster starts a cluster with the `ray` of the folder bin. The
// caller must Stop it and remove its Dir. When it fails, it stops what it
// started and removes the folder (the error carries the nodes' output).
func StartCluster(ctx context.Context, bin string, opts Options) (*Cluster, error) {
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 120 * time.Second
	}
	if opts.StopGrace == 0 {
		opts.StopGrace = 30 * time.Second
	}
	dir, err := os.MkdirTemp("", "sbray-") // short: Ray's socket paths live under it
	if err != nil {
		return nil, fmt.Errorf("raytest: %w", err)
	}
	c := &Cluster{
		Dir:  dir,
		Bin:  bin,
		tag:  filepath.Base(dir),
		opts: opts,
		http: &http.Client{Timeout: 10 * time.Second},
	}
	began := time.Now()
	fail := func(err error) (*Cluster, error) {
		if _, serr := c.Stop(); serr != nil {
			err = errors.Join(err, serr)
		}
		os.RemoveAll(dir)
		return nil, err
	}
	if opts.Token != "" {
		c.TokenFile = filepath.Join(dir, "auth_token")
		if err := os.WriteFile(c.TokenFile, []byte(opts.Token+"\n"), 0o600); err != nil {
			return fail(fmt.Errorf("raytest: %w", err))
		}
	}
	if err := c.startHead(ctx); err != nil {
		return fail(err)
	}
	for _, w := range opts.Workers {
		if _, err := c.AddWorker(ctx, w); err != nil {
			return fail(err)
		}
	}
	c.StartTook = time.Since(began)
	return c, nil
}

// freePorts returns n distinct TCP ports that were free a moment ago. They
// are all held open together while chosen, so they differ.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "0.0.0.0:0")
		if err != nil {
			return nil, fmt.Errorf("raytest: choosing ports: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// nodePorts are the ports every node needs (the head needs three more).
var nodePortFlags = []string{
	"--node-manager-port", "--object-manager-port", "--metrics-export-port",
	"--dashboard-agent-listen-port", "--dashboard-agent-grpc-port", "--runtime-env-agent-port",
}

func (c *Cluster) startHead(ctx context.Context) error {
	ports, err := freePorts(len(nodePortFlags) + 3)
	if err != nil {
		return err
	}
	gcsPort, dashPort, clientPort := ports[0], ports[1], ports[2]
	args := []string{"start", "--head", "--block",
		"--port", strconv.Itoa(gcsPort),
		"--dashboard-host", "127.0.0.1",
		"--dashboard-port", strconv.Itoa(dashPort),
		"--ray-client-server-port", strconv.Itoa(clientPort),
		"--num-cpus", strconv.Itoa(c.opts.HeadCPUs),
	}
	args = append(args, c.commonArgs(ports[3:])...)
	c.Dashboard = "http://127.0.0.1:" + strconv.Itoa(dashPort)
	node := &Node{Name: "head", Head: true}
	if err := c.launch(node, args); err != nil {
		return err
	}
	c.Head = node
	// The head is up when its dashboard answers the job API and it is
	// registered alive; its GCS address is what workers join.
	var v struct {
		Session string `json:"session_name"`
	}
	if err := c.waitFor(ctx, node, "the head's dashboard answers GET /api/version", func() (bool, error) {
		ok, err := c.getJSON("/api/version", &v)
		return ok && v.Session != "", err
	}); err != nil {
		return err
	}
	return c.waitFor(ctx, node, "the head node is registered alive", func() (bool, error) {
		nodes, err := c.Nodes(ctx)
		if err != nil {
			return false, nil
		}
		for _, n := range nodes {
			if n.Head && n.State == "ALIVE" {
				node.ID = n.ID
				c.GCS = net.JoinHostPort(n.IP, strconv.Itoa(gcsPort))
				return true, nil
			}
		}
		return false, nil
	})
}

// commonArgs are the flags of every node: ports, the shared folder, a
// small object store, no usage reporting.
func (c *Cluster) commonArgs(ports []int) []string {
	var args []string
	for i, flag := range nodePortFlags {
		args = append(args, flag, strconv.Itoa(ports[i]))
	}
	return append(args,
		// Workers bind ports the OS chooses, rather than Ray's fixed range
		// shared by every cluster on the machine.
		"--min-worker-port", "0", "--max-worker-port", "0",
		"--temp-dir", c.Dir,
		"--object-store-memory", strconv.Itoa(100<<20),
		"--disable-usage-stats",
	)
}

// AddWorker starts a worker node and waits until it is registered alive.
func (c *Cluster) AddWorker(ctx context.Context, w WorkerOptions) (*Node, error) {
	if !validName(w.Name) || w.Name == "head" {
		return nil, fmt.Errorf("raytest: worker name %q: want letters, digits, '_' or '-', not \"head\"", w.Name)
	}
	for _, n := range c.Workers {
		if n.Name == w.Name {
			return nil, fmt.Errorf("raytest: a worker %q already exists", w.Name)
		}
	}
	// A node whose `ray start` gave up (its raylet did not register within
	// Ray's 30 s, seen once with three clusters starting at once on two
	// cores, or a port chosen free taken meanwhile) is retired, its
	// process group killed, and the node started once more on new ports.
	node, err := c.startWorker(ctx, w)
	if err != nil && node != nil && node.hasExited() && ctx.Err() == nil {
		c.retire(node)
		if c.opts.Logf != nil {
			c.opts.Logf("raytest: worker %s did not start (%v); starting it again on new ports", w.Name, err)
		}
		node, err = c.startWorker(ctx, w)
	}
	return node, err
}

// retire takes a node that failed to start out of Workers and kills its
// process group; Stop still checks that none of its processes is left.
func (c *Cluster) retire(node *Node) {
	c.Workers = slices.DeleteFunc(c.Workers, func(n *Node) bool { return n == node })
	c.retired = append(c.retired, node)
	_ = syscall.Kill(-node.cmd.Process.Pid, syscall.SIGKILL)
}

// hasExited says whether the node's `ray start` has exited.
func (n *Node) hasExited() bool {
	select {
	case <-n.exited:
		return true
	default:
		return false
	}
}

// startWorker starts one attempt of a worker node and waits until it is
// registered alive; the node is returned also when it failed.
func (c *Cluster) startWorker(ctx context.Context, w WorkerOptions) (*Node, error) {
	choose := freePorts
	if c.workerPorts != nil {
		choose = c.workerPorts
	}
	ports, err := choose(len(nodePortFlags))
	if err != nil {
		return nil, err
	}
	res, _ := json.Marshal(map[string]int{w.Name: NodeResource})
	args := []string{"start", "--block",
		"--address", c.GCS,
		"--num-cpus", strconv.Itoa(w.CPUs),
		"--resources", string(res),
		// One log monitor per machine: the head's already watches the
		// shared folder.
		"--include-log-monitor", "false",
	}
	args = append(args, c.commonArgs(ports)...)
	node := &Node{Name: w.Name}
	if err := c.launch(node, args); err != nil {
		return nil, err
	}
	c.Workers = append(c.Workers, node)
	err = c.waitFor(ctx, node, "worker "+w.Name+" is registered alive", func() (bool, error) {
		nodes, err := c.Nodes(ctx)
		if err != nil {
			return false, nil
		}
		for _, n := range nodes {
			if n.State == "ALIVE" && n.Resources[w.Name] == NodeResource {
				node.ID = n.ID
				return true, nil
			}
		}
		return false, nil
	})
	return node, err
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// launch starts `ray start` for a node, in a process group of its own, its
// output in the cluster's folder.
func (c *Cluster) launch(node *Node, args []string) error {
	node.out = filepath.Join(c.Dir, "ray-start-"+node.Name+".out")
	out, err := os.Create(node.out)
	if err != nil {
		return fmt.Errorf("raytest: %w", err)
	}
	defer out.Close()
	cmd := exec.Command(filepath.Join(c.Bin, "ray"), args...)
	cmd.Env = c.env(node.Name)
	cmd.Dir = c.Dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("raytest: starting %s: %w", node.Name, err)
	}
	node.cmd = cmd
	node.exited = make(chan struct{})
	// The goroutine's owner is the node: it ends when `ray start` exits,
	// which Stop makes happen.
	go func() {
		node.err = cmd.Wait()
		close(node.exited)
	}()
	return nil
}

// env is the environment of a node's processes: this process's, minus Ray
// variables that would point elsewhere, plus the virtual environment first
// on PATH (as after activating it: job entrypoints find its python), the
// tags, and no usage reporting.
func (c *Cluster) env(node string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "RAY_") || k == "PATH" || k == ClusterTagEnv || k == NodeTagEnv {
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"PATH="+c.Bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"RAY_USAGE_STATS_ENABLED=0",
		ClusterTagEnv+"="+c.tag,
		NodeTagEnv+"="+c.tag+"/"+node,
	)
	if c.TokenFile != "" {
		env = append(env, "RAY_AUTH_MODE=token", "RAY_AUTH_TOKEN_PATH="+c.TokenFile)
	}
	return append(env, c.opts.Env...)
}

// waitFor polls cond every 100 ms until it holds, the node's `ray start`
// exits, ctx ends or StartTimeout passes.
func (c *Cluster) waitFor(ctx context.Context, node *Node, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(c.opts.StartTimeout)
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("raytest: waiting until %s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-node.exited:
			return fmt.Errorf("raytest: waiting until %s: `ray start` for %s exited (%v):\n%s", what, node.Name, node.err, tail(node.out, 30))
		case <-ctx.Done():
			return fmt.Errorf("raytest: waiting until %s: %w", what, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("raytest: %s: not after %v; output of %s:\n%s", what, c.opts.StartTimeout, node.Name, tail(node.out, 30))
		}
	}
}

// request is a request to the dashboard, with the cluster's token when it
// has one.
func (c *Cluster) request(ctx context.Context, path string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Dashboard+path, nil)
	if err == nil && c.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.Token)
	}
	return req, err
}

func (c *Cluster) getJSON(path string, out any) (bool, error) {
	req, err := c.request(context.Background(), path)
	if err != nil {
		return false, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return false, nil // not up yet
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return false, fmt.Errorf("GET %s: %w", path, err)
	}
	return true, nil
}

// NodeState is a node as Ray's state API lists it.
type NodeState struct {
	ID        string             `json:"node_id"`
	IP        string             `json:"node_ip"`
	Head      bool               `json:"is_head_node"`
	State     string             `json:"state"` // ALIVE or DEAD
	Resources map[string]float64 `json:"resources_total"`
}

// Nodes lists the cluster's nodes, dead ones included (GET /api/v0/nodes).
func (c *Cluster) Nodes(ctx context.Context) ([]NodeState, error) {
	var out struct {
		Result bool   `json:"result"`
		Msg    string `json:"msg"`
		Data   struct {
			Result struct {
				Result []NodeState `json:"result"`
			} `json:"result"`
		} `json:"data"`
	}
	req, err := c.request(ctx, "/api/v0/nodes?limit=1000")
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("raytest: GET /api/v0/nodes: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("raytest: GET /api/v0/nodes: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("raytest: GET /api/v0/nodes: %w", err)
	}
	if !out.Result {
		return nil, fmt.Errorf("raytest: GET /api/v0/nodes: %s", out.Msg)
	}
	return out.Data.Result.Result, nil
}

// Worker returns the worker named name, or nil.
func (c *Cluster) Worker(name string) *Node {
	for _, n := range c.Workers {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Kill makes a worker node vanish as a machine would: every process of
// the node is killed at once (SIGKILL), job entrypoints included, without
// Ray being told. It returns when none is left; Ray notices by itself
// (missed health checks) some seconds later (see WaitNodeDead).
func (c *Cluster) Kill(node *Node) error {
	if node.Head {
		return errors.New("raytest: Kill is for worker nodes; Stop stops the cluster")
	}
	tag := NodeTagEnv + "=" + c.tag + "/" + node.Name
	// The `ray start` process first: its children (raylet, agents) have
	// a parent-death signal; then everything that carries the node's tag
	// or descends from the node's processes.
	_ = syscall.Kill(-node.cmd.Process.Pid, syscall.SIGKILL)
	<-node.exited
	return killUntilGone(func(p proctest.Proc) bool { return p.HasEnv(tag) }, 10*time.Second, "node "+node.Name)
}

// WaitNodeDead waits until Ray lists the node as dead.
func (c *Cluster) WaitNodeDead(ctx context.Context, node *Node, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		nodes, err := c.Nodes(ctx)
		if err == nil {
			for _, n := range nodes {
				if n.ID == node.ID && n.State == "DEAD" {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("raytest: Ray does not list node %s (%s) as dead after %v", node.Name, node.ID, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// StopReport says how a Stop went.
type StopReport struct {
	Took time.Duration
	// Lingering counts the processes of the cluster still there when the
	// nodes' `ray start` had exited (or StopGrace passed); they were
	// killed.
	Lingering int
}

// Stop stops the cluster: SIGTERM to each node's `ray start` (Ray drains
// and stops its processes), and after StopGrace SIGKILL to whatever of the
// cluster is left. It fails when a process of the cluster is still there
// after that. Stop is idempotent.
func (c *Cluster) Stop() (StopReport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var rep StopReport
	if c.stopped {
		return rep, nil
	}
	c.stopped = true
	began := time.Now()
	nodes := append(append([]*Node{}, c.Workers...), c.retired...)
	if c.Head != nil {
		nodes = append(nodes, c.Head)
	}
	for _, n := range nodes {
		if n.cmd != nil {
			_ = n.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	grace := time.After(c.opts.StopGrace)
	for _, n := range nodes {
		if n.cmd == nil {
			continue
		}
		select {
		case <-n.exited:
		case <-grace:
		}
	}
	mine := func(p proctest.Proc) bool { return belongsTo(p, c.tag, c.Dir) }
	left, _ := proctest.Processes(mine)
	rep.Lingering = len(left)
	for _, n := range nodes {
		if n.cmd != nil {
			_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
			<-n.exited
		}
	}
	err := killUntilGone(mine, 10*time.Second, "cluster "+c.tag)
	c.http.CloseIdleConnections()
	rep.Took = time.Since(began)
	return rep, err
}

// Processes lists the cluster's processes now alive.
func (c *Cluster) Processes() ([]proctest.Proc, error) {
	return proctest.Processes(func(p proctest.Proc) bool { return belongsTo(p, c.tag, c.Dir) })
}

// NodeProcesses lists the processes of one node now alive (those that
// carry its tag; Ray's agents, which rewrite their environment, are not
// among them).
func (c *Cluster) NodeProcesses(node *Node) ([]proctest.Proc, error) {
	tag := NodeTagEnv + "=" + c.tag + "/" + node.Name
	return proctest.Processes(func(p proctest.Proc) bool { return p.HasEnv(tag) })
}

// Memory is the proportional set size (PSS: shared pages divided among the
// processes that map them) of all the cluster's processes, and their count.
func (c *Cluster) Memory() (pssBytes int64, processes int, err error) {
	ps, err := c.Processes()
	if err != nil {
		return 0, 0, err
	}
	for _, p := range ps {
		if kb, ok := readPSS(p.PID); ok {
			pssBytes += kb << 10
			processes++
		}
	}
	return pssBytes, processes, nil
}

// Output is the tail of each node's `ray start` output.
func (c *Cluster) Output() string {
	var b strings.Builder
	nodes := append([]*Node{}, c.Workers...)
	if c.Head != nil {
		nodes = append([]*Node{c.Head}, nodes...)
	}
	for _, n := range nodes {
		fmt.Fprintf(&b, "--- %s\n%s\n", n.Name, tail(n.out, 20))
	}
	return b.String()
}

// tail is the last n lines of a file.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// killUntilGone kills the processes that match with SIGKILL until none is
// left, or fails after timeout naming those that remain.
func killUntilGone(match func(proctest.Proc) bool, timeout time.Duration, what string) error {
	deadline := time.Now().Add(timeout)
	for {
		ps, err := proctest.Processes(match)
		if err != nil {
			return err
		}
		if len(ps) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			sort.Slice(ps, func(i, j int) bool { return ps[i].PID < ps[j].PID })
			var names []string
			for _, p := range ps {
				names = append(names, fmt.Sprintf("%d %q", p.PID, p.Cmdline))
			}
			return fmt.Errorf("raytest: processes of %s still alive after SIGKILL and %v: %s", what, timeout, strings.Join(names, "; "))
		}
		for _, p := range ps {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readPSS reads a process's PSS in KiB from /proc/PID/smaps_rollup.
func readPSS(pid int) (int64, bool) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) >= 2 && fields[0] == "Pss:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}

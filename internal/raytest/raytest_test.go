package raytest

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"stratbench/internal/testenv"
)

// TestClusterLifecycle starts a head and a worker, checks both are
// registered with their resources, makes the worker vanish, and stops the
// cluster: nothing of it may be left, its folder included.
func TestClusterLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Ray cluster")
	}
	py := testenv.Python(t, "ray", "ray.dashboard.modules.job")
	ctx := context.Background()
	c, err := StartCluster(ctx, dirOf(py), Options{HeadCPUs: 0, Workers: []WorkerOptions{{Name: "node2", CPUs: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			c.Stop()
		}
		os.RemoveAll(c.Dir)
	}()
	t.Logf("started a head and a worker in %v", c.StartTook)
	if pss, n, err := c.Memory(); err == nil {
		t.Logf("cluster memory: %d processes, PSS %.0f MiB", n, float64(pss)/(1<<20))
	}

	nodes, err := c.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]NodeState{}
	for _, n := range nodes {
		byID[n.ID] = n
	}
	head, worker := byID[c.Head.ID], byID[c.Worker("node2").ID]
	if !head.Head || head.State != "ALIVE" || head.Resources["CPU"] != 0 {
		t.Errorf("head %+v: want the head, alive, without CPUs", head)
	}
	if worker.Head || worker.State != "ALIVE" || worker.Resources["CPU"] != 1 || worker.Resources["node2"] != NodeResource {
		t.Errorf("worker %+v: want alive, 1 CPU and %d of node2", worker, NodeResource)
	}
	if ps, _ := c.NodeProcesses(c.Worker("node2")); len(ps) == 0 {
		t.Fatal("no process carries node2's tag")
	}

	began := time.Now()
	if err := c.Kill(c.Worker("node2")); err != nil {
		t.Fatal(err)
	}
	if ps, _ := c.NodeProcesses(c.Worker("node2")); len(ps) != 0 {
		t.Fatalf("after Kill, node2 still has %d processes: %+v", len(ps), ps)
	}
	if err := c.WaitNodeDead(ctx, c.Worker("node2"), 60*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("Ray listed the killed node as dead after %v", time.Since(began))
	if ps, _ := c.Processes(); len(ps) == 0 {
		t.Fatal("the head has no process left after the worker was killed")
	}

	rep, err := c.Stop()
	stopped = true
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped in %v (%d processes lingering after the nodes' `ray start` exited, killed)", rep.Took, rep.Lingering)
	if ps, _ := c.Processes(); len(ps) != 0 {
		t.Fatalf("%d processes of the cluster left after Stop: %+v", len(ps), ps)
	}
}

// TestWorkerStartedAgain: a worker whose first `ray start` gives up (its
// node manager's port is taken) is retired, none of its processes left,
// and started once more on new ports, where it registers alive.
func TestWorkerStartedAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Ray cluster")
	}
	var said []string
	c := Start(t, Options{HeadCPUs: 0, Logf: func(format string, args ...any) {
		said = append(said, fmt.Sprintf(format, args...))
	}})
	taken, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	attempts := 0
	c.workerPorts = func(n int) ([]int, error) {
		attempts++
		ports, err := freePorts(n)
		if err == nil && attempts == 1 {
			// --node-manager-port: the raylet cannot bind it, and `ray
			// start` gives up when the raylet has not registered within
			// Ray's 30 s (a taken agent port does not stop the node).
			ports[0] = taken.Addr().(*net.TCPAddr).Port
		}
		return ports, err
	}
	began := time.Now()
	node, err := c.AddWorker(context.Background(), WorkerOptions{Name: "node2", CPUs: 1})
	if err != nil {
		t.Fatalf("AddWorker: %v\n%s", err, c.Output())
	}
	t.Logf("the worker started on its second attempt after %v", time.Since(began).Round(time.Millisecond))
	if attempts != 2 || len(c.retired) != 1 || len(c.Workers) != 1 || c.Workers[0] != node {
		t.Fatalf("%d attempts, %d retired, workers %v: want the second attempt the one worker", attempts, len(c.retired), c.Workers)
	}
	if !slices.ContainsFunc(said, func(s string) bool { return strings.Contains(s, "worker node2 did not start") }) {
		t.Errorf("nothing said of the retry: %q", said)
	}
	nodes, err := c.Nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	alive := 0
	for _, n := range nodes {
		if n.State == "ALIVE" && n.Resources["node2"] == NodeResource {
			alive++
			if n.ID != node.ID {
				t.Errorf("node2 alive as %s, want the second attempt's %s", n.ID, node.ID)
			}
		}
	}
	if alive != 1 {
		t.Errorf("%d nodes alive with node2's resource, want 1", alive)
	}
	// The retired attempt's process group is gone (kill(2) on a group
	// with no process left fails with ESRCH): here its `ray start` ended
	// the group itself when it gave up; retire's kill is for one that
	// left processes behind. Its members are reaped by whoever inherited
	// them, hence the wait.
	group := c.retired[0].cmd.Process.Pid
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(-group, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the retired attempt's process group %d still has processes", group)
		}
	}
}

// TestFreePorts: the ports chosen at once are distinct.
func TestFreePorts(t *testing.T) {
	ports, err := freePorts(12)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v: want 12 distinct ports", ports)
		}
		seen[p] = true
	}
}

func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[:i]
		}
	}
	return "."
}

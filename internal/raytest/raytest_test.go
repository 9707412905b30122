package raytest

import (
	"context"
	"os"
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

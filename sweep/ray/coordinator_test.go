package ray

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"stratbench/internal/proctest"
	"stratbench/internal/raytest"
	"stratbench/internal/testenv"
)

// The coordinator on the real cluster, with the test binary's stand-in
// shard (runShard) in place of stratbench's shard mode.

func TestParseEvent(t *testing.T) {
	for _, tc := range []struct {
		line string
		ok   bool
		err  string
	}{
		{"Running entrypoint for job x: for py in python python3; do …", false, ""},
		{"2026-12-01 16:18:11,380\tINFO job_manager.py:581 -- Runtime env is setting up.", false, ""},
		{EventMarker + `{"type":"hello","items":3,"slots":2,"ray":"2.60.0","node_id":"ab"}`, true, ""},
		{EventMarker + `{"type":"result","key":{"fold":null,"phase":null,"index":3},"slot":0,"node_id":"ab","attempt":1,"result":{"status":"passed"}}`, true, ""},
		{EventMarker + `{"type":"result","key":{"fold":null,"phase":null,"index":3},"result":null}`, true, "without a result"},
		{EventMarker + `{"type":"started","slot":0}`, true, "no key"},
		{EventMarker + `{"type":"started","key":{"index":-1}}`, true, "negative index"},
		{EventMarker + `{"type":"slot","slot":1,"state":"sleeping"}`, true, "state up or lost"},
		{EventMarker + `{"type":"done","status":"crashed"}`, true, `status "crashed"`},
		{EventMarker + `{"type":"teleport"}`, true, "unknown event type"},
		{EventMarker + `{"type":"hello","surprise":1}`, true, "unknown field"},
		{EventMarker + `{"type":"hello"} {"type":"hello"}`, true, "more than one JSON value"},
		{EventMarker + `not json`, true, "invalid character"},
	} {
		_, ok, err := ParseEvent(tc.line)
		if ok != tc.ok || (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ParseEvent(%.60q) = ok %v, err %v; want ok %v, err %q", tc.line, ok, err, tc.ok, tc.err)
		}
	}
}

func FuzzParseEvent(f *testing.F) {
	f.Add(EventMarker + `{"type":"result","key":{"fold":1,"phase":"train","index":3},"result":{}}`)
	f.Add(EventMarker + `{"type":"slot","slot":0,"state":"lost","reason":"x"}`)
	f.Add("plain line")
	f.Fuzz(func(t *testing.T, line string) {
		ev, ok, err := ParseEvent(line)
		if !strings.HasPrefix(line, EventMarker) && (ok || err != nil) {
			t.Fatalf("an unmarked line: ok %v, err %v", ok, err)
		}
		if err == nil && ok {
			if ev.validate() != nil {
				t.Fatalf("accepted an invalid event %+v", ev)
			}
			if ev.Key != nil && ev.Key.Index < 0 {
				t.Fatalf("accepted a negative index")
			}
		}
	})
}

func TestWorkSpecRefusals(t *testing.T) {
	dir := t.TempDir()
	code := PackageCheck{URI: "gcs://_ray_pkg_x.zip", SHA256: strings.Repeat("ab", 32), Files: []Entry{{Path: "stratbench"}}}
	shard := ShardCommand{Argv: []string{"x"}}
	for _, tc := range []struct {
		spec WorkSpec
		says string
	}{
		{WorkSpec{Format: 1, Shard: ShardCommand{Argv: []string{"./stratbench"}}, Code: code}, "format 1"},
		{WorkSpec{Format: WorkFormat, Code: code}, "no shard command"},
		{WorkSpec{Format: WorkFormat, Shard: shard}, "the code package"},
		{WorkSpec{Format: WorkFormat, Shard: shard, Code: PackageCheck{URI: code.URI, SHA256: "abc", Files: code.Files}}, "want its sha256"},
		{WorkSpec{Format: WorkFormat, Shard: shard, Code: code, Items: []WorkItem{{Key: RunKey{Index: 1}}, {Key: RunKey{Index: 1}}}}, "index 1 twice"},
		{WorkSpec{Format: WorkFormat, Shard: shard, Code: code, Items: []WorkItem{{Key: RunKey{Index: -2}}}}, "negative index"},
	} {
		if _, err := BuildWorkPackage(tc.spec, dir); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("BuildWorkPackage(%+v) = %v, want %q", tc.spec, err, tc.says)
		}
	}
}

// coordinatorRun is a coordinator job and its events, read as they come.
type coordinatorRun struct {
	id     string
	events chan Event
	done   chan error // Follow's end
}

// startCoordinator uploads the packages and submits a coordinator whose
// shards are the stand-in, then follows its log in a goroutine owned by
// the test (it ends with the job; the test waits for it).
func startCoordinator(t *testing.T, ctx context.Context, cl *Client, items []WorkItem) *coordinatorRun {
	t.Helper()
	code, err := BuildPackage(ctx, PackageSpec{Binary: selfBinary(t), Strategy: filepath.Join(testenv.Root(t), "python", "example")}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work, err := BuildWorkPackage(WorkSpec{
		Format: WorkFormat, SweepID: t.Name(),
		Shard: ShardCommand{Argv: []string{"./" + PackageBinary}, Env: map[string]string{helperEnv: "shard"}},
		Code:  code.Check(), Items: items, SlotTimeoutSeconds: 120,
	}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Package{code, work} {
		if _, err := cl.EnsurePackage(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	id, err := cl.Submit(ctx, CoordinatorJob(submissionID(t), work, map[string]string{"stratbench_sweep": t.Name()}))
	if err != nil {
		t.Fatal(err)
	}
	r := &coordinatorRun{id: id, events: make(chan Event, 1000), done: make(chan error, 1)}
	go func() {
		var cur LogCursor
		var logTail []string
		err := cl.Follow(ctx, id, &cur, time.Second, func(line string) error {
			ev, ok, err := ParseEvent(line)
			if err != nil {
				return err
			}
			if !ok {
				logTail = append(logTail, line)
				return nil
			}
			r.events <- ev
			return nil
		})
		if err != nil && len(logTail) > 0 {
			err = errors.Join(err, errors.New("other lines of the log:\n"+strings.Join(logTail, "\n")))
		}
		close(r.events)
		r.done <- err
	}()
	return r
}

// next returns the next event, or fails after timeout.
func (r *coordinatorRun) next(t *testing.T, timeout time.Duration, waitingFor string) (Event, bool) {
	t.Helper()
	select {
	case ev, ok := <-r.events:
		return ev, ok
	case <-time.After(timeout):
		t.Fatalf("no event after %v while waiting for %s", timeout, waitingFor)
	}
	return Event{}, false
}

// rest reads the remaining events until the job's log ends.
func (r *coordinatorRun) rest(t *testing.T, timeout time.Duration) []Event {
	t.Helper()
	var evs []Event
	for {
		ev, ok := r.next(t, timeout, "the end of the job")
		if !ok {
			break
		}
		evs = append(evs, ev)
	}
	if err := <-r.done; err != nil {
		t.Fatal(err)
	}
	return evs
}

// results indexes the result events by index, failing on a repeat.
func results(t *testing.T, evs []Event) map[int]Event {
	t.Helper()
	out := map[int]Event{}
	for _, ev := range evs {
		if ev.Type == EventError {
			t.Fatalf("coordinator error: %s\n%s", ev.Message, ev.Traceback)
		}
		if ev.Type != EventResult {
			continue
		}
		if _, dup := out[ev.Key.Index]; dup {
			t.Fatalf("two results for index %d", ev.Key.Index)
		}
		out[ev.Key.Index] = ev
	}
	return out
}

type shardResult struct {
	Status   string `json:"status"`
	OnFinish bool   `json:"on_finish"`
	Node     string `json:"node"`
	Index    int    `json:"index"`
	Python   string `json:"python"`
}

func decodeResult(t *testing.T, ev Event) shardResult {
	t.Helper()
	var r shardResult
	if err := json.Unmarshal(ev.Result, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func payload(t *testing.T, p shardPayload) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func lastEvent(evs []Event, typ EventType) (Event, bool) {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == typ {
			return evs[i], true
		}
	}
	return Event{}, false
}

// TestCoordinatorEveryItemOnce: one Ray job runs every item once, spread
// over one slot per CPU of the cluster (node2's two: the head has none),
// each slot's shard started once and fed item after item.
func TestCoordinatorEveryItemOnce(t *testing.T) {
	c := cluster(t)
	cl := client(t, c)
	ctx := within(t, 3*time.Minute)
	const n, ms = 8, 300
	var items []WorkItem
	for i := 0; i < n; i++ {
		items = append(items, WorkItem{Key: RunKey{Index: i}, Payload: payload(t, shardPayload{MS: ms})})
	}
	began := time.Now()
	run := startCoordinator(t, ctx, cl, items)
	evs := run.rest(t, 2*time.Minute)
	took := time.Since(began)

	got := results(t, evs)
	if len(got) != n {
		t.Fatalf("%d results, want %d; events %+v", len(got), n, evs)
	}
	node2 := c.Worker("node2")
	slotsUp := 0
	for _, ev := range evs {
		if ev.Type == EventSlot && ev.State == SlotUp {
			slotsUp++
		}
	}
	for i := 0; i < n; i++ {
		ev := got[i]
		r := decodeResult(t, ev)
		if ev.NodeID != node2.ID || r.Node != "node2" || r.Status != "passed" || ev.Attempt != 1 || r.Index != i {
			t.Errorf("index %d: %+v %+v, want passed on node2 at the first attempt", i, ev, r)
		}
		if !strings.HasSuffix(r.Python, "/python") && !strings.Contains(r.Python, "python3") {
			t.Errorf("index %d: the shard was not told the node's Python: %q", i, r.Python)
		}
	}
	hello, _ := lastEvent(evs, EventHello)
	done, _ := lastEvent(evs, EventDone)
	if hello.Slots != 2 || slotsUp != 2 || hello.NodeID != c.Head.ID || done.Status != DoneFinished || done.Results != n {
		t.Errorf("hello %+v, %d slots up, done %+v", hello, slotsUp, done)
	}
	job, err := cl.Job(ctx, run.id)
	if err != nil || job.Status != JobSucceeded || job.DriverNodeID != c.Head.ID {
		t.Errorf("job %+v, %v: want SUCCEEDED on the head", job, err)
	}
	t.Logf("%d items of %d ms on 2 slots: %v from submission to the last line (%v of work per slot)", n, ms, took.Round(time.Millisecond), time.Duration(n/2*ms)*time.Millisecond)
}

// TestCoordinatorStopKeepsOnFinish: Ray's stop reaches the coordinator
// only; it stops the runs in flight through the shards' input, and their
// results (stopped, on_finish run, 5 s after the stop: longer than Ray's
// default grace) come back before the job ends as STOPPED. The other
// items never start, and no shard is left on the node.
func TestCoordinatorStopKeepsOnFinish(t *testing.T) {
	c := cluster(t)
	cl := client(t, c)
	ctx := within(t, 3*time.Minute)
	marks := t.TempDir()
	var items []WorkItem
	for i := 0; i < 5; i++ {
		items = append(items, WorkItem{Key: RunKey{Index: i}, Payload: payload(t, shardPayload{
			Gate: filepath.Join(marks, "never"), FinishMS: 5000, MarkDir: marks,
		})})
	}
	run := startCoordinator(t, ctx, cl, items)
	// Wait until two runs really run (the shards wrote their marks).
	var seen []Event
	deadline := time.Now().Add(90 * time.Second)
	for {
		if entries, _ := os.ReadDir(marks); len(entries) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("two runs did not start; events %+v", seen)
		}
		select {
		case ev := <-run.events:
			seen = append(seen, ev)
		case <-time.After(50 * time.Millisecond):
		}
	}
	began := time.Now()
	if stopped, err := cl.Stop(ctx, run.id); err != nil || !stopped {
		t.Fatalf("Stop: %v, %v", stopped, err)
	}
	evs := append(seen, run.rest(t, 2*time.Minute)...)
	took := time.Since(began)
	got := results(t, evs)
	if len(got) != 2 {
		t.Fatalf("%d results, want the 2 runs in flight; events %+v", len(got), evs)
	}
	for i, ev := range got {
		if r := decodeResult(t, ev); r.Status != "stopped" || !r.OnFinish {
			t.Errorf("index %d: %+v, want stopped with on_finish", i, r)
		}
	}
	done, _ := lastEvent(evs, EventDone)
	if _, ok := lastEvent(evs, EventStopping); !ok || done.Status != DoneStopped || done.Results != 2 {
		t.Errorf("done %+v: want stopped with 2 results, after a stopping event", done)
	}
	job, err := cl.Wait(ctx, run.id, 100*time.Millisecond)
	if err != nil || job.Status != JobStopped {
		t.Errorf("job %+v, %v: want STOPPED", job, err)
	}
	t.Logf("stop to STOPPED: %v, the stopped runs' results included (each took 5 s to stop)", took.Round(100*time.Millisecond))
	waitNoShard(t, c, c.Worker("node2"))
}

// waitNoShard waits until no stand-in shard runs on the node.
func waitNoShard(t *testing.T, c *raytest.Cluster, node *raytest.Node) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ps, err := c.NodeProcesses(node)
		if err != nil {
			t.Fatal(err)
		}
		var shards []proctest.Proc
		for _, p := range ps {
			if p.Cmdline == "./"+PackageBinary {
				shards = append(shards, p)
			}
		}
		if len(shards) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("shards still running on %s: %+v", node.Name, shards)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestCoordinatorNodeLost: node2 vanishes while it runs an item; Ray
// reports its slot lost, the coordinator puts the item back and node3 runs
// it; every item has exactly one result.
func TestCoordinatorNodeLost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Ray cluster")
	}
	c := raytest.Start(t, raytest.Options{HeadCPUs: 0, Workers: []raytest.WorkerOptions{{Name: "node2", CPUs: 1}, {Name: "node3", CPUs: 1}}})
	cl := client(t, c)
	ctx := within(t, 4*time.Minute)
	marks := t.TempDir()
	gate := filepath.Join(t.TempDir(), "gate")
	var items []WorkItem
	for i := 0; i < 3; i++ {
		items = append(items, WorkItem{Key: RunKey{Index: i}, Payload: payload(t, shardPayload{Gate: gate, MarkDir: marks})})
	}
	run := startCoordinator(t, ctx, cl, items)

	// Wait until node2 and node3 each run an item.
	var evs []Event
	running := map[string]int{}
	deadline := time.Now().Add(2 * time.Minute)
	for running["node2"] == 0 || running["node3"] == 0 {
		entries, _ := os.ReadDir(marks)
		for _, e := range entries {
			if index, node, ok := parseMark(e.Name()); ok {
				running[node] = index + 1
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not one run on each node: marks %v; events %+v", running, evs)
		}
		select {
		case ev := <-run.events:
			evs = append(evs, ev)
		case <-time.After(50 * time.Millisecond):
		}
	}
	lost := running["node2"] - 1
	node2, node3 := c.Worker("node2"), c.Worker("node3")
	began := time.Now()
	if err := c.Kill(node2); err != nil {
		t.Fatal(err)
	}
	// The item that was on node2 comes back to the queue...
	for {
		ev, ok := run.next(t, 90*time.Second, "the requeue of the run lost with node2")
		if !ok {
			t.Fatalf("the job ended before a requeue; events %+v", evs)
		}
		evs = append(evs, ev)
		if ev.Type == EventRequeued {
			if ev.Key.Index != lost {
				t.Fatalf("requeued %v, want index %d (the run on node2)", ev.Key, lost)
			}
			break
		}
	}
	t.Logf("the run lost with node2 was requeued %v after the node vanished", time.Since(began).Round(100*time.Millisecond))
	// ...and runs on node3 once the gate opens.
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	evs = append(evs, run.rest(t, 2*time.Minute)...)
	got := results(t, evs)
	if len(got) != 3 {
		t.Fatalf("%d results, want 3; events %+v", len(got), evs)
	}
	again := got[lost]
	if r := decodeResult(t, again); again.NodeID != node3.ID || r.Node != "node3" || again.Attempt != 2 || r.Status != "passed" {
		t.Errorf("the lost run's result: %+v %+v, want passed on node3 at the second attempt", again, r)
	}
	var slotLost bool
	for _, ev := range evs {
		slotLost = slotLost || ev.Type == EventSlot && ev.State == SlotLost && ev.NodeID == node2.ID
	}
	done, _ := lastEvent(evs, EventDone)
	if !slotLost || done.Status != DoneFinished || done.Results != 3 {
		t.Errorf("slot lost on node2: %v; done %+v", slotLost, done)
	}
	job, err := cl.Job(ctx, run.id)
	if err != nil || job.Status != JobSucceeded {
		t.Errorf("job %+v, %v: want SUCCEEDED", job, err)
	}
}

// parseMark reads a mark's name, running-INDEX-NODE.
func parseMark(name string) (index int, node string, ok bool) {
	rest, ok := strings.CutPrefix(name, "running-")
	if !ok {
		return 0, "", false
	}
	i, node, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, "", false
	}
	index, err := strconv.Atoi(i)
	return index, node, err == nil
}

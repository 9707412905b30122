package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	pyb "stratbench/python"
)

// linesWith returns the texts of the lines that start with prefix.
func linesWith(lines []Line, prefix string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l.Text, prefix) {
			out = append(out, l.Text)
		}
	}
	return out
}

// TestWarmRunsStartFresh: the template imports the third-party module the
// strategy's leading imports name, and neither the strategy nor a module
// of its folder; every run imports both itself, starting from the
// template's state of the third-party module (its token), which nothing a
// run does changes for the next (its count).
func TestWarmRunsStartFresh(t *testing.T) {
	h := newHost(t)
	strategy := script(t, "warm/fresh/strategy.py")
	tc := newCollector()
	tp := startTemplate(t, h, python(t), strategy, tc, warmEnv(t))
	if got := tp.Preloaded(); !slices.Contains(got, "countlib") || slices.Contains(got, "helper") {
		t.Errorf("the template preloaded %q, want countlib and not helper", got)
	}
	var tokens []string
	var end time.Time
	for run := range 3 {
		w := forkWorker(t, tp, strategy, warmEnv(t), Limits{})
		w.manifest(t)
		if res := w.quit(t); res.ExitCode != 0 || res.TreeTracking != TrackingPIDNamespace {
			t.Fatalf("run %d: %+v; output %v", run, res, w.c.snapshot())
		}
		end = time.Now()
		lines := w.c.snapshot()
		counts := linesWith(lines, "count ")
		if len(counts) != 1 || !strings.HasPrefix(counts[0], "count 1 token ") {
			t.Fatalf("run %d printed %q, want one count 1", run, counts)
		}
		tokens = append(tokens, strings.Fields(counts[0])[3])
		if n := len(linesWith(lines, "strategy module executed")); n != 1 {
			t.Errorf("run %d executed the strategy's module %d times", run, n)
		}
		if n := len(linesWith(lines, "helper imported")); n != 1 {
			t.Errorf("run %d imported the folder's helper %d times", run, n)
		}
	}
	if len(slices.Compact(slices.Clone(tokens))) != 1 {
		t.Errorf("runs saw countlib tokens %q: not the template's one import", tokens)
	}
	for _, l := range tc.snapshot() {
		if strings.Contains(l.Text, "executed") || strings.Contains(l.Text, "helper") || strings.Contains(l.Text, "count") {
			t.Errorf("the template ran code of the strategy's folder: %q", l.Text)
		}
	}
	if s := waitSample(t, tp.Process(), func(s Sample) bool { return s.Time.After(end) }); s.Processes != 1 {
		t.Errorf("the template's tree has %d processes after its runs, want 1: %+v", s.Processes, s.Procs)
	}
}

// TestTemplateForksAtOnce: forks of one template asked for at once (the
// slots that share a template in engine.Pool) each become a run of its
// own: its own tree and program, the strategy's module imported in each, a
// clean exit; and the template's tree is its one process again once they
// have ended. With the race detector, it also checks what the forks share.
func TestTemplateForksAtOnce(t *testing.T) {
	h := newHost(t)
	strategy := script(t, "warm/fresh/strategy.py")
	tc := newCollector()
	tp := startTemplate(t, h, python(t), strategy, tc, warmEnv(t))
	const n = 4
	workers := make([]*worker, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range workers {
		w := newWorker(t)
		workers[i] = w
		spec := w.runSpec(strategy, warmEnv(t), Limits{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.p, errs[i] = tp.Fork(context.Background(), spec)
			w.started()
		}()
	}
	wg.Wait()
	pids := map[int]bool{}
	var end time.Time
	for i, w := range workers {
		if errs[i] != nil {
			for j, w := range workers {
				t.Logf("worker %d: %v %v", j, errs[j], w.c.snapshot())
			}
			t.Fatalf("fork %d: %v; the template's output %v", i, errs[i], tc.snapshot())
		}
		pids[w.p.PID()] = true
		w.manifest(t)
		if res := w.quit(t); res.ExitCode != 0 || res.TreeTracking != TrackingPIDNamespace {
			t.Fatalf("run %d: %+v; output %v", i, res, w.c.snapshot())
		}
		end = time.Now()
		if counts := linesWith(w.c.snapshot(), "count "); len(counts) != 1 || !strings.HasPrefix(counts[0], "count 1 token ") {
			t.Errorf("run %d printed %q, want one count 1", i, counts)
		}
	}
	if len(pids) != n {
		t.Errorf("the runs' programs are %v, want %d processes", pids, n)
	}
	if s := waitSample(t, tp.Process(), func(s Sample) bool { return s.Time.After(end) }); s.Processes != 1 {
		t.Errorf("the template's tree has %d processes after its runs, want 1: %+v", s.Processes, s.Procs)
	}
}

// TestWarmRunLimitsAreTheirOwn: a run over its memory limit and a run over
// its process limit are killed for it, each alone: the template and a
// sibling run go on, and neither the template's samples nor the sibling's
// count their processes.
func TestWarmRunLimitsAreTheirOwn(t *testing.T) {
	h := newHost(t)
	strategy := script(t, "warm/limits/strategy.py")
	tp := startTemplate(t, h, python(t), strategy, newCollector(), warmEnv(t))
	runLimits := Limits{MemoryBytes: 200 << 20, Processes: 8}
	sibling := forkWorker(t, tp, strategy, warmEnv(t, "WARM_MODE=idle"), runLimits)
	sibling.manifest(t)

	memory := forkWorker(t, tp, strategy, warmEnv(t, "WARM_MODE=memory"), runLimits)
	res := waitDone(t, memory.p, 30*time.Second)
	if v := res.Violation; v == nil || v.Kind != ViolationMemory {
		t.Fatalf("the 300 MiB run ended with %+v, want a memory violation", res)
	}

	bomb := forkWorker(t, tp, strategy, warmEnv(t, "WARM_MODE=bomb"), runLimits)
	// The template's limit is 4 processes, the run's 8: the bomb's 13
	// would break both if they counted toward the template.
	res = waitDone(t, bomb.p, 30*time.Second)
	if v := res.Violation; v == nil || v.Kind != ViolationProcesses {
		t.Fatalf("the 13-process run ended with %+v, want a process violation", res)
	}

	select {
	case <-tp.Process().Done():
		t.Fatalf("the template ended with its runs: %+v", tp.Process().Wait())
	case <-sibling.p.Done():
		t.Fatalf("the sibling run ended with the others: %+v; output %v", sibling.p.Wait(), sibling.c.snapshot())
	default:
	}
	now := time.Now()
	fresh := func(s Sample) bool { return s.Time.After(now) }
	if s := waitSample(t, sibling.p, fresh); s.Processes != 1 || s.MemoryBytes > 150<<20 {
		t.Errorf("the sibling's sample counts others' processes: %d processes, %d bytes: %+v", s.Processes, s.MemoryBytes, s.Procs)
	}
	if s := waitSample(t, tp.Process(), fresh); s.Processes != 1 {
		t.Errorf("the template's sample counts its runs' processes: %+v", s.Procs)
	}
	// The sibling still works: it answers, and ends as it should.
	sibling.firstHook(t)
	if f, err := sibling.from.Next(); err != nil || f.Type != pyb.TypeYield {
		t.Fatalf("the sibling's first batch: %q, %v", f.Type, err)
	}
	if res := sibling.quit(t); res.ExitCode != 0 || res.Violation != nil {
		t.Errorf("the sibling ended with %+v", res)
	}
}

// TestKilledWarmRunLeavesNothing: killing a run kills its whole namespace
// (its program, a child, an escapee that left the session, its init) and
// nothing of the template, which forks the next run.
func TestKilledWarmRunLeavesNothing(t *testing.T) {
	h := newHost(t)
	strategy := script(t, "warm/limits/strategy.py")
	tp := startTemplate(t, h, python(t), strategy, newCollector(), warmEnv(t))
	w := forkWorker(t, tp, strategy, warmEnv(t, "WARM_MODE=tree"), Limits{})
	var ids []ProcID
	for _, prefix := range []string{"program", "child", "escapee"} {
		ids = append(ids, identify(t, hostPID(t, w.p, w.c.waitPID(t, prefix))))
	}
	if ids[0].PID != w.p.PID() {
		t.Errorf("the program is %d, the run's Process says %d", ids[0].PID, w.p.PID())
	}
	ids = append(ids, identify(t, w.p.initPID))
	template := identify(t, tp.Process().PID())
	w.p.Kill()
	for _, id := range ids {
		if alive(id) {
			t.Errorf("process %d of the killed run is alive", id.PID)
		}
	}
	if res := w.p.Wait(); !res.Killed || res.InitLost || res.TemplateLost {
		t.Errorf("the killed run's result: %+v", res)
	}
	if !alive(template) {
		t.Fatal("killing a run killed the template")
	}
	next := forkWorker(t, tp, strategy, warmEnv(t), Limits{})
	next.manifest(t)
	if res := next.quit(t); res.ExitCode != 0 {
		t.Errorf("the next run ended with %+v", res)
	}
}

// TestTemplateEndKillsItsRuns: when the template ends, closed or killed by
// a signal, a run in flight ends with it, as a crash that says so, and
// nothing of it is left.
func TestTemplateEndKillsItsRuns(t *testing.T) {
	for _, how := range []string{"closed", "signal"} {
		t.Run(how, func(t *testing.T) {
			h := newHost(t)
			strategy := script(t, "warm/limits/strategy.py")
			tp := startTemplate(t, h, python(t), strategy, newCollector(), warmEnv(t))
			w := forkWorker(t, tp, strategy, warmEnv(t, "WARM_MODE=tree"), Limits{})
			var ids []ProcID
			for _, prefix := range []string{"program", "child", "escapee"} {
				ids = append(ids, identify(t, hostPID(t, w.p, w.c.waitPID(t, prefix))))
			}
			ids = append(ids, identify(t, w.p.initPID))
			if how == "closed" {
				tp.Close()
			} else if err := unix.Kill(tp.Process().PID(), unix.SIGKILL); err != nil {
				t.Fatal(err)
			}
			res := waitDone(t, w.p, 30*time.Second)
			if !res.TemplateLost || !res.InitLost || res.Killed || res.Signal != unix.SIGKILL {
				t.Errorf("the run's result: %+v", res)
			}
			if got := linesWith(w.c.snapshot(), "supervisor: the template this run was forked from ended"); len(got) != 1 {
				t.Errorf("no notice of the template's end in %v", w.c.snapshot())
			}
			for _, id := range ids {
				if alive(id) {
					t.Errorf("process %d of the run outlived the template", id.PID)
				}
			}
			if _, err := tp.Fork(context.Background(), RunSpec{}); !errors.Is(err, ErrTemplateGone) {
				t.Errorf("Fork after the template's end: %v, want ErrTemplateGone", err)
			}
		})
	}
}

// TestTemplateRunsNoFolderCode: the template imports nothing its
// strategy's folder shadows or holds, even with the folder on PYTHONPATH:
// not a numpy.py there (nor anything after it), not a module whose import
// has a side effect. A run imports them, as a cold start would.
func TestTemplateRunsNoFolderCode(t *testing.T) {
	for _, tc := range []struct {
		strategy string
		mark     string   // the file the folder's module leaves
		want     []string // what the template preloads
	}{
		{"numpy_first.py", "numpy-ran", []string{"json"}},
		{"sidecar_first.py", "sidecar-ran", []string{"countlib"}},
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			h := newHost(t)
			folder := script(t, "warm/shadow")
			strategy := filepath.Join(folder, tc.strategy)
			marks := t.TempDir()
			env := warmEnv(t, "WARM_MARKS="+marks)
			env[2] += ":" + folder // PYTHONPATH: the folder would be found there too
			tc2 := newCollector()
			tp := startTemplate(t, h, python(t), strategy, tc2, env)
			if got := tp.Preloaded(); !slices.Equal(got, tc.want) {
				t.Errorf("the template preloaded %q, want %q", got, tc.want)
			}
			if _, err := os.Stat(filepath.Join(marks, tc.mark)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the template imported the folder's module: %s exists (%v)", tc.mark, err)
			}
			if lines := tc2.snapshot(); len(lines) > 0 {
				t.Errorf("the template printed %v", lines)
			}
			w := forkWorker(t, tp, strategy, env, Limits{})
			w.manifest(t)
			if _, err := os.Stat(filepath.Join(marks, tc.mark)); err != nil {
				t.Errorf("the run did not import the folder's module: %v", err)
			}
			if res := w.quit(t); res.ExitCode != 0 {
				t.Errorf("the run ended with %+v: %v", res, w.c.snapshot())
			}
		})
	}
}

// TestTemplateRefusesShadowedImports: a template whose imports would pull
// in a module of the strategy's folder (a cold start, the folder first on
// sys.path, gives usesdep the folder's depmod) refuses to start, and runs
// neither depmod (the folder's code, nor the site's, which a cold start
// would not import); one whose folder gains a file shadowing a module it
// imported later refuses to fork, and lives on.
func TestTemplateRefusesShadowedImports(t *testing.T) {
	h := newHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := newCollector()
	_, err := h.StartTemplate(ctx, templateSpec(t, python(t), script(t, "warm/conflict/strategy.py"), c, warmEnv(t)))
	if err == nil || !strings.Contains(err.Error(), "imports depmod, which the strategy's folder holds") {
		t.Errorf("a template that imported a shadowed module: %v; output %v", err, c.snapshot())
	}
	if lines := c.snapshot(); len(lines) > 0 {
		t.Errorf("the refusing template ran a depmod: %v", lines)
	}

	folder := t.TempDir()
	for _, name := range []string{"strategy.py", "helper.py"} {
		if err := copyFile(filepath.Join(script(t, "warm/fresh"), name), filepath.Join(folder, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	strategy := filepath.Join(folder, "strategy.py")
	tp := startTemplate(t, h, python(t), strategy, newCollector(), warmEnv(t))
	if err := os.WriteFile(filepath.Join(folder, "countlib.py"), []byte("count = 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := newWorker(t)
	_, err = tp.Fork(ctx, w.runSpec(strategy, warmEnv(t), Limits{}))
	w.started()
	var refused *ForkRefusedError
	if !errors.As(err, &refused) || !strings.Contains(refused.Reason, "countlib") {
		t.Errorf("a fork after the folder shadowed a preloaded module: %v", err)
	}
	checkTemplateAlive(t, tp, "after a refusal")
}

// TestTemplateNeedsNamespaces: under the fallback tracking there is no
// template: every run starts cold.
func TestTemplateNeedsNamespaces(t *testing.T) {
	t.Setenv(TrackingEnv, "fallback")
	h := newHost(t)
	c := newCollector()
	_, err := h.StartTemplate(context.Background(), templateSpec(t, python(t), script(t, "warm/fresh/strategy.py"), c, warmEnv(t)))
	if !errors.Is(err, ErrNoNamespaces) {
		t.Errorf("StartTemplate in the fallback: %v, want ErrNoNamespaces", err)
	}
}

// TestWarmNumpy: with numpy installed, the template preloads it and every
// run uses the template's import (the same module object), with the
// history type a cold start gives a numpy strategy; a numpy.py in the
// strategy's folder still keeps the real numpy out of the template.
func TestWarmNumpy(t *testing.T) {
	py := venvPython(t, "numpy")
	h := newHost(t)
	strategy := script(t, "warm/numpy/strategy.py")
	tp := startTemplate(t, h, py, strategy, newCollector(), warmEnv(t))
	if got := tp.Preloaded(); !slices.Equal(got, []string{"numpy"}) {
		t.Errorf("the template preloaded %q, want numpy", got)
	}
	bridge, err := pyb.InstallBridge(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var modules, hooks []string
	for run := range 3 {
		var w *worker
		if run < 2 {
			w = forkWorker(t, tp, strategy, warmEnv(t), Limits{})
		} else {
			w = startWorker(t, h, py, bridge, strategy, warmEnv(t), Limits{})
		}
		w.manifest(t)
		w.firstHook(t)
		hooks = append(hooks, w.c.waitFor(t, "hook").Text)
		modules = append(modules, w.c.waitFor(t, "numpy at").Text)
		if res := w.quit(t); res.ExitCode != 0 {
			t.Fatalf("run %d ended with %+v: %v", run, res, w.c.snapshot())
		}
	}
	if modules[0] != modules[1] {
		t.Errorf("the warm runs' numpy modules differ (%q): not the template's import", modules[:2])
	}
	if hooks[0] != "hook ndarray 1.0" || hooks[1] != hooks[0] || hooks[2] != hooks[0] {
		t.Errorf("the hooks of two warm runs and a cold one printed %q", hooks)
	}

	marks := t.TempDir()
	shadowed := script(t, "warm/shadow/numpy_first.py")
	tp = startTemplate(t, h, py, shadowed, newCollector(), warmEnv(t, "WARM_MARKS="+marks))
	if got := tp.Preloaded(); !slices.Equal(got, []string{"json"}) {
		t.Errorf("with a numpy.py in the strategy's folder the template preloaded %q, want json", got)
	}
	w := forkWorker(t, tp, shadowed, warmEnv(t, "WARM_MARKS="+marks), Limits{})
	w.c.waitFor(t, "folder numpy imported")
	w.manifest(t)
	w.quit(t)
}

// TestLyingTemplate: a template whose answer the kernel does not confirm
// (its own pid, a child in its own namespace, a first process of a new
// namespace that does not execute stratbench's run init or that is not a
// child of the template's init), that breaks the protocol or that does not
// answer gets no run: Fork fails and the template is killed, with all it
// made.
func TestLyingTemplate(t *testing.T) {
	for _, mode := range []string{"self", "child", "garbage", "wrongid", "fakeinit", "subreaper", "silent"} {
		t.Run(mode, func(t *testing.T) {
			h := newHost(t)
			c := newCollector()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tp, err := h.StartTemplate(ctx, Spec{Path: python(t), Args: []string{script(t, "warm/liar.py"), mode},
				Env: []string{"PYTHONDONTWRITEBYTECODE=1"}, Output: c.output, Limits: templateLimits})
			if err != nil {
				t.Fatal(err)
			}
			defer tp.Close()
			template := identify(t, tp.Process().PID())
			w := newWorker(t)
			forkCtx, cancelFork := context.WithTimeout(ctx, 2*time.Second)
			defer cancelFork()
			p, err := tp.Fork(forkCtx, w.runSpec(script(t, "warm/fresh/strategy.py"), nil, Limits{}))
			w.started()
			var refused *ForkRefusedError
			if err == nil || errors.As(err, &refused) {
				if p != nil {
					p.Kill()
				}
				t.Fatalf("Fork from a lying template: %v, want a failure that kills the template", err)
			}
			t.Logf("Fork: %v", err)
			waitDone(t, tp.Process(), 10*time.Second)
			if alive(template) {
				t.Error("the lying template is alive")
			}
			// Whatever it made carries its environment, marker included.
			if left := marked(t, tp.Process().marker); len(left) > 0 {
				t.Errorf("processes %v of the lying template are alive", left)
			}
		})
	}
}

// TestWarmRunCannotReachTemplate: a run that goes after its template (it
// looks for it in /proc, signals every pid it can name and kill(-1)
// reaches, opens its init's memory) finds nothing of the template or of a
// sibling run: its /proc is its own namespace's, and the template and the
// sibling go on. Without root, it has no capabilities and cannot open its
// init's memory.
func TestWarmRunCannotReachTemplate(t *testing.T) {
	h := newHost(t)
	strategy := script(t, "warm/hostile/strategy.py")
	tp := startTemplate(t, h, python(t), strategy, newCollector(), warmEnv(t))
	template := identify(t, tp.Process().PID())
	type seen struct {
		PID, PPID      int
		CapPrm, CapEff uint64
		CapAmb         uint64
		ProcPIDs       []int  `json:"proc_pids"`
		TemplatesFound []int  `json:"templates_found"`
		Killed         []int  `json:"killed"`
		OpenInitMem    string `json:"open_init_mem"`
		Sockets        []int  `json:"sockets"`
	}
	var runs []*worker
	for i := range 2 {
		w := forkWorker(t, tp, strategy, warmEnv(t), Limits{})
		var got seen
		if err := json.Unmarshal([]byte(w.c.waitFor(t, "{").Text), &got); err != nil {
			t.Fatal(err)
		}
		w.manifest(t)
		t.Logf("run %d saw %+v", i, got)
		if got.PPID != 1 || len(got.TemplatesFound) > 0 || len(got.Killed) > 0 || len(got.Sockets) > 0 {
			t.Errorf("run %d reached beyond its namespace: %+v", i, got)
		}
		switch {
		case !w.p.procMounted:
			t.Logf("the template could not mount a /proc for the run's namespace here")
		case !slices.Equal(got.ProcPIDs, []int{1, got.PID}):
			t.Errorf("run %d sees pids %v in /proc, want its namespace's: 1 and itself (%d)", i, got.ProcPIDs, got.PID)
		}
		if os.Geteuid() != 0 && (got.CapPrm|got.CapEff|got.CapAmb != 0 || got.OpenInitMem == "ok") {
			t.Errorf("run %d has capabilities or its init's memory: %+v", i, got)
		}
		runs = append(runs, w)
	}
	if !alive(template) {
		t.Fatal("a run killed the template")
	}
	first := runs[0]
	select {
	case <-first.p.Done():
		t.Fatalf("the second run ended the first: %+v", first.p.Wait())
	default:
	}
	first.firstHook(t)
	if f, err := first.from.Next(); err != nil || f.Type != pyb.TypeYield {
		t.Fatalf("the first run's first batch: %q, %v", f.Type, err)
	}
	for _, w := range runs {
		if res := w.quit(t); res.ExitCode != 0 {
			t.Errorf("a run ended with %+v: %v", res, w.c.snapshot())
		}
	}
}

// TestRunRootIsClaimedOnce: a template that names, for a new run, the root
// of a run it forked before (which passes every other check: a child of the
// template's init, the first process of a namespace one level below,
// executing stratbench) gets no second tree over that namespace: the
// template's tree refuses to hand the same root out twice, and the first
// run goes on.
func TestRunRootIsClaimedOnce(t *testing.T) {
	h := newHost(t)
	strategy := script(t, "warm/fresh/strategy.py")
	tp := startTemplate(t, h, python(t), strategy, newCollector(), warmEnv(t))
	w := forkWorker(t, tp, strategy, warmEnv(t), Limits{})
	w.manifest(t)
	root := identify(t, w.p.initPID)
	req := excludeRequest{pid: root.PID, start: root.Start, done: make(chan error, 1)}
	tp.tree.exclude <- req
	if err := <-req.done; err == nil || !strings.Contains(err.Error(), "already the root of a run") {
		t.Errorf("a second claim on run root %d: %v", root.PID, err)
	}
	if res := w.quit(t); res.ExitCode != 0 {
		t.Errorf("the run ended with %+v", res)
	}
}

// TestForksOverlapTheirInits: the fork socket carries one exchange at a
// time, but a run's init starting does not hold up the next Fork: a second
// Fork returns while the first still waits for its init, held at a gate.
// Both runs then run and end as any other.
func TestForksOverlapTheirInits(t *testing.T) {
	h := newHost(t)
	strategy := script(t, "warm/fresh/strategy.py")
	tp := startTemplate(t, h, python(t), strategy, newCollector(), warmEnv(t))
	gate := newInitGate(t)
	first, firstDone := forkAsync(t, tp, strategy, warmEnv(t, gate.env()), Limits{})
	gate.waitArrived(t) // the first Fork's exchange is over; its init waits
	second, secondDone := forkAsync(t, tp, strategy, warmEnv(t), Limits{})
	select {
	case err := <-secondDone:
		if err != nil {
			gate.open(t)
			t.Fatalf("the second fork: %v", err)
		}
	case <-time.After(10 * time.Second):
		gate.open(t)
		<-firstDone
		<-secondDone
		t.Fatal("the second Fork waited for the first run's init")
	}
	select {
	case err := <-firstDone:
		t.Fatalf("the first Fork returned (%v) while its init was at the gate", err)
	default:
	}
	gate.open(t)
	if err := <-firstDone; err != nil {
		t.Fatalf("the first fork: %v", err)
	}
	for i, w := range []*worker{first, second} {
		w.manifest(t)
		if res := w.quit(t); res.ExitCode != 0 || res.TreeTracking != TrackingPIDNamespace || res.Violation != nil {
			t.Errorf("run %d ended with %+v; output %v", i, res, w.c.snapshot())
		}
	}
	checkTemplateAlive(t, tp, "after two overlapping forks")
}

// TestForksInFlightAreBounded: with maxForking Forks waiting for their
// inits, another Fork does not ask the template for a run until one of
// them is done, so that the template's tree, which counts a run until it
// is adopted, never counts more of them.
func TestForksInFlightAreBounded(t *testing.T) {
	h := newHost(t)
	strategy := script(t, "warm/fresh/strategy.py")
	tp := startTemplate(t, h, python(t), strategy, newCollector(), warmEnv(t))
	gates := make([]initGate, maxForking)
	held := make([]*worker, maxForking)
	heldDone := make([]<-chan error, maxForking)
	for i := range gates {
		gates[i] = newInitGate(t)
		held[i], heldDone[i] = forkAsync(t, tp, strategy, warmEnv(t, gates[i].env()), Limits{})
		gates[i].waitArrived(t)
	}
	last, lastDone := forkAsync(t, tp, strategy, warmEnv(t), Limits{})
	// Nothing to wait for here but time: a Fork that went ahead returns
	// in tens of milliseconds (one that waits can only be seen not to).
	select {
	case err := <-lastDone:
		for _, g := range gates {
			g.open(t)
		}
		t.Fatalf("a Fork returned (%v) while %d others were in flight", err, maxForking)
	case <-time.After(500 * time.Millisecond):
	}
	gates[0].open(t)
	if err := <-heldDone[0]; err != nil {
		t.Fatalf("the first fork: %v", err)
	}
	if err := <-lastDone; err != nil {
		t.Fatalf("the last fork: %v", err)
	}
	for _, g := range gates[1:] {
		g.open(t)
	}
	for i, ch := range heldDone[1:] {
		if err := <-ch; err != nil {
			t.Fatalf("fork %d: %v", i+1, err)
		}
	}
	for i, w := range append(held, last) {
		w.manifest(t)
		if res := w.quit(t); res.ExitCode != 0 || res.Violation != nil {
			t.Errorf("run %d ended with %+v; output %v", i, res, w.c.snapshot())
		}
	}
}

// failingRunInitEnv, in a run's environment, makes the test binary, started
// as that run's init, write its value to stderr and exit before it reports
// (TestMain reads it), as a run init that cannot start does.
const failingRunInitEnv = "STRATBENCH_TEST_FAILING_RUN_INIT"

// TestForkSaysWhatTheRunWrote: a run whose init ends before it reports is
// not adopted, and the error says what the run's processes wrote to its
// stderr (where the template's processes of a run and the run init say why
// they give up).
func TestForkSaysWhatTheRunWrote(t *testing.T) {
	h := newHost(t)
	strategy := script(t, "warm/fresh/strategy.py")
	tp := startTemplate(t, h, python(t), strategy, newCollector(), warmEnv(t))
	w := newWorker(t)
	const said = "run init: cannot start for a reason of its own"
	_, err := tp.Fork(context.Background(), w.runSpec(strategy, warmEnv(t, failingRunInitEnv+"="+said), Limits{}))
	w.started()
	// Which check finds the init gone depends on when it ended (it may be
	// gone before the host looks for it): the error says what it wrote.
	if err == nil || !strings.Contains(err.Error(), said) {
		t.Fatalf("Fork: %v, want what the run init wrote, %q", err, said)
	}
}

// TestForksInFlightFitTheTemplate: a template may have maxForking forks
// in flight while the copies they make of it fit its memory limit (three
// a fork), fewer when they do not, and always one.
func TestForksInFlightFitTheTemplate(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		rss, limit int64
		want       int
	}{
		{30 * mib, 2048 * mib, maxForking},
		{30 * mib, 0, maxForking}, // no memory limit
		{2048 * mib / (1 + 3*maxForking), 2048 * mib, maxForking},
		{2048*mib/(1+3*maxForking) + 1, 2048 * mib, maxForking - 1},
		{600 * mib, 2048 * mib, 1},
		{4096 * mib, 2048 * mib, 1},
	} {
		if got := forksInFlight(tc.rss, tc.limit); got != tc.want {
			t.Errorf("forksInFlight(%d MiB, %d MiB) = %d, want %d", tc.rss/mib, tc.limit/mib, got, tc.want)
		}
	}
	h := newHost(t)
	strategy := script(t, "warm/fresh/strategy.py")
	tp := startTemplate(t, h, python(t), strategy, newCollector(), warmEnv(t))
	if cap(tp.forking) != maxForking {
		t.Errorf("a small template may have %d forks in flight, want %d", cap(tp.forking), maxForking)
	}
}

// TestCancelledForkLeavesTheTemplate: a Fork whose ctx ends while it waits
// for its turn on the fork socket sends nothing, and the template lives on.
func TestCancelledForkLeavesTheTemplate(t *testing.T) {
	h := newHost(t)
	strategy := script(t, "warm/fresh/strategy.py")
	tp := startTemplate(t, h, python(t), strategy, newCollector(), warmEnv(t))
	w := newWorker(t)
	ctx, cancel := context.WithCancel(context.Background())
	tp.mu.Lock() // another Fork's exchange, as the waiting Fork sees it
	done := make(chan error, 1)
	go func() {
		_, err := tp.Fork(ctx, w.runSpec(strategy, warmEnv(t), Limits{}))
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for len(tp.forking) == 0 { // it took its token: it waits for the socket
		if time.Now().After(deadline) {
			tp.mu.Unlock()
			t.Fatal("the Fork never took a token")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	tp.mu.Unlock()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Fork: %v, want context.Canceled", err)
	}
	w.started()
	checkTemplateAlive(t, tp, "after a cancelled fork")
	w2 := forkWorker(t, tp, strategy, warmEnv(t), Limits{})
	w2.manifest(t)
	if res := w2.quit(t); res.ExitCode != 0 {
		t.Errorf("the next run ended with %+v", res)
	}
}

// TestTemplateSaysItIsStale: a template of the bridge says it is stale
// (Stale, and a fork refused with ForkRefusedError.Stale) once the
// strategy's leading imports differ from those it imported for, and lives
// on; a change elsewhere in the file, or the imports back as they were, is
// not stale, nor is a file that does not parse (the run reports it, as a
// cold start does).
func TestTemplateSaysItIsStale(t *testing.T) {
	h := newHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	strategy := filepath.Join(t.TempDir(), "strategy.py")
	body := "\n\ndef on_data(ctx, history):\n    pass\n"
	write := func(src string) {
		t.Helper()
		if err := os.WriteFile(strategy, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("import os\n" + body)
	tp := startTemplate(t, h, python(t), strategy, newCollector(), warmEnv(t))
	for _, tc := range []struct {
		what, src string
		stale     bool
	}{
		{"unchanged", "import os\n" + body, false},
		{"a change below the imports", "import os\n" + body + "    # more\n", false},
		{"an import added", "import os\nimport countlib\n" + body, true},
		{"a syntax error", "import os\nimport countlib\n" + body + "    )\n", false},
		{"the imports as they were", "import os\n" + body + "\n", false},
		{"an import removed", body, true},
	} {
		write(tc.src)
		stale, why, err := tp.Stale(ctx)
		if err != nil || stale != tc.stale || stale != strings.Contains(why, "leading imports changed") {
			t.Errorf("%s: stale %v (%q, %v), want %v", tc.what, stale, why, err, tc.stale)
		}
		if !tc.stale {
			continue
		}
		w := newWorker(t)
		_, err = tp.Fork(ctx, w.runSpec(strategy, warmEnv(t), Limits{}))
		w.started()
		var refused *ForkRefusedError
		if !errors.As(err, &refused) || !refused.Stale {
			t.Errorf("%s: a fork: %v, want a refusal as stale", tc.what, err)
		}
		checkTemplateAlive(t, tp, "after "+tc.what)
	}
}

// TestLyingTemplateCheck: a template that answers a check with a run, with
// garbage or another request's id, or not at all, is killed, as for a
// fork.
func TestLyingTemplateCheck(t *testing.T) {
	for _, mode := range []string{"self", "garbage", "wrongid", "silent"} {
		t.Run(mode, func(t *testing.T) {
			h := newHost(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tp, err := h.StartTemplate(ctx, Spec{Path: python(t), Args: []string{script(t, "warm/liar.py"), mode},
				Env: []string{"PYTHONDONTWRITEBYTECODE=1"}, Output: newCollector().output, Limits: templateLimits})
			if err != nil {
				t.Fatal(err)
			}
			defer tp.Close()
			checkCtx, cancelCheck := context.WithTimeout(ctx, 2*time.Second)
			defer cancelCheck()
			if stale, _, err := tp.Stale(checkCtx); err == nil {
				t.Fatalf("a check of a lying template: stale %v, no error", stale)
			}
			waitDone(t, tp.Process(), 10*time.Second)
		})
	}
}

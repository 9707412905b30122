package workbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"stratbench/contract"
	"stratbench/engine"
	"stratbench/job"
	"stratbench/themes"
	"stratbench/ui/components"
	"stratbench/watch"
)

// quits reports whether cmd, run, asks the program to quit.
func quits(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	switch msg := cmd().(type) {
	case tea.QuitMsg:
		return true
	case tea.BatchMsg:
		for _, c := range msg {
			if c != nil && quits(c) {
				return true
			}
		}
	}
	return false
}

func TestFocusCycling(t *testing.T) {
	m := newTestModel(t, 80, 24)
	if m.focus != paneLogs {
		t.Fatalf("initial focus %v, want Logs", m.focus)
	}
	var seen []paneID
	for range paneCount {
		m.Update(press("tab"))
		seen = append(seen, m.focus)
	}
	want := []paneID{paneFailure, paneResults, paneJobs, paneHooks, paneProcs, paneLogs}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("tab order %v, want %v", seen, want)
	}
	m.Update(press("shift+tab"))
	if m.focus != paneProcs {
		t.Errorf("shift+tab from Logs went to %v, want Process tree", m.focus)
	}
	for i, want := range []paneID{paneHooks, paneProcs, paneLogs, paneFailure, paneResults, paneJobs} {
		m.Update(press(fmt.Sprint(i + 1)))
		if m.focus != want {
			t.Errorf("key %d focused %v, want %v", i+1, m.focus, want)
		}
		if !strings.Contains(screen(m), "["+tabLabel(want, true, false)[1:]) {
			t.Errorf("key %d: tab bar does not mark %v", i+1, want)
		}
	}
	m.Update(press("4"))
	if m.slot != paneFailure {
		t.Errorf("focusing Failure left the shared slot on %v", m.slot)
	}
	m.Update(press("5"))
	if m.slot != paneResults {
		t.Errorf("focusing Results left the shared slot on %v", m.slot)
	}
}

func TestSearchNextPrev(t *testing.T) {
	m := newTestModel(t, 80, 24)
	startRun(m, newFakeRun(testJob, 0))
	var lines []job.LogLine
	for i := range 100 {
		text := fmt.Sprintf("line %d", i)
		if i%25 == 0 {
			text += " ORDER filled"
		}
		lines = append(lines, job.LogLine{Stream: "stdout", Line: text})
	}
	feed(m, jobStarted(testJob), job.LogLines{JobID: testJob, Lines: lines})
	logs := m.live.logs

	m.Update(press("/"))
	if !logs.searching {
		t.Fatal("/ did not open the search prompt")
	}
	typeKeys(m, "order") // case-insensitive
	m.Update(press("enter"))
	if logs.searching || logs.query != "order" {
		t.Fatalf("after enter: searching=%v query=%q", logs.searching, logs.query)
	}
	// The view followed the tail (lines 85–99), so the search wraps to line 0.
	if logs.match != 0 || logs.matchNo != 1 || logs.matches != 4 {
		t.Fatalf("first match: line %d (%d/%d), want line 0 (1/4)", logs.match, logs.matchNo, logs.matches)
	}
	if logs.follow {
		t.Error("a search jump left follow on")
	}
	for _, want := range []int{25, 50, 75, 0} {
		m.Update(press("n"))
		if logs.match != want {
			t.Errorf("n: line %d, want %d", logs.match, want)
		}
	}
	for _, want := range []int{75, 50} {
		m.Update(press("N"))
		if logs.match != want {
			t.Errorf("N: line %d, want %d", logs.match, want)
		}
	}
	if s := screen(m); !strings.Contains(s, "▶ line 50 ORDER filled") || !strings.Contains(s, "/order 3/4") {
		t.Errorf("screen does not show the current match:\n%s", s)
	}

	// esc in the prompt keeps the previous query; esc outside clears it.
	m.Update(press("/"))
	typeKeys(m, "zzz")
	m.Update(press("esc"))
	if logs.searching || logs.query != "order" {
		t.Errorf("esc in the prompt: searching=%v query=%q", logs.searching, logs.query)
	}
	m.Update(press("esc"))
	if logs.query != "" {
		t.Errorf("esc did not clear the search, query %q", logs.query)
	}

	m.Update(press("/"))
	typeKeys(m, "nowhere")
	m.Update(press("enter"))
	if logs.match != -1 || !strings.Contains(screen(m), "/nowhere: no match") {
		t.Errorf("a query without match: match=%d", logs.match)
	}
}

func TestSearchPromptTakesKeys(t *testing.T) {
	m := newTestModel(t, 80, 24)
	startRun(m, newFakeRun(testJob, 0))
	r := m.run.(*fakeRun)
	m.Update(press("/"))
	typeKeys(m, "qs1?")
	if m.then == thenQuit || r.stops() != 0 || m.focus != paneLogs || m.showHelp {
		t.Fatalf("keys typed in the prompt acted as commands: quitting=%v stops=%d focus=%v help=%v",
			m.then == thenQuit, r.stops(), m.focus, m.showHelp)
	}
	m.Update(press("backspace"))
	if got := m.live.logs.input.String(); got != "qs1" {
		t.Errorf("prompt holds %q, want %q", got, "qs1")
	}
	m.Update(tea.PasteMsg{Content: "x\x1b[31my"})
	if got := m.live.logs.input.String(); got != "qs1xy" {
		t.Errorf("paste: prompt holds %q, want %q", got, "qs1xy")
	}
	_, cmd := m.Update(press("ctrl+c"))
	if m.then != thenQuit || r.stops() != 1 || cmd != nil {
		t.Errorf("ctrl+c in the prompt: quitting=%v stops=%d", m.then == thenQuit, r.stops())
	}
}

func TestFollow(t *testing.T) {
	m := newTestModel(t, 80, 24)
	startRun(m, newFakeRun(testJob, 0))
	batch := func(from, n int) job.LogLines {
		ev := job.LogLines{JobID: testJob}
		for i := range n {
			ev.Lines = append(ev.Lines, job.LogLine{Stream: "stdout", Line: fmt.Sprintf("line %d", from+i)})
		}
		return ev
	}
	feed(m, jobStarted(testJob), batch(0, 100))
	logs := m.live.logs
	if !logs.follow || !strings.Contains(screen(m), "line 99") {
		t.Fatal("a new run does not follow its log")
	}
	m.Update(press("k"))
	if logs.follow {
		t.Fatal("k left follow on")
	}
	top := logs.visibleTop()
	feed(m, batch(100, 50))
	if logs.visibleTop() != top || strings.Contains(screen(m), "line 149") {
		t.Error("new lines moved a paused view")
	}
	m.Update(press("F"))
	if !logs.follow || !strings.Contains(screen(m), "line 149") {
		t.Error("F did not resume following")
	}
	m.Update(press("F"))
	if logs.follow {
		t.Error("F did not pause")
	}
	m.Update(press("g"))
	if logs.visibleTop() != 0 {
		t.Errorf("g: top %d, want 0", logs.visibleTop())
	}
	m.Update(press("G"))
	if !logs.follow {
		t.Error("G did not resume following")
	}
	// f is not page-down (bubbles' viewport binds it); it does nothing here.
	m.Update(press("f"))
	if !logs.follow {
		t.Error("f changed the log view")
	}
}

func TestHelpOverlay(t *testing.T) {
	m := newTestModel(t, 120, 40)
	m.Update(press("?"))
	if !m.showHelp || !strings.Contains(screen(m), "Keys · ? or esc closes") {
		t.Fatal("? did not open the help overlay")
	}
	for _, b := range m.keys.fullHelp() {
		for _, k := range b {
			if !strings.Contains(screen(m), k.Help().Key) {
				t.Errorf("the overlay lacks key %q", k.Help().Key)
			}
		}
	}
	focus := m.focus
	m.Update(press("tab"))
	if m.focus != focus {
		t.Error("tab changed focus behind the overlay")
	}
	m.Update(press("esc"))
	if m.showHelp {
		t.Error("esc did not close the overlay")
	}
	m.Update(press("?"))
	m.Update(press("?"))
	if m.showHelp {
		t.Error("? did not close the overlay")
	}
}

func TestEnterOpensJobAndEscReturns(t *testing.T) {
	m := newTestModel(t, 120, 40)
	withSyntheticJobs(t, m)
	m.Update(press("6"))
	m.Update(press("j"))
	m.Update(press("j")) // the failed job
	openSelected(t, m)
	if m.inspected == nil || m.inspected.id != "20261130-100000.000-0002" {
		t.Fatalf("enter opened %v", m.inspected)
	}
	s := screen(m)
	for _, want := range []string{"stored job 20261130-100000.000-0002", "✗ FAILED", "EXCEPTION in on_data", "▶ /home/ana/strategies/signals.py:7 in edge"} {
		if !strings.Contains(s, want) {
			t.Errorf("stored job view lacks %q", want)
		}
	}
	if m.focus != paneFailure {
		t.Errorf("a failed job opened on %v, want Failure", m.focus)
	}
	m.Update(press("3"))
	if !strings.Contains(screen(m), "stored line 39") {
		t.Error("the stored job's log is not shown")
	}
	// Live events keep flowing into the live view meanwhile.
	feed(m, job.LogLines{JobID: testJob, Lines: []job.LogLine{{Stream: "stdout", Line: "live line while inspecting"}}})
	if strings.Contains(screen(m), "live line while inspecting") {
		t.Error("live output shows in a stored job's view")
	}
	m.Update(press("esc"))
	if m.inspected != nil || m.focus != paneJobs {
		t.Fatalf("esc: inspected=%v focus=%v", m.inspected, m.focus)
	}
	m.Update(press("3"))
	if !strings.Contains(screen(m), "live line while inspecting") {
		t.Error("back in the live view, its log lacks what arrived meanwhile")
	}
	// Enter on the live job shows the live view, not a stored copy.
	m.Update(press("6"))
	m.Update(press("g"))
	_, cmd := m.Update(press("enter"))
	m.Update(cmd())
	if m.inspected != nil || m.focus != paneLogs {
		t.Errorf("enter on the live job: inspected=%v focus=%v", m.inspected, m.focus)
	}
}

func TestOpenUnknownJob(t *testing.T) {
	m := newTestModel(t, 80, 24)
	m.opts.Store = newStore(t)
	cmd := m.openJob("nope")
	m.Update(cmd())
	if m.inspected != nil || !strings.Contains(screen(m), "load job nope") {
		t.Errorf("opening an unknown job: inspected=%v, screen:\n%s", m.inspected, screen(m))
	}
}

func TestStaleEventsAreDropped(t *testing.T) {
	m := newTestModel(t, 80, 24)
	a := newFakeRun("job-a", 0)
	startRun(m, a)
	genA := m.gen
	feed(m, jobStarted("job-a"), job.LogLines{JobID: "job-a", Lines: []job.LogLine{{Stream: "stdout", Line: "from a"}}})
	// An event naming another job is dropped even in a current batch.
	feed(m, job.LogLines{JobID: "job-x", Lines: []job.LogLine{{Stream: "stdout", Line: "from x"}}})
	if strings.Contains(screen(m), "from x") {
		t.Fatal("an event of another job was shown")
	}

	// A save during the run: a is stopped first, b starts when a has ended.
	m.Update(changeMsg{change: watch.Change{Kind: watch.Changed}, ok: true})
	if a.stops() != 1 || m.then != thenRestart || m.run != a {
		t.Fatalf("change during a run: stops=%d restart=%v", a.stops(), m.then == thenRestart)
	}
	if !strings.Contains(screen(m), "STOPPING") {
		t.Error("the header does not say STOPPING")
	}
	// a's on_finish output still belongs to a.
	feed(m, job.LogLines{JobID: "job-a", Lines: []job.LogLine{{Stream: "stdout", Line: "a on_finish"}}})
	if !strings.Contains(screen(m), "a on_finish") {
		t.Error("the stopping run's own output was dropped")
	}
	_, cmd := m.Update(eventsMsg{gen: genA, closed: true})
	if cmd == nil || m.state != runStarting || m.gen == genA {
		t.Fatalf("the end of a did not start b: starting=%v gen=%d", m.state == runStarting, m.gen)
	}
	if strings.Contains(screen(m), "from a") {
		t.Error("the new run's view shows the old run's output")
	}
	b := newFakeRun("job-b", 0)
	m.Update(runStartedMsg{gen: m.gen, run: b})
	// A late batch of a (its generation) is dropped.
	m.Update(eventsMsg{gen: genA, events: []job.Event{job.LogLines{JobID: "job-a", Lines: []job.LogLine{{Stream: "stdout", Line: "late a"}}}}})
	feed(m, jobStarted("job-b"), job.LogLines{JobID: "job-b", Lines: []job.LogLine{{Stream: "stdout", Line: "from b"}}})
	s := screen(m)
	if strings.Contains(s, "late a") || strings.Contains(s, "a on_finish") || !strings.Contains(s, "from b") {
		t.Errorf("output leaked between runs:\n%s", s)
	}
	if m.live.logs.ring.total != 1 {
		t.Errorf("b's log holds %d lines, want 1", m.live.logs.ring.total)
	}
}

func TestRerunAndStopKeys(t *testing.T) {
	m := newTestModel(t, 80, 24)
	a := newFakeRun("job-a", 0)
	startRun(m, a)
	m.Update(press("s"))
	m.Update(press("s"))
	if a.stops() != 1 || m.then == thenRestart {
		t.Fatalf("s twice: stops=%d restart=%v", a.stops(), m.then == thenRestart)
	}
	_, cmd := m.Update(eventsMsg{gen: m.gen, closed: true})
	if cmd != nil || m.state == runStarting {
		t.Fatal("a stopped run restarted")
	}
	if !strings.Contains(screen(m), "STOPPED") {
		t.Error("a run that ended without a report is not STOPPED")
	}
	m.Update(press("r"))
	if m.state != runStarting {
		t.Fatal("r did not start a run")
	}
	m.fileMissing = true
	m.state = runIdle
	m.Update(press("r"))
	if m.state == runStarting || !strings.Contains(screen(m), "waiting for strategy.py") {
		t.Error("r started a run of a missing file")
	}
}

func TestWatchChanges(t *testing.T) {
	m := newTestModel(t, 80, 24)
	ch := make(chan watch.Change)
	m.opts.Changes = ch
	if cmd := m.Init(); cmd == nil || m.state == runStarting {
		t.Fatalf("with a watcher, Init started a run before its first report (starting=%v)", m.state == runStarting)
	}
	m.Update(changeMsg{change: watch.Change{Kind: watch.Missing}, ok: true})
	if s := screen(m); !strings.Contains(s, "WAITING") || !strings.Contains(s, "waiting for strategy.py") {
		t.Errorf("missing file:\n%s", s)
	}
	m.Update(changeMsg{change: watch.Change{Kind: watch.Warning, Err: errors.New("inotify watch limit reached; polling every 500ms (raise fs.inotify.max_user_watches)")}, ok: true})
	if s := screen(m); !strings.Contains(s, "fs.inotify.max_user_watches") {
		t.Errorf("watch warning not shown:\n%s", s)
	}
	_, cmd := m.Update(changeMsg{change: watch.Change{Kind: watch.Changed}, ok: true})
	if cmd == nil || m.state != runStarting || m.fileMissing {
		t.Errorf("a change did not start a run: starting=%v missing=%v", m.state == runStarting, m.fileMissing)
	}
	m.Update(changeMsg{ok: false})
	if m.opts.Changes != nil || m.waitChange() != nil {
		t.Error("a closed watcher is still listened to")
	}
	if !strings.Contains(screen(m), "not watching") {
		t.Error("the header does not say the file is no longer watched")
	}
}

func TestWaitChangeReadsChannel(t *testing.T) {
	m := newTestModel(t, 80, 24)
	ch := make(chan watch.Change, 1)
	m.opts.Changes = ch
	ch <- watch.Change{Kind: watch.Missing}
	msg, ok := m.waitChange()().(changeMsg)
	if !ok || !msg.ok || msg.change.Kind != watch.Missing {
		t.Fatalf("got %#v", msg)
	}
	close(ch)
	if msg := m.waitChange()().(changeMsg); msg.ok {
		t.Error("a closed channel read as a change")
	}
}

func TestInitWithoutWatcher(t *testing.T) {
	m := newTestModel(t, 80, 24)
	m.Init()
	if m.state != runStarting {
		t.Error("without a watcher, Init did not start the first run")
	}
	m = newTestModel(t, 80, 24)
	m.fileMissing = true
	m.Init()
	if m.state == runStarting {
		t.Error("Init started a run of a missing file")
	}
}

func TestQuit(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		m := newTestModel(t, 80, 24)
		_, cmd := m.Update(press("q"))
		if !quits(cmd) {
			t.Error("q did not quit")
		}
	})
	for _, k := range []string{"q", "ctrl+c"} {
		t.Run("running/"+k, func(t *testing.T) {
			m := newTestModel(t, 80, 24)
			r := newFakeRun(testJob, 0)
			startRun(m, r)
			_, cmd := m.Update(press(k))
			if quits(cmd) || r.stops() != 1 {
				t.Fatalf("%s during a run: quit at once or did not stop (stops=%d)", k, r.stops())
			}
			if !strings.Contains(screen(m), "then the workbench quits") {
				t.Error("the header does not say the workbench quits after the stop")
			}
			_, cmd = m.Update(eventsMsg{gen: m.gen, closed: true})
			if !quits(cmd) {
				t.Error("the end of the run did not quit")
			}
		})
	}
	t.Run("twice", func(t *testing.T) {
		m := newTestModel(t, 80, 24)
		startRun(m, newFakeRun(testJob, 0))
		m.Update(press("q"))
		_, cmd := m.Update(press("q"))
		if !quits(cmd) {
			t.Error("a second q did not quit at once")
		}
	})
	t.Run("signal", func(t *testing.T) {
		m := newTestModel(t, 80, 24)
		r := newFakeRun(testJob, 0)
		startRun(m, r)
		m.Update(press("r")) // a restart is pending; the shutdown cancels it
		_, cmd := m.Update(components.ShutdownMsg{})
		if quits(cmd) || r.stops() != 1 || m.then == thenRestart {
			t.Fatalf("shutdown: stops=%d restart=%v", r.stops(), m.then == thenRestart)
		}
		_, cmd = m.Update(eventsMsg{gen: m.gen, closed: true})
		if !quits(cmd) {
			t.Error("the end of the run did not quit")
		}
	})
	t.Run("while starting", func(t *testing.T) {
		m := newTestModel(t, 80, 24)
		m.requestRun()
		if _, cmd := m.Update(press("q")); quits(cmd) {
			t.Fatal("q quit while a run was starting")
		}
		r := newFakeRun(testJob, 0)
		m.Update(runStartedMsg{gen: m.gen, run: r})
		if r.stops() != 1 {
			t.Error("a run that started after q was not stopped")
		}
	})
}

func TestStartErrors(t *testing.T) {
	m := newTestModel(t, 80, 24)
	m.requestRun()
	usage := &engine.UsageError{Err: errors.New("strategy: open strategy.py: permission denied")}
	_, cmd := m.Update(runStartedMsg{gen: m.gen, err: usage})
	if quits(cmd) {
		t.Fatal("a usage error quit the workbench")
	}
	if s := screen(m); !strings.Contains(s, "cannot start: strategy: open strategy.py: permission denied") || !strings.Contains(s, "✗4 Failure") {
		t.Errorf("the header does not say why, or the failure tab is not marked:\n%s", s)
	}
	m.Update(press("4"))
	s := screen(m)
	for _, want := range []string{"ERROR", "the run could not start", "permission denied"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	// Finished with Err: the engine's way to say the job could not run.
	r := newFakeRun(testJob, 0)
	m.requestRun()
	m.Update(runStartedMsg{gen: m.gen, run: r})
	feed(m, job.Finished{JobID: testJob, Err: &engine.UsageError{Err: errors.New("--param fast=x: want an int")}})
	closeRun(m)
	if s := screen(m); !strings.Contains(s, "ERROR") || !strings.Contains(s, "want an int") {
		t.Errorf("Finished with Err:\n%s", s)
	}
}

func TestStartCmd(t *testing.T) {
	m := newTestModel(t, 80, 24)
	r := newFakeRun(testJob, 0)
	var gotCtx context.Context
	m.opts.Start = func(ctx context.Context, _ []job.Breakpoint) (RunHandle, error) { gotCtx = ctx; return r, nil }
	msg := m.startCmd(7)().(runStartedMsg)
	if msg.gen != 7 || msg.run != r || msg.err != nil || gotCtx == nil || gotCtx.Err() != nil {
		t.Errorf("got %#v", msg)
	}
	// The run's context is its own: kill cancels it, not the workbench's.
	msg.kill()
	if gotCtx.Err() == nil || m.ctx.Err() != nil {
		t.Errorf("kill: the run's context %v, the workbench's %v", gotCtx.Err(), m.ctx.Err())
	}
	m.opts.Start = func(context.Context, []job.Breakpoint) (RunHandle, error) { return nil, nil }
	if msg := m.startCmd(1)().(runStartedMsg); msg.err == nil {
		t.Error("Start returning neither run nor error was not an error")
	}
}

func TestReadEventsBatches(t *testing.T) {
	m := newTestModel(t, 80, 24)
	r := newFakeRun(testJob, maxBatchEvents+10)
	startRun(m, r)
	for i := range maxBatchEvents + 5 {
		r.ch <- job.Progress{JobID: testJob, Done: i}
	}
	msg := m.readEvents()().(eventsMsg)
	if len(msg.events) != maxBatchEvents || msg.closed || msg.gen != m.gen {
		t.Fatalf("first batch: %d events, closed=%v", len(msg.events), msg.closed)
	}
	close(r.ch)
	m.nextRead = time.Now().Add(30 * time.Millisecond)
	start := time.Now()
	msg = m.readEvents()().(eventsMsg)
	if len(msg.events) != 5 || !msg.closed {
		t.Fatalf("second batch: %d events, closed=%v", len(msg.events), msg.closed)
	}
	if time.Since(start) < 25*time.Millisecond {
		t.Error("the reader did not wait for its pacing interval")
	}
	msg = m.readEvents()().(eventsMsg)
	if len(msg.events) != 0 || !msg.closed {
		t.Error("a closed stream did not read as closed")
	}
}

// TestReadEventsFinishedNotPaced: the run's last event reaches the screen
// at once, whatever the pacing interval says: a reader that waited for it
// would hold this one for an hour.
func TestReadEventsFinishedNotPaced(t *testing.T) {
	m := newTestModel(t, 80, 24)
	r := newFakeRun(testJob, 2)
	startRun(m, r)
	m.nextRead = time.Now().Add(time.Hour)
	r.ch <- job.Finished{JobID: testJob, Report: &job.Report{JobID: testJob, Status: job.StatusPassed}}
	close(r.ch)
	got := make(chan eventsMsg, 1)
	go func() { got <- m.readEvents()().(eventsMsg) }()
	select {
	case msg := <-got:
		if len(msg.events) != 1 {
			t.Fatalf("%d events, want the Finished one", len(msg.events))
		}
		if _, ok := msg.events[0].(job.Finished); !ok {
			t.Fatalf("got %T, want job.Finished", msg.events[0])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the Finished event waited for the pacing interval")
	}
	// The stream's end is read next, as before.
	if msg := m.readEvents()().(eventsMsg); len(msg.events) != 0 || !msg.closed {
		t.Error("a closed stream did not read as closed")
	}
}

// endingRun is a fakeRun that says when it has ended, as *engine.Job does.
type endingRun struct {
	*fakeRun
	done chan struct{}
}

func (r endingRun) Done() <-chan struct{} { return r.done }

// TestReadEventsRunEndEndsThePacing: a reader waiting out its pacing
// interval after an event takes the rest at once when the run ends: the
// Finished event behind it is not held for the interval (here an hour).
func TestReadEventsRunEndEndsThePacing(t *testing.T) {
	m := newTestModel(t, 80, 24)
	r := endingRun{newFakeRun(testJob, 4), make(chan struct{})}
	startRun(m, r)
	m.nextRead = time.Now().Add(time.Hour)
	r.ch <- job.Progress{JobID: testJob, Done: 1}
	got := make(chan eventsMsg, 1)
	go func() { got <- m.readEvents()().(eventsMsg) }()
	r.ch <- job.Finished{JobID: testJob, Report: &job.Report{JobID: testJob, Status: job.StatusPassed}}
	close(r.done)
	select {
	case msg := <-got:
		if n := len(msg.events); n < 1 || n > 2 {
			t.Fatalf("%d events", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader waited out its pacing interval after the run had ended")
	}
}

func TestLogRingBound(t *testing.T) {
	m := newTestModel(t, 80, 24)
	m.ringLines = 1000
	startRun(m, newFakeRun(testJob, 0))
	for b := range 30 {
		ev := job.LogLines{JobID: testJob}
		for i := range 100 {
			ev.Lines = append(ev.Lines, job.LogLine{Stream: "stdout", Line: fmt.Sprintf("line %d", b*100+i)})
		}
		feed(m, ev)
	}
	ring := m.live.logs.ring
	if ring.n != 1000 || ring.total != 3000 || ring.first() != 2000 {
		t.Fatalf("ring n=%d total=%d first=%d", ring.n, ring.total, ring.first())
	}
	if l, ok := ring.at(2000); !ok || l.Line != "line 2000" {
		t.Errorf("oldest line %q", l.Line)
	}
	if _, ok := ring.at(1999); ok {
		t.Error("a dropped line is still readable")
	}
	m.Update(press("3"))
	m.Update(press("g"))
	if s := screen(m); !strings.Contains(s, "⋯ 2,000 earlier lines:") || !strings.Contains(s, "(the last 1,000 kept)") {
		t.Errorf("the top of the ring does not say where the earlier lines are, or the status how many are kept:\n%s", s)
	}
	m.Update(press("/"))
	typeKeys(m, "line 2")
	m.Update(press("enter"))
	if s := screen(m); !strings.Contains(s, "/line 2 1/1000 in the last 1,000 lines") {
		t.Errorf("the search does not say it covers the lines kept:\n%s", s)
	}
}

// TestLogWrapAndSideways: w wraps long lines, ←/→ scroll them sideways; the
// status line says which.
func TestLogWrapAndSideways(t *testing.T) {
	m := newTestModel(t, 80, 24)
	startRun(m, newFakeRun(testJob, 0))
	long := "start " + strings.Repeat("abcdefghij", 20) + " THE-END"
	feed(m, job.LogLines{JobID: testJob, Lines: []job.LogLine{{Stream: "stdout", Line: long}, {Stream: "stdout", Line: "short"}}})
	m.Update(press("3"))
	if s := screen(m); strings.Contains(s, "THE-END") || !strings.Contains(s, "start abcdefghij") {
		t.Fatalf("a long line is not cut by default:\n%s", s)
	}
	m.Update(press("right"))
	m.Update(press("right"))
	m.Update(press("right"))
	m.Update(press("right"))
	if s := screen(m); strings.Contains(s, "start abc") || !strings.Contains(s, "THE-END") || !strings.Contains(s, "→") {
		t.Fatalf("→ did not scroll the line sideways to its end:\n%s", s)
	}
	m.Update(press("w"))
	s := screen(m)
	if !strings.Contains(s, "start abcdefghij") || !strings.Contains(s, "THE-END") || !strings.Contains(s, "wrapped") || !strings.Contains(s, "short") {
		t.Fatalf("w did not wrap the long line whole:\n%s", s)
	}
	m.Update(press("w"))
	if s := screen(m); strings.Contains(s, "THE-END") {
		t.Fatalf("a second w did not cut the line again:\n%s", s)
	}
}

func TestRingPush(t *testing.T) {
	mk := func(from, n int) []job.LogLine {
		out := make([]job.LogLine, n)
		for i := range out {
			out[i].Line = fmt.Sprint(from + i)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		batches []int
	}{
		{"small batches", []int{3, 4, 5, 6}},
		{"one huge batch", []int{25}},
		{"huge after small", []int{3, 22}},
		{"exact capacity", []int{10, 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newLogRing(10)
			total := 0
			for _, n := range tc.batches {
				r.push(mk(total, n))
				total += n
			}
			if r.total != total || r.n != min(total, 10) {
				t.Fatalf("total=%d n=%d", r.total, r.n)
			}
			for seq := r.first(); seq < r.total; seq++ {
				if l, _ := r.at(seq); l.Line != fmt.Sprint(seq) {
					t.Fatalf("at(%d) = %q", seq, l.Line)
				}
			}
		})
	}
}

func TestLogsDroppedAndTruncated(t *testing.T) {
	m := newTestModel(t, 120, 40)
	startRun(m, newFakeRun(testJob, 0))
	feed(m, jobStarted(testJob), job.LogLines{JobID: testJob, Dropped: 500,
		Lines: []job.LogLine{{Stream: "stdout", Line: "kept"}}})
	if !strings.Contains(screen(m), "500 lines not shown") {
		t.Error("dropped lines are not reported")
	}
	rep := passedReport(testJob)
	rep.Logs.Truncated = true
	feed(m, job.Finished{JobID: testJob, Report: rep})
	if !strings.Contains(screen(m), "⚠ output truncated after 64.00 MiB") {
		t.Errorf("the report's truncation is not shown:\n%s", screen(m))
	}
}

func TestEditKey(t *testing.T) {
	m := newTestModel(t, 80, 24)
	startRun(m, newFakeRun(testJob, 0))
	feed(m, job.Finished{JobID: testJob, Report: failedReport(testJob, contract.KindException)})
	if cmd := m.edit(); cmd != nil || !strings.Contains(screen(m), "set $VISUAL or $EDITOR") {
		t.Error("without an editor, e did not explain how to set one")
	}
	m.opts.Editor = "vim"
	if _, cmd := m.Update(press("e")); cmd == nil {
		t.Error("e did not run the editor")
	}
}

func TestEditorCommand(t *testing.T) {
	for _, tc := range []struct {
		editor string
		line   int
		want   string
		lost   bool
	}{
		{"vim", 18, "vim +18 /s/strategy.py", false},
		{"/usr/bin/nvim", 18, "/usr/bin/nvim +18 /s/strategy.py", false},
		{"nano", 3, "nano +3 /s/strategy.py", false},
		{"emacs -nw", 3, "emacs -nw +3 /s/strategy.py", false},
		{"micro", 3, "micro +3 /s/strategy.py", false},
		{"kak", 3, "kak +3 /s/strategy.py", false},
		{"hx", 3, "hx +3 /s/strategy.py", false},
		{"helix", 3, "helix +3 /s/strategy.py", false},
		{"code --wait", 18, "code --wait -g /s/strategy.py:18", false},
		{"subl -w", 18, "subl -w /s/strategy.py:18", false},
		{"zed", 18, "zed /s/strategy.py:18", false},
		{"ed", 18, "ed /s/strategy.py", true},
		{"myeditor", 27, "myeditor /s/strategy.py", true},
		{"vim", 0, "vim /s/strategy.py", false},
		// Templates (STRATBENCH_EDITOR) get the line whatever the editor.
		{"myeditor --line {line} {file}", 27, "myeditor --line 27 /s/strategy.py", false},
		{"myeditor {file}:{line}", 27, "myeditor /s/strategy.py:27", false},
		{"myeditor --line={line}", 27, "myeditor --line=27 /s/strategy.py", false},
		{"myeditor --line {line} {file}", 0, "myeditor --line 1 /s/strategy.py", false},
		{`"/opt/My Editor/ed" -l {line} {file}`, 5, "/opt/My Editor/ed -l 5 /s/strategy.py", false},
	} {
		cmd, lost, err := editorCommand(tc.editor, "/s/strategy.py", tc.line)
		if err != nil {
			t.Fatalf("%s: %v", tc.editor, err)
		}
		if got := strings.Join(cmd.Args, " "); got != tc.want || lost != tc.lost {
			t.Errorf("%q line %d: %q (line lost %v), want %q (%v)", tc.editor, tc.line, got, lost, tc.want, tc.lost)
		}
	}
	if _, _, err := editorCommand("  ", "/s/strategy.py", 1); !errors.Is(err, errNoEditor) {
		t.Errorf("a blank editor: %v", err)
	}
	if _, _, err := editorCommand(`"vim`, "/s/strategy.py", 1); err == nil {
		t.Errorf("an unbalanced quote was taken")
	}
}

// TestEditorRuns runs real editor commands through ExecProcess's command:
// shell scripts that record their arguments, one named as a known editor,
// one unknown but given as a template.
func TestEditorRuns(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "args")
	for _, tc := range []struct{ name, setting, want string }{
		{"vi", "%s", "+42 /s/strategy.py"},
		{"myeditor", "%s --line {line} {file}", "--line 42 /s/strategy.py"},
	} {
		script := filepath.Join(dir, tc.name)
		if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$@\" > "+out+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd, _, err := editorCommand(fmt.Sprintf(tc.setting, script), "/s/strategy.py", 42)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(out)
		if strings.TrimSpace(string(got)) != tc.want {
			t.Errorf("%s got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestThemeCycle(t *testing.T) {
	m := newTestModel(t, 80, 24)
	dark, _ := themes.Named("dark")
	m.theme, m.noColor = dark, false
	var seen []string
	for range 3 {
		m.Update(press("t"))
		seen = append(seen, m.theme.Name)
	}
	if got := strings.Join(seen, ","); got != "light,high-contrast,dark" {
		t.Errorf("t cycled %s", got)
	}
	m.noColor = true
	m.Update(press("t"))
	if m.theme.Name != "dark" || !strings.Contains(screen(m), "NO_COLOR is set") {
		t.Error("t changed colours under NO_COLOR")
	}
}

func TestBackgroundPicksTheme(t *testing.T) {
	m := newTestModel(t, 80, 24)
	m.noColor, m.themeAuto = false, true
	m.setBackground(false)
	if m.theme.Name != "light" {
		t.Errorf("light background gave %s", m.theme.Name)
	}
	m.setBackground(true)
	if m.theme.Name != "dark" {
		t.Errorf("dark background gave %s", m.theme.Name)
	}
	m.themeAuto = false
	m.setBackground(false)
	if m.theme.Name != "dark" {
		t.Error("a named theme followed the background")
	}
}

func TestMouse(t *testing.T) {
	m := newTestModel(t, 120, 40)
	startRun(m, newFakeRun(testJob, 0))
	feed(m, runningEvents(testJob)...)
	logs := m.layout.panes[paneLogs]
	m.Update(tea.MouseWheelMsg{X: logs.x + 5, Y: logs.y + 5, Button: tea.MouseWheelUp})
	if m.focus != paneLogs || m.live.logs.follow {
		t.Errorf("wheel up over the logs: focus=%v follow=%v", m.focus, m.live.logs.follow)
	}
	jobs := m.layout.panes[paneJobs]
	m.Update(tea.MouseClickMsg{X: jobs.x + 3, Y: jobs.y + 1, Button: tea.MouseLeft})
	if m.focus != paneJobs {
		t.Errorf("click on the jobs pane focused %v", m.focus)
	}
	slot := m.layout.panes[paneFailure]
	m.slot = paneResults
	m.Update(tea.MouseClickMsg{X: slot.x + 3, Y: slot.y + 1, Button: tea.MouseLeft})
	if m.focus != paneResults {
		t.Errorf("click on the shared slot focused %v, want the pane it shows", m.focus)
	}

	m.Update(teaSize(80, 24))
	cell := m.layout.tabCells[paneHooks]
	m.Update(tea.MouseClickMsg{X: cell.x + 1, Y: cell.y, Button: tea.MouseLeft})
	if m.focus != paneHooks {
		t.Errorf("click on the Hooks tab focused %v", m.focus)
	}
}

func TestFormatters(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{fmtLimit(5 * time.Second), "5s"},
		{fmtLimit(1500 * time.Millisecond), "1.50s"},
		{truncLeft("/a/very/long/path/strategy.py", 15), "…th/strategy.py"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestTreeOrder(t *testing.T) {
	procs := []job.Proc{
		{PID: 30, PPID: 20}, {PID: 10, PPID: 1}, {PID: 20, PPID: 10}, {PID: 21, PPID: 10},
		{PID: 50, PPID: 51}, {PID: 51, PPID: 50}, // a cycle: no root
	}
	var got []string
	for _, p := range treeOrder(procs) {
		got = append(got, fmt.Sprintf("%d@%d", p.PID, p.depth))
	}
	if s := strings.Join(got, " "); s != "10@0 20@1 30@2 21@1 50@0 51@1" {
		t.Errorf("tree order %s", s)
	}
}

func TestMetricsOrder(t *testing.T) {
	ms := formatMetrics(&contract.Metrics{Fees: 2, StartEquity: 100000, Sharpe: 1.5, Trades: 3, Exposure: 0.25, BarIntervalS: 60})
	var names []string
	for _, m := range ms {
		names = append(names, m.name+"="+m.value)
	}
	got := strings.Join(names, " ")
	want := "start_equity=100,000.00 final_equity=0.00 total_return=0.00 % sharpe=1.50 max_drawdown=0.00 % fills=0 trades=3 " +
		"win_rate=0.00 % fees=2.00 bar_interval_s=1m 00s"
	if !strings.HasPrefix(got, want) || !strings.Contains(got, " exposure=25.00 % ") {
		t.Errorf("metrics %s\nwant    %s …", got, want)
	}
	if formatMetrics(nil) != nil {
		t.Error("a report without metrics shows metrics")
	}
}

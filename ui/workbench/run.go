package workbench

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"stratbench/contract"
	"stratbench/job"
	"stratbench/themes"
	"stratbench/ui/components"
	"stratbench/watch"
)

// Messages of the run lifecycle.
type (
	// runStartedMsg is the result of Options.Start for start request gen.
	runStartedMsg struct {
		gen  int
		run  RunHandle
		err  error
		kill context.CancelFunc // cancels the run's own context: kills it at once
	}
	// eventsMsg is a batch of events read from the run of start request gen.
	eventsMsg struct {
		gen    int
		events []job.Event
		closed bool // the stream has ended
	}
	// changeMsg is one watcher report; ok is false once the watcher's
	// channel is closed.
	changeMsg struct {
		change watch.Change
		ok     bool
	}
	// tickMsg refreshes the elapsed time while a run is in flight.
	tickMsg struct{}
)

// runState is where the run lifecycle is.
type runState int

const (
	runIdle     runState = iota // no run in flight
	runStarting                 // a start request is in flight; m.run is nil
	runRunning                  // m.run streams its events
	runStopping                 // a stop was requested of m.run; its stream goes on to the end
)

// afterRun is what follows once no run is in flight any more.
type afterRun int

const (
	thenNothing afterRun = iota
	thenRestart          // start a new run (a save, or r, during a run)
	thenQuit             // quit (q, or an interrupt, during a run); wins over a restart
)

// requestRun starts a run, or, when one is in flight, stops it first and
// starts the new one once its stream has ended, so that the output of the
// stopped run never mixes with the next.
func (m *model) requestRun() tea.Cmd {
	m.startErr = nil
	if m.state != runIdle {
		if m.then != thenQuit {
			m.then = thenRestart
		}
		m.stopRun()
		return nil
	}
	m.gen++
	m.state = runStarting
	if m.flash.keepRuns > 0 {
		m.flash.keepRuns--
	} else if m.flash.text != "" {
		m.setFlash("", themes.LevelOK) // it was about the run before
	}
	m.live = newJobView(m.ringLines, m.breaks)
	m.live.strategy = m.opts.Strategy
	m.live.failure.strategy = m.opts.Strategy
	m.sizeView(m.live)
	return tea.Batch(m.startCmd(m.gen), m.startTicking())
}

// startCmd calls Options.Start off the event loop, with the breakpoints
// set now. Each run gets a context of its own, whose cancellation kills it
// (a second s while it stops).
func (m *model) startCmd(gen int) tea.Cmd {
	ctx, start, breaks := m.ctx, m.opts.Start, m.breaks.snapshot()
	return func() tea.Msg {
		runCtx, kill := context.WithCancel(ctx)
		run, err := start(runCtx, breaks)
		if err == nil && run == nil {
			err = errors.New("no run was started")
		}
		if err != nil {
			kill()
		}
		return runStartedMsg{gen: gen, run: run, err: err, kill: kill}
	}
}

// stopRun asks the run in flight to stop; on_finish runs and the stream ends.
func (m *model) stopRun() {
	if m.state != runRunning {
		return
	}
	m.state = runStopping
	// A worker at the prompt goes on to the end of its hook (the engine
	// tells it): nobody answers the prompt any more.
	m.live.debug = nil
	m.run.Stop()
}

// stopKey is s: the first stops the run in flight (on_finish runs), a second
// while it stops kills it at once (a slow on_finish is cut short; the job
// is saved as stopped). With no run in flight it says so.
func (m *model) stopKey() {
	switch m.state {
	case runRunning:
		m.stopRun()
	case runStopping:
		if m.killRun != nil {
			m.killRun()
			m.setFlash("killing the run: on_finish is cut short", themes.LevelWarn)
		}
	case runStarting:
		m.setFlash("the run is starting: s stops it once it runs", themes.LevelOK)
	default:
		m.setFlash("no run in flight: nothing to stop (r runs the strategy)", themes.LevelOK)
	}
}

// runStarted takes the result of a start request.
func (m *model) runStarted(msg runStartedMsg) tea.Cmd {
	if msg.gen != m.gen {
		// Cannot happen while starts are serialised; stop an orphan all the same.
		if msg.run != nil {
			msg.run.Stop()
		}
		return nil
	}
	m.state = runIdle
	if msg.err != nil {
		m.startErr = msg.err
		m.live.failure.startErr = msg.err
		m.showInSlot(paneFailure)
		return m.afterRun()
	}
	m.run, m.state, m.killRun = msg.run, runRunning, msg.kill
	m.live.id = msg.run.ID()
	m.live.setStatus(job.StatusRunning)
	m.jobs.started(msg.run.ID())
	if m.then != thenNothing {
		m.stopRun()
	}
	m.nextRead = time.Time{}
	return m.readEvents()
}

// readEvents returns a command that waits for the next batch of the current
// run's events. It paces itself: a batch is taken no sooner than
// batchInterval after the previous one, so that a flood of log lines
// becomes a few large batches instead of many renders; the engine coalesces
// lines meanwhile. The run's Finished event is taken at once, and a run
// that ends (an *engine.Job's Done) ends the wait.
func (m *model) readEvents() tea.Cmd {
	ctx, ch, gen, notBefore := m.ctx, m.run.Events(), m.gen, m.nextRead
	var ended <-chan struct{} // nil: the run does not say (never ready)
	if e, ok := m.run.(interface{ Done() <-chan struct{} }); ok {
		ended = e.Done()
	}
	return func() tea.Msg {
		var first job.Event
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-ch:
			if !ok {
				return eventsMsg{gen: gen, closed: true}
			}
			first = ev
		}
		// The run's last event is never paced: pacing exists to turn a
		// flood into a few renders, and after Finished nothing follows;
		// waiting out the interval would only hold the result off the
		// screen (up to batchInterval of every save's wait).
		if _, last := first.(job.Finished); last {
			return eventsMsg{gen: gen, events: []job.Event{first}}
		}
		if wait := time.Until(notBefore); wait > 0 {
			// A run that ends meanwhile ends the wait: its Finished
			// event is behind the one taken.
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-ended:
				t.Stop()
			case <-t.C:
			}
		}
		batch := []job.Event{first}
		for len(batch) < maxBatchEvents {
			select {
			case ev, ok := <-ch:
				if !ok {
					return eventsMsg{gen: gen, events: batch, closed: true}
				}
				batch = append(batch, ev)
			default:
				return eventsMsg{gen: gen, events: batch}
			}
		}
		return eventsMsg{gen: gen, events: batch}
	}
}

// handleEvents applies a batch of the current run's events. Batches of an
// earlier run and events naming another job are dropped.
func (m *model) handleEvents(msg eventsMsg) tea.Cmd {
	if msg.gen != m.gen || m.run == nil {
		return nil
	}
	id := m.run.ID()
	var cmds []tea.Cmd
	for _, ev := range msg.events {
		if ev == nil || ev.Job() != id {
			continue
		}
		m.live.apply(ev)
		switch e := ev.(type) {
		case job.DebugStop:
			m.debugStopped(e)
		case job.DebugResumed:
			m.debugResumed(e)
		case job.JobStarted:
			m.sizeView(m.live)
			cmds = append(cmds, m.listJobs())
		case job.Finished:
			m.finished(e)
			cmds = append(cmds, m.listJobs())
		}
	}
	if !msg.closed {
		m.nextRead = m.now().Add(batchInterval)
		return tea.Batch(append(cmds, m.readEvents())...)
	}
	if m.live.status == job.StatusRunning {
		m.live.setStatus(job.StatusStopped)
		m.setFlash("the run ended without a final report", themes.LevelWarn)
	}
	m.run, m.state = nil, runIdle
	if m.killRun != nil {
		m.killRun() // the run has ended: its context goes
		m.killRun = nil
	}
	return tea.Batch(append(cmds, m.afterRun())...)
}

// finished moves focus to what matters about a finished run: the failure,
// or the results.
func (m *model) finished(e job.Finished) {
	if e.Report == nil {
		// The job could not run at all, e.g. an undeclared --param.
		err := e.Err
		if err == nil {
			err = errors.New("the run ended without a report")
		}
		m.startErr = err
		m.live.failure.startErr = err
		m.live.setStatus("")
		m.showInSlot(paneFailure)
		return
	}
	target := paneResults
	if e.Report.Status == job.StatusFailed {
		target = paneFailure
	}
	m.showInSlot(target)
}

// showInSlot puts the failure or the results in the place they share. Focus
// moves with it only when it was there: a run that ends, or fails, never
// takes the keyboard from the pane the user is reading (the tab bar marks
// a failure ✗).
func (m *model) showInSlot(target paneID) {
	if m.inspected != nil {
		return
	}
	m.slot = target
	if m.focus == paneFailure || m.focus == paneResults {
		m.focus = target
	}
}

// afterRun runs when no run is in flight any more: quit or restart as asked.
func (m *model) afterRun() tea.Cmd {
	switch m.then {
	case thenQuit:
		return tea.Quit
	case thenRestart:
		m.then = thenNothing
		if !m.fileMissing {
			return m.requestRun()
		}
	}
	return nil
}

// requestQuit quits once the run in flight has stopped (on_finish runs); a
// second request quits at once.
func (m *model) requestQuit() tea.Cmd {
	if m.then == thenQuit || m.state == runIdle {
		m.then = thenQuit
		return tea.Quit
	}
	m.then = thenQuit
	m.stopRun()
	return nil
}

// startTicking schedules clock ticks while a run is in flight.
func (m *model) startTicking() tea.Cmd {
	if m.ticking {
		return nil
	}
	m.ticking = true
	return tea.Tick(components.TickInterval, func(time.Time) tea.Msg { return tickMsg{} })
}

func (m *model) tick() tea.Cmd {
	m.ticking = false
	if m.state == runIdle {
		return nil
	}
	return m.startTicking()
}

// waitChange returns a command that waits for the watcher's next observation.
func (m *model) waitChange() tea.Cmd {
	ctx, ch := m.ctx, m.opts.Changes
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case <-ctx.Done():
			return nil
		case c, ok := <-ch:
			return changeMsg{change: c, ok: ok}
		}
	}
}

// handleChange reacts to the watcher: a change re-runs, a missing file
// waits, a warning is shown.
func (m *model) handleChange(msg changeMsg) tea.Cmd {
	if !msg.ok {
		m.opts.Changes, m.watchWarn = nil, ""
		return nil
	}
	c := msg.change
	switch c.Kind {
	case watch.Changed:
		m.fileMissing, m.watchWarn = false, ""
		m.watched, m.cause = c, c.Cause
		return tea.Batch(m.requestRun(), m.waitChange())
	case watch.Missing:
		m.fileMissing = true
	case watch.Warning:
		text := "watch warning"
		if c.Err != nil {
			text = c.Err.Error()
		}
		m.watchWarn = text
		m.setFlash(text, themes.LevelWarn)
	}
	return m.waitChange()
}

// jobsListedMsg carries a fresh job listing.
type jobsListedMsg struct {
	reports []*job.Report
	err     error
}

// listJobs reads the job store off the event loop.
func (m *model) listJobs() tea.Cmd {
	store := m.opts.Store
	if store == nil {
		return nil
	}
	return func() tea.Msg {
		reports, err := store.List()
		if err != nil {
			err = fmt.Errorf("list jobs: %w", err)
		}
		return jobsListedMsg{reports: reports, err: err}
	}
}

// equityPoints is how many points of a stored equity curve the workbench
// asks for: as many as a run's own curve has (contract.DisplayPoints), so
// that a job's chart reads the same, live or stored.
const equityPoints = contract.DisplayPoints

// jobLoadedMsg carries a stored job's report, log tail and equity curve.
type jobLoadedMsg struct {
	id        string
	report    *job.Report
	logs      logRing
	logsErr   error
	equity    []float64
	equityErr error
	err       error
}

// openJob opens a stored job's full view; the live job just gets focus.
func (m *model) openJob(id string) tea.Cmd {
	m.closeStored()
	if id == m.live.id {
		m.setFocus(paneLogs)
		return nil
	}
	if m.opts.Store == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.cancelLoad = cancel
	m.loading = id
	m.setFlash("loading job "+id+"…", themes.LevelOK)
	store, ringLines := m.opts.Store, m.ringLines
	return func() tea.Msg { return loadJob(ctx, store, id, ringLines) }
}

// loadJob reads a stored job: report, the tail of its log, its equity curve.
func loadJob(ctx context.Context, store JobStore, id string, ringLines int) jobLoadedMsg {
	msg := jobLoadedMsg{id: id, logs: newLogRing(ringLines)}
	msg.report, msg.err = store.Load(id)
	if msg.err != nil {
		msg.err = fmt.Errorf("load job %s: %w", id, msg.err)
		return msg
	}
	msg.logsErr = store.Logs(ctx, id, nil, func(l job.LogLine) error {
		msg.logs.add(l)
		return ctx.Err()
	})
	if msg.logsErr != nil {
		msg.logsErr = fmt.Errorf("read logs of %s: %w", id, msg.logsErr)
	}
	msg.equity, msg.equityErr = store.Equity(id, equityPoints)
	return msg
}

// jobLoaded shows a stored job once it is read.
func (m *model) jobLoaded(msg jobLoadedMsg) {
	if msg.id != m.loading {
		return
	}
	m.closeStored()
	m.setFlash("", themes.LevelOK)
	if msg.err != nil {
		m.setFlash(msg.err.Error(), themes.LevelFail)
		return
	}
	v := newJobView(m.ringLines, m.breaks)
	v.stored = true
	v.logs.ring = msg.logs
	v.setReport(msg.report)
	v.results.setEquity(msg.equity, msg.equityErr)
	if m.opts.Store != nil {
		v.dir = m.opts.Store.JobDir(msg.id)
		v.logs.dir = v.dir
	}
	if msg.logsErr != nil {
		m.setFlash(msg.logsErr.Error(), themes.LevelWarn)
	}
	m.inspected = v
	m.sizeView(v)
	m.slot = paneResults
	m.focus = paneResults
	if v.status == job.StatusFailed {
		m.slot, m.focus = paneFailure, paneFailure
	}
}

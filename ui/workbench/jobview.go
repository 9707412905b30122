package workbench

import (
	"time"

	"stratbench/contract"
	"stratbench/job"
)

// jobView is everything the panes show about one job: the live run, or a
// stored job opened from the jobs list.
type jobView struct {
	id       string
	dir      string
	strategy string
	status   job.Status // "" before any job
	sandbox  bool
	data     contract.DataInfo   // what the job replays, from JobStarted or the report
	market   contract.MarketInfo // its market settings
	params   map[string]any      // the params it got, once the worker is ready
	started  time.Time
	duration time.Duration // of a finished job
	progress job.Progress
	report   *job.Report   // the final report, once there is one
	stored   bool          // opened from the jobs list
	idle     time.Duration // how long the debugger's prompt may wait (Limits.DebugIdle)

	debug *debugPane // the debugger, while the live run is stopped at its prompt (or steps)

	hooks   *hooksPane
	procs   *procsPane
	logs    *logsPane
	failure *failurePane
	results *resultsPane
}

func newJobView(ringLines int, breaks *breakpoints) *jobView {
	return &jobView{
		hooks:   newHooksPane(),
		procs:   newProcsPane(),
		logs:    newLogsPane(ringLines),
		failure: newFailurePane(breaks),
		results: newResultsPane(),
	}
}

// pane returns the view's pane id; the jobs pane is not part of a job view.
func (v *jobView) pane(id paneID) pane {
	switch id {
	case paneHooks:
		return v.hooks
	case paneProcs:
		return v.procs
	case paneLogs:
		return v.logs
	case paneFailure:
		return v.failure
	case paneResults:
		return v.results
	}
	return nil
}

// apply takes one event of the view's job.
func (v *jobView) apply(ev job.Event) {
	switch e := ev.(type) {
	case job.JobStarted:
		v.id, v.dir, v.strategy, v.sandbox, v.started = e.JobID, e.Dir, e.Strategy, e.Sandbox, e.StartedAt
		v.data, v.market = e.Data, e.Market
		v.progress.Total = e.Events
		v.setStatus(job.StatusRunning)
		v.hooks.setLimits(e.Limits)
		v.procs.setLimits(e.Limits)
		v.logs.dir = e.Dir
		v.failure.strategy = e.Strategy
		v.idle = e.Limits.DebugIdle
	case job.WorkerReady:
		v.hooks.declare(e.Hooks)
		v.params = e.Params
	case job.HookStats:
		v.hooks.apply(e)
	case job.ResourceSample:
		v.procs.apply(e)
	case job.LogLines:
		v.logs.appendLines(e)
	case job.Progress:
		v.progress = e
		v.hooks.running = e.Running
	case job.Finished:
		v.hooks.running = nil
		v.debug = nil
		if e.Report != nil {
			v.setReport(e.Report)
		}
		v.results.setEquity(e.Equity, nil)
	}
}

// setReport takes a job's final (or stored) report.
func (v *jobView) setReport(r *job.Report) {
	v.report = r
	v.id = r.JobID
	if v.started.IsZero() {
		v.started = r.StartedAt
	}
	if v.strategy == "" {
		v.strategy = r.Strategy.Path
		v.failure.strategy = r.Strategy.Path
	}
	v.sandbox = r.Python.Sandbox
	v.data, v.market, v.params = r.Data, r.Market, r.Strategy.Params
	v.duration = time.Duration(r.DurationMS) * time.Millisecond
	if v.progress.Total == 0 {
		v.progress.Total = r.Data.Events
	}
	v.setStatus(r.Status)
	limits := limitsOf(r.Limits)
	if v.stored {
		v.hooks.setLimits(limits)
		v.procs.setLimits(limits)
	}
	v.hooks.final(r.Hooks)
	v.procs.final(r.Resources)
	v.logs.final(r.Logs, limits.LogBytes)
	v.failure.failure = r.Failure
	v.results.setReport(r)
}

func (v *jobView) setStatus(s job.Status) {
	v.status = s
	v.failure.status = s
	v.results.status = s
}

// limitsOf converts a report's limits back to job.Limits; a report whose
// limits are missing gets the defaults.
func limitsOf(l job.LimitsReport) job.Limits {
	if l == (job.LimitsReport{}) {
		return job.DefaultLimits()
	}
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	return job.Limits{
		Startup:      sec(l.StartupS),
		OnData:       sec(l.OnDataS),
		OnExecution:  sec(l.OnExecutionS),
		OnFinish:     sec(l.OnFinishS),
		MemoryBytes:  l.MemoryBytes,
		Processes:    l.Processes,
		MessageBytes: l.MessageBytes,
		LogBytes:     l.LogBytes,
	}
}

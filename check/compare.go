package check

import (
	"fmt"
	"slices"
	"strings"

	"stratbench/contract"
	"stratbench/engine"
	"stratbench/job"
)

// command is one order or cancel a hook issued, as the orders record has
// it: exact (the same run again must issue it so), and as a decision (what
// is decided, whatever the quantity and the order ids: the warm-up check's
// comparison of runs whose cash differs).
type command struct {
	hook     string
	exact    string
	decision string
}

// commandsByEvent are a run's commands at each event, on_finish's left out
// (it runs once, at the end, wherever the data ends).
func commandsByEvent(records []job.OrderRecord) map[int][]command {
	out := map[int][]command{}
	for _, o := range records {
		if o.Hook == string(contract.HookOnFinish) {
			continue
		}
		var cmd command
		switch o.Record {
		case "order":
			lim := ""
			if o.Limit != "" {
				lim = " limit " + o.Limit
			}
			cmd = command{hook: o.Hook, exact: fmt.Sprintf("%s: %s %s %s%s (order %d)", o.Hook, o.Side, o.Symbol, o.Qty, lim, o.OrderID),
				decision: fmt.Sprintf("%s: %s %s%s", o.Hook, o.Side, o.Symbol, lim)}
		case "cancel":
			cmd = command{hook: o.Hook, exact: fmt.Sprintf("%s: cancel order %d", o.Hook, o.OrderID), decision: o.Hook + ": cancel"}
		default:
			continue
		}
		out[o.Event] = append(out[o.Event], cmd)
	}
	return out
}

func exacts(cs []command) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.exact
	}
	return out
}

func decisions(cs []command) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.decision
	}
	slices.Sort(out)
	return out
}

// differingHook is the hook of the first command that differs between a
// and b (as text gives them: each text starts with its hook), "" if none
// does.
func differingHook(a, b []command, text func([]command) []string) string {
	ta, tb := text(a), text(b)
	for i := range max(len(ta), len(tb)) {
		var t string
		switch {
		case i >= len(ta):
			t = tb[i]
		case i >= len(tb) || ta[i] != tb[i]:
			t = ta[i]
		default:
			continue
		}
		hook, _, _ := strings.Cut(t, ":")
		return hook
	}
	return ""
}

// firstDifference is the first event in [0, last] whose exact commands
// differ between a and b (whose events are numbered alike), or -1.
func firstDifference(a, b map[int][]command, last int) int {
	first := -1
	for _, m := range []map[int][]command{a, b} {
		for e := range m {
			if e <= last && (first < 0 || e < first) && !slices.Equal(exacts(a[e]), exacts(b[e])) {
				first = e
			}
		}
	}
	return first
}

// orEmpty says that there was no command.
func orEmpty(s []string) []string {
	if len(s) == 0 {
		return []string{"(none)"}
	}
	return s
}

// failureText says where and how a run failed.
func failureText(f *contract.Failure) string {
	at := string(f.Hook)
	if f.EventIndex != nil {
		at = fmt.Sprintf("%s at event %d", at, *f.EventIndex)
	}
	return fmt.Sprintf("%s in %s: %s", f.Kind, at, firstLine(f.Message))
}

// determinism compares the first run with the same run from a warm
// template.
func (c *checker) determinism(first, second ran, stats engine.PoolStats) Result {
	res := Result{Check: Determinism}
	if stats.LastColdReason != "" && stats.Warm == 0 {
		res.Notes = append(res.Notes, "the second run started cold too: "+stats.LastColdReason)
	}
	a, b := commandsByEvent(first.records), commandsByEvent(second.records)
	switch {
	case second.failure != nil:
		e := len(c.times) - 1
		if second.failure.EventIndex != nil {
			e = *second.failure.EventIndex
		}
		res.Status, res.Summary = Found, "the same run failed the second time: "+failureText(second.failure)
		res.Finding = c.finding(e, string(second.failure.Hook), exacts(a[e]), nil, "the same run from a warm template")
		res.Finding.Failure = failureText(second.failure)
		return res
	case first.ordersHash == second.ordersHash:
		res.Status = Clean
		res.Summary = fmt.Sprintf("the same run twice (cold, and from a warm template) gives the same orders hash %.12s…", first.ordersHash)
		return res
	}
	res.Status = Found
	e := firstDifference(a, b, len(c.times)-1)
	res.Summary = "the same run twice (cold, and from a warm template) gives different orders: unseeded randomness, " +
		"the wall clock, or state kept across runs (a file the strategy writes and reads back)"
	if e < 0 {
		res.Summary += "; its commands are the same, its executions are not"
		return res
	}
	res.Finding = c.finding(e, differingHook(a[e], b[e], exacts), exacts(a[e]), exacts(b[e]), "the same run from a warm template")
	return res
}

// finding describes event e.
func (c *checker) finding(e int, hook string, run, replay []string, against string) *Finding {
	return &Finding{Event: e, Time: c.eventTime(e), Symbol: c.eventSymbol(e), Hook: hook, Run: orEmpty(run), Replay: orEmpty(replay), Against: against}
}

// cutEvents chooses the events the look-ahead replays are cut after: up to
// MaxCutEvents where the first run placed or cancelled an order, spread
// evenly over them, and as many where it did not, spread evenly over the
// run; the last event of their time, so that a cut keeps a whole time.
func (c *checker) cutEvents(first ran) []int {
	cmds := commandsByEvent(first.records)
	var ordered []int
	for e := range cmds {
		if e < len(c.times) {
			ordered = append(ordered, e)
		}
	}
	slices.Sort(ordered)
	var out []int
	add := func(e int) {
		e = c.lastAt(e)
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	k := min(MaxCutEvents, len(ordered))
	for i := range k {
		add(ordered[(2*i+1)*len(ordered)/(2*k)])
	}
	n := len(c.times)
	for i := range k {
		p := (2*i + 1) * n / (2 * k)
		for d := 0; d < n; d++ { // the nearest event without a command
			if q := p + d; q < n && len(cmds[c.lastAt(q)]) == 0 && len(cmds[q]) == 0 {
				add(q)
				break
			}
			if q := p - d; q >= 0 && len(cmds[c.lastAt(q)]) == 0 && len(cmds[q]) == 0 {
				add(q)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// lookAhead compares each cut replay with the first run, up to its cut.
func (c *checker) lookAhead(first ran, cuts []int, replays []ran) Result {
	res := Result{Check: LookAhead}
	full := commandsByEvent(first.records)
	var best *Finding
	differ := 0
	for i, e := range cuts {
		r := replays[i]
		against := fmt.Sprintf("a replay whose data ends at event %d (%s)", e, c.eventTime(e))
		var f *Finding
		if r.failure != nil {
			at := e
			if r.failure.EventIndex != nil && *r.failure.EventIndex <= e {
				at = *r.failure.EventIndex
			}
			f = c.finding(at, string(r.failure.Hook), exacts(full[at]), nil, against)
			f.Failure = failureText(r.failure)
		} else {
			cut := commandsByEvent(r.records)
			if d := firstDifference(full, cut, e); d >= 0 {
				f = c.finding(d, differingHook(full[d], cut[d], exacts), exacts(full[d]), exacts(cut[d]), against)
			}
		}
		if f != nil {
			differ++
			if best == nil || f.Event < best.Event {
				best = f
			}
		}
	}
	ordered := 0
	for _, e := range cuts {
		for q := c.firstAt(e); q <= e; q++ {
			if len(full[q]) > 0 {
				ordered++
				break
			}
		}
	}
	if best == nil {
		res.Status = Clean
		res.Summary = fmt.Sprintf("%s cut after an event (%d where it placed or cancelled an order, %d where it did not) did what the full run did up to its cut",
			plural(len(cuts), "replay", "replays"), ordered, len(cuts)-ordered)
		return res
	}
	res.Status, res.Finding = Found, best
	res.Summary = fmt.Sprintf("%d of %s cut after an event did otherwise than the full run before its cut: a decision used data from after its time "+
		"(a strategy that reads a data file itself, or computes on the whole file at import)", differ, plural(len(cuts), "replay", "replays"))
	return res
}

// laterStarts are the first events of the warm-up replays: the first event
// of the time at a quarter, a half and three quarters of the run.
func (c *checker) laterStarts() []int {
	var out []int
	for i := 1; i <= LaterStarts; i++ {
		s := c.firstAt(i * len(c.times) / (LaterStarts + 1))
		if s > 0 && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// book follows what a run holds before each event's hooks: the sign of
// its position by symbol (from its filled executions, which happen before
// their event's on_data) and its working orders (placed at an earlier
// event, not yet filled or rejected, nor cancelled by an earlier event's
// hook), by side, symbol and the
// event they were placed at. Two runs decide alike only from the same
// book: a strategy that is long does not decide as one that is flat, nor
// one whose order has waited five bars as one whose order was just placed.
type book struct {
	fills []job.OrderRecord
	next  int
	sign  map[string]int
	// orders are the run's orders by the event they were placed at, with
	// the event of their execution (-1 while none).
	orders  []working
	placed  int // orders[:placed] have been placed
	pending []working
}

// working is an order of a run: its side, symbol and event (what), the
// event it was placed at and the event of its execution (-1 while none).
type working struct {
	what         string
	placed, done int
}

func newBook(records []job.OrderRecord) *book {
	p := &book{sign: map[string]int{}}
	at := map[int64]int{}        // order id -> index in orders
	cancelled := map[int64]int{} // order id -> the event of its cancel
	for _, o := range records {
		switch {
		case o.Record == "execution":
			if o.Status == "filled" {
				p.fills = append(p.fills, o)
			}
			if i, ok := at[o.OrderID]; ok && p.orders[i].done < 0 {
				p.orders[i].done = o.Event
				if c, ok := cancelled[o.OrderID]; ok && c == o.Event {
					// Cancelled by a hook of this event: after it.
					p.orders[i].done = o.Event + 1
				}
			}
		case o.Record == "cancel":
			cancelled[o.OrderID] = o.Event
		case o.Record == "order":
			at[o.OrderID] = len(p.orders)
			p.orders = append(p.orders, working{what: fmt.Sprintf("%s %s %d", o.Side, o.Symbol, o.Event), placed: o.Event, done: -1})
		}
	}
	slices.SortStableFunc(p.orders, func(a, b working) int { return a.placed - b.placed })
	return p
}

// at moves to event e (increasing) and returns the position signs and the
// working orders (sorted), as they are before e's hooks.
func (p *book) at(e int) (map[string]int, []string) {
	for p.next < len(p.fills) && p.fills[p.next].Event <= e {
		f := p.fills[p.next]
		s := 0
		switch {
		case f.Position > 0:
			s = 1
		case f.Position < 0:
			s = -1
		}
		p.sign[f.Symbol] = s
		p.next++
	}
	for p.placed < len(p.orders) && p.orders[p.placed].placed < e {
		p.pending = append(p.pending, p.orders[p.placed])
		p.placed++
	}
	p.pending = slices.DeleteFunc(p.pending, func(w working) bool { return w.done >= 0 && w.done <= e })
	open := make([]string, len(p.pending))
	for i, w := range p.pending {
		open[i] = w.what
	}
	slices.Sort(open)
	return p.sign, open
}

func sameSigns(a, b map[string]int) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// startResult is one warm-up replay's comparison.
type startResult struct {
	start   int
	last    int // the last event (the first run's numbering) whose decisions differ, -1 if none
	bars    int // the bars of that event's symbol the replay had seen by then
	never   bool
	compare int // events compared
	failure *contract.Failure
	run     []string
	replay  []string
	hook    string
}

// warmUp compares each later start's replay with the first run.
func (c *checker) warmUp(first ran, starts []int, replays []ran) Result {
	res := Result{Check: WarmUp}
	full := commandsByEvent(first.records)
	var worst *startResult
	for i, s := range starts {
		sr := c.compareFrom(first, full, s, replays[i])
		bad := sr.failure != nil || sr.never || sr.last >= 0 && sr.bars > first.history
		if bad && (worst == nil || sr.failure == nil && worst.failure == nil && (sr.never && !worst.never || sr.never == worst.never && sr.bars > worst.bars)) {
			worst = &sr
		}
	}
	if worst == nil {
		res.Status = Clean
		res.Summary = fmt.Sprintf("replays from %s agree with the full run once they have had the MANIFEST's history of %s",
			plural(len(starts), "later start", "later starts"), plural(first.history, "bar", "bars"))
		return res
	}
	res.Status = Found
	against := fmt.Sprintf("a replay from event %d (%s)", worst.start, c.eventTime(worst.start))
	switch {
	case worst.failure != nil:
		e := worst.start
		if worst.failure.EventIndex != nil {
			e = worst.start + *worst.failure.EventIndex
		}
		res.Summary = "a replay from a later start failed: " + failureText(worst.failure)
		res.Finding = c.finding(e, string(worst.failure.Hook), decisions(full[e]), nil, against)
		res.Finding.Failure = failureText(worst.failure)
		return res
	case worst.never:
		res.Summary = fmt.Sprintf("%s never comes to decide as the full run does: its decisions differ up to its last one compared "+
			"(event %d, %s of %s after its start): path dependence, decisions that depend on where the data starts",
			against, worst.last, plural(worst.bars, "bar", "bars"), c.eventSymbol(worst.last))
	default:
		res.Summary = fmt.Sprintf("%s agrees with the full run only after event %d, %s of %s after its start, more than the MANIFEST's history of %s: "+
			"the strategy keeps state beyond its history window", against, worst.last, plural(worst.bars, "bar", "bars"), c.eventSymbol(worst.last),
			plural(first.history, "bar", "bars"))
	}
	res.Finding = c.finding(worst.last, worst.hook, worst.run, worst.replay, against)
	return res
}

// compareFrom compares the decisions of the replay from event s with the
// first run's, at the events where both hold positions of the same signs
// and the same working orders.
func (c *checker) compareFrom(first ran, full map[int][]command, s int, r ran) startResult {
	sr := startResult{start: s, last: -1}
	if r.failure != nil {
		sr.failure = r.failure
		return sr
	}
	rep := map[int][]command{}
	for e, cs := range commandsByEvent(r.records) {
		rep[e+s] = cs
	}
	// Replay events are numbered from its start: shift its records too.
	shifted := make([]job.OrderRecord, len(r.records))
	for i, o := range r.records {
		o.Event += s
		shifted[i] = o
	}
	pf, pr := newBook(first.records), newBook(shifted)
	bars := map[int32]int{}
	agreeAfter := false
	for e := s; e < len(c.times); e++ {
		bars[c.syms[e]]++
		a, oa := pf.at(e)
		b, ob := pr.at(e)
		if len(full[e]) == 0 && len(rep[e]) == 0 {
			continue
		}
		if !sameSigns(a, b) || !slices.Equal(oa, ob) {
			continue
		}
		sr.compare++
		da, db := decisions(full[e]), decisions(rep[e])
		if slices.Equal(da, db) {
			agreeAfter = true
			continue
		}
		sr.last, sr.bars, agreeAfter = e, bars[c.syms[e]], false
		sr.run, sr.replay = orEmpty(da), orEmpty(db)
		sr.hook = differingHook(full[e], rep[e], decisions)
	}
	sr.never = sr.last >= 0 && !agreeAfter
	return sr
}

package engine

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"stratbench/contract"
	"stratbench/job"
	"stratbench/sandbox"
)

// on_bars runs under on_data's limit, per call, enforced by the host in and
// out of the sandbox: a call that never returns is a timeout in on_bars
// naming its timestamp's first event.
func TestOnBarsTimesOut(t *testing.T) {
	for _, sandboxed := range []bool{false, true} {
		name := "plain"
		if sandboxed {
			name = "sandbox"
			if err := sandbox.Check(); err != nil {
				t.Log(err)
				continue
			}
		}
		t.Run(name, func(t *testing.T) {
			// Three symbols: the third timestamp is events 6 to 8.
			r := runStrategyWith(t, "bars_loop.py", shortLimits(), newReplay(30, 3), func(c *Config) { c.Sandbox = sandboxed })
			f := assertFailure(t, r, contract.KindTimeout, contract.HookOnBars)
			if f.EventIndex == nil || *f.EventIndex != 6 || f.EventTime == nil || *f.EventTime != "2026-09-30T12:02:00Z" {
				t.Fatalf("failure event %v %v, want 6 at 12:02", f.EventIndex, f.EventTime)
			}
			if !strings.Contains(f.Message, "on_bars did not return within the 1s limit") {
				t.Fatalf("message %q", f.Message)
			}
			if el := hookKilledAfter(t, r, "looping forever"); el < time.Second {
				t.Fatalf("on_bars killed %s after it started, before its 1 s limit", el)
			}
			// The two calls that returned count, one per timestamp.
			if s := r.report.Hooks[contract.HookOnBars]; s.Count != 2 || s.Failures != 1 {
				t.Fatalf("on_bars stats %+v", s)
			}
			if s := r.report.Hooks[contract.HookOnData]; s.Count != 0 {
				t.Fatalf("on_data stats %+v for a strategy with on_bars", s)
			}
		})
	}
}

// The limit is per call: calls of 0.5 s, three seconds in all, pass under a
// limit of 2 s.
func TestOnBarsLimitIsPerCall(t *testing.T) {
	l := shortLimits()
	l.OnData = 2 * time.Second
	r := runStrategy(t, "bars_slow.py", l, newReplay(12, 2), nil)
	if r.report.Status != job.StatusPassed {
		t.Fatalf("status %s, failure %+v", r.report.Status, r.report.Failure)
	}
	var meta struct{ Calls int }
	if err := json.Unmarshal(r.report.Metadata, &meta); err != nil || meta.Calls != 6 {
		t.Fatalf("metadata %s (%v), want 6 calls", r.report.Metadata, err)
	}
	s := r.report.Hooks[contract.HookOnBars]
	if s.Count != 6 || s.TotalMS < 3000 || s.MaxMS >= 2000 {
		t.Fatalf("on_bars stats %+v: want 6 calls of 0.5 s", s)
	}
}

// Defining on_data and on_bars is an exception at startup naming both.
func TestBothBarHooksFailAtStartup(t *testing.T) {
	r := runStrategy(t, "both_hooks.py", shortLimits(), newReplay(10, 1), nil)
	f := assertFailure(t, r, contract.KindException, contract.HookStartup)
	if !strings.Contains(f.Message, "both on_data and on_bars") || !strings.Contains(f.Traceback, "both_hooks.py defines both") {
		t.Fatalf("failure %q, traceback %q: want both hooks named", f.Message, f.Traceback)
	}
}

package words

import (
	"testing"
	"time"

	"stratbench/contract"
	"stratbench/job"
)

func TestETA(t *testing.T) {
	for _, tc := range []struct {
		p    job.Progress
		want string
	}{
		{job.Progress{Done: 1, Total: 20160, BarsPerSec: 1, ETA: 20159 * time.Second}, ""},       // after the first bar
		{job.Progress{Done: 99, Total: 20160, BarsPerSec: 50, ETA: 400 * time.Second}, ""},       // fewer than 100 bars
		{job.Progress{Done: 500, Total: 20160, BarsPerSec: 1000, ETA: 20 * time.Second}, ""},     // half a second in
		{job.Progress{Done: 500, Total: 20160, BarsPerSec: 100, ETA: 197 * time.Second}, "3:17"}, // five seconds in
		{job.Progress{Done: 3, Total: 100, BarsPerSec: 1, ETA: 97 * time.Second}, "1:37"},        // a short run: 2 %
	} {
		if got := ETA(tc.p); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.p, got, tc.want)
		}
	}
}

func TestWhereSaysDetectedForSampledLimits(t *testing.T) {
	for _, tc := range []struct {
		kind contract.FailureKind
		want string
	}{
		{contract.KindProcesses, "processes limit detected during on_data"},
		{contract.KindMemory, "memory limit detected during on_data"},
		{contract.KindException, "exception in on_data"},
	} {
		if got := Where(&contract.Failure{Kind: tc.kind, Hook: contract.HookOnData}); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.kind, got, tc.want)
		}
	}
}

func TestSummaryOfASyntaxError(t *testing.T) {
	f := &contract.Failure{Message: "File \"/s/strategy.py\", line 3\n    def on_data(ctx, history)\n                             ^\nSyntaxError: expected ':'",
		Traceback: "  File \"/s/strategy.py\", line 3\n    def on_data(ctx, history)\n                             ^\nSyntaxError: expected ':'\n"}
	if got := Summary(f); got != "SyntaxError: expected ':'" {
		t.Errorf("summary %q", got)
	}
	if !MessageInTraceback(f) {
		t.Error("the message is in the traceback")
	}
	if got := Summary(&contract.Failure{Message: "ZeroDivisionError: division by zero"}); got != "ZeroDivisionError: division by zero" {
		t.Errorf("summary %q", got)
	}
}

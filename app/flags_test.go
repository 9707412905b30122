package app

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stratbench/backtest"
	"stratbench/data"
	"stratbench/internal/shortid"
	"stratbench/job"
	"stratbench/sweep"
)

// TestLibraryRefusalsNameTheFlag: the libraries' refusals carry the field
// at fault and no flag; the command line names the flag, and a resume the
// sweep document's field the value came from.
func TestLibraryRefusalsNameTheFlag(t *testing.T) {
	set, err := data.Sample(data.Window{})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	_, cash := backtest.NewDriver(set, backtest.Options{Cash: 0})
	_, fee := backtest.NewDriver(set, backtest.Options{Cash: 1, FeeBps: -1})
	_, reversed := data.ParseWindow("2026-01-02", "2026-01-01")
	_, badFrom := data.ParseWindow("soon", "")
	for _, tc := range []struct {
		err              error
		command, resumed string
	}{
		{cash, "--cash must be a finite number > 0, got 0", "run_flags.cash must be a finite number > 0, got 0"},
		{fee, "--fee-bps must be a finite number >= 0, got -1", "run_flags.fee_bps must be a finite number >= 0, got -1"},
		{reversed, "--to 2026-01-01 is before --from 2026-01-02", "run_flags.to 2026-01-01 is before run_flags.from 2026-01-02"},
		{badFrom, `--from: parse time "soon"`, `run_flags.from: parse time "soon"`},
	} {
		if tc.err == nil || strings.Contains(tc.err.Error(), "--") {
			t.Fatalf("the library's error %v names a flag (or there is none)", tc.err)
		}
		for _, c := range []struct {
			names runFlagNames
			want  string
		}{{commandFlags, tc.command}, {recordedFlags, tc.resumed}} {
			got := c.names.input(tc.err)
			if code, _ := ExitCode(got); code != ExitUsage || !strings.HasPrefix(got.Error(), c.want) {
				t.Errorf("%v: exit %d %q, want 2 with %q", tc.err, code, got, c.want)
			}
		}
	}
	// A resume names the document whose field it is.
	got := withRunFlags("sw-1", "/home/sweeps/sw-1/sweep.json", recordedFlags.input(cash))
	if want := "--resume sw-1: /home/sweeps/sw-1/sweep.json: run_flags.cash must be"; !strings.HasPrefix(got.Error(), want) {
		t.Errorf("resume: %q, want %q…", got, want)
	}

	// A sweep's refusals: the flag, or a restored spec's document field.
	_, grid := sweep.ParseSpec(sweep.Flags{Grid: []string{"fast"}}, nil)
	_, metric := sweep.RestoreSpec(sweep.SpecDoc{Metric: "nonsense"}, nil)
	jobs := sweep.CheckJobs(-1)
	for _, tc := range []struct {
		err  error
		want string
	}{
		{asSweepExit(grid), "--grid fast: want NAME=V1,V2,... or NAME=LO:HI:STEP"},
		{asSweepExit(metric), "spec.metric nonsense: not a metric of the job report"},
		{usage(sweepNamed(jobs, false)), "--jobs -1: want the number of concurrent runs"},
		{usage(sweepNamed(jobs, true)), "spec.jobs -1: want the number of concurrent runs"},
		{asSweepExit(inDocument("sw-1", "/s.json", metric)), "--resume sw-1: /s.json: spec.metric nonsense:"},
	} {
		var ue *sweep.UsageError
		if code, _ := ExitCode(tc.err); code != ExitUsage || !strings.HasPrefix(tc.err.Error(), tc.want) || !errors.As(tc.err, &ue) {
			t.Errorf("exit %d %q, want 2 with %q", code, tc.err, tc.want)
		}
	}
}

// TestShortIDRefusalsAreUsage: an id that fits no job or sweep, or
// several, is bad input: exit 2, marked so (an unmarked error would be a
// failure, exit 1, once asExit or asSweepExit has seen it).
func TestShortIDRefusalsAreUsage(t *testing.T) {
	home := t.TempDir()
	t.Setenv("STRATBENCH_HOME", home)
	jobs, err := job.OpenStore(home)
	if err != nil {
		t.Fatal(err)
	}
	sweeps, err := sweep.OpenStore(home)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"20261201-120000.000-a1b2", "20261201-120000.000-a1b3"} {
		if err := os.MkdirAll(filepath.Join(home, "jobs", id), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, err := range []error{
		func() error { _, err := resolved(shortid.InJobs(jobs, "cafe")); return err }(),
		func() error { _, err := resolved(shortid.InSweeps(sweeps, "latest")); return err }(),
		func() error { _, err := resolved(shortid.InJobs(jobs, "2026")); return err }(),
		func() error { _, _, _, _, err := statusTarget("sw-latest", io.Discard); return err }(),
	} {
		if ee := (*ExitError)(nil); !errors.As(err, &ee) || ee.Code != ExitUsage {
			t.Errorf("%v: not marked exit %d", err, ExitUsage)
		}
	}
}

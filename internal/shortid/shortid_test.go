package shortid

import (
	"errors"
	"strings"
	"testing"

	"stratbench/job"
	"stratbench/sweep"
)

func TestJob(t *testing.T) {
	ids := []string{ // newest first, as the store lists them
		"20261201-130000.000-beef",
		"20261201-120500.000-a1b2",
		"20261201-120000.000-a1b3",
		"20261130-090000.000-0001",
	}
	for _, tc := range []struct{ typed, want, err string }{
		{"20261201-120500.000-a1b2", "20261201-120500.000-a1b2", ""},
		{"latest", "20261201-130000.000-beef", ""},
		{"20261130", "20261130-090000.000-0001", ""},
		{"20261201-13", "20261201-130000.000-beef", ""},
		{"a1b2", "20261201-120500.000-a1b2", ""},
		{"beef", "20261201-130000.000-beef", ""},
		{"20261201-12", "", "ambiguous: it fits 2 jobs:\n  20261201-120500.000-a1b2\n  20261201-120000.000-a1b3"},
		{"a1b", "", "unknown job \"a1b\""},
		{"cafe", "", "stratbench jobs lists them"},
	} {
		got, err := Job(ids, tc.typed)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%q: %q, %v; want %q", tc.typed, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: %q, %v; want an error containing %q", tc.typed, got, err, tc.err)
		}
	}
	if _, err := Job(nil, "latest"); !errors.Is(err, job.ErrUnknownJob) {
		t.Errorf("latest without jobs: %v", err)
	}
}

// TestSweep: a sweep id is shortened like a job id, with or
// without its "sw-".
func TestSweep(t *testing.T) {
	ids := []string{ // newest first, as the store lists them
		"sw-20261201-130000.000-beef",
		"sw-20261201-120500.000-a1b2",
		"sw-20261201-120000.000-a1b3",
		"sw-20261130-090000.000-0001",
	}
	for _, tc := range []struct{ typed, want, err string }{
		{"sw-20261201-120500.000-a1b2", "sw-20261201-120500.000-a1b2", ""},
		{"20261201-120500.000-a1b2", "sw-20261201-120500.000-a1b2", ""},
		{"latest", "sw-20261201-130000.000-beef", ""},
		{"sw-latest", "sw-20261201-130000.000-beef", ""},
		{"sw-20261130", "sw-20261130-090000.000-0001", ""},
		{"20261130", "sw-20261130-090000.000-0001", ""},
		{"20261201-13", "sw-20261201-130000.000-beef", ""},
		{"a1b2", "sw-20261201-120500.000-a1b2", ""},
		{"sw-a1b2", "sw-20261201-120500.000-a1b2", ""},
		{"beef", "sw-20261201-130000.000-beef", ""},
		{"20261201-12", "", "sweep id \"20261201-12\" is ambiguous: it fits 2 sweeps:\n  sw-20261201-120500.000-a1b2\n  sw-20261201-120000.000-a1b3"},
		{"a1b", "", "unknown sweep \"a1b\""},
		{"sw-", "", "unknown sweep \"sw-\""},
		{"cafe", "", "stratbench sweeps lists them"},
	} {
		got, err := Sweep(ids, tc.typed)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%q: %q, %v; want %q", tc.typed, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: %q, %v; want an error containing %q", tc.typed, got, err, tc.err)
		}
	}
	if _, err := Sweep(nil, "latest"); !errors.Is(err, sweep.ErrUnknownSweep) {
		t.Errorf("latest without sweeps: %v", err)
	}
}

// TestStatus: `status X` takes "sw-…" for a sweep, a whole job id
// and "latest" for a job, and looks any other short form up among both,
// refusing one that fits a job and a sweep.
func TestStatus(t *testing.T) {
	jobs := []string{"20261201-130000.100-beef", "20261201-120000.000-a1b3", "20261130-090000.000-0001"}
	sweeps := []string{"sw-20261201-130000.000-558f", "sw-20261130-080000.000-beef"}
	for _, tc := range []struct {
		typed, want string
		isSweep     bool
		err         string
	}{
		{"20261201-130000.100-beef", "20261201-130000.100-beef", false, ""},
		{"latest", "20261201-130000.100-beef", false, ""},
		{"sw-latest", "sw-20261201-130000.000-558f", true, ""},
		{"sw-20261130-080000.000-beef", "sw-20261130-080000.000-beef", true, ""},
		{"sw-beef", "sw-20261130-080000.000-beef", true, ""},
		{"558f", "sw-20261201-130000.000-558f", true, ""},
		{"a1b3", "20261201-120000.000-a1b3", false, ""},
		{"20261201-12", "20261201-120000.000-a1b3", false, ""},
		{"20261201-130000.0", "sw-20261201-130000.000-558f", true, ""},
		{"beef", "", false, "id \"beef\" is ambiguous: it fits 1 job and 1 sweep (start it with sw- for a sweep):\n  20261201-130000.100-beef\n  sw-20261130-080000.000-beef"},
		{"20261201-13", "", false, "fits 1 job and 1 sweep"},
		{"2026113", "", false, "fits 1 job and 1 sweep"},
		{"2026", "", false, "fits 3 jobs and 2 sweeps"},
		{"sw-cafe", "", false, "unknown sweep \"sw-cafe\""},
		{"cafe", "", false, "unknown job or sweep \"cafe\""},
	} {
		got, isSweep, err := Status(jobs, sweeps, tc.typed)
		switch {
		case tc.err == "" && (err != nil || got != tc.want || isSweep != tc.isSweep):
			t.Errorf("%q: %q sweep=%v, %v; want %q sweep=%v", tc.typed, got, isSweep, err, tc.want, tc.isSweep)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: %q, %v; want an error containing %q", tc.typed, got, err, tc.err)
		}
	}
}

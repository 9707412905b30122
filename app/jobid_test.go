package app

import (
	"errors"
	"strings"
	"testing"

	"stratbench/engine"
)

func TestResolveJobID(t *testing.T) {
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
		got, err := resolveJobID(ids, tc.typed)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%q: %q, %v; want %q", tc.typed, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: %q, %v; want an error containing %q", tc.typed, got, err, tc.err)
		case tc.err != "":
			if code, _ := ExitCode(err); code != ExitUsage {
				t.Errorf("%q: exit code %d, want %d", tc.typed, code, ExitUsage)
			}
		}
	}
	if _, err := resolveJobID(nil, "latest"); !errors.Is(err, engine.ErrUnknownJob) {
		t.Errorf("latest without jobs: %v", err)
	}
}

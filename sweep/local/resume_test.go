package local

import (
	"errors"
	"testing"

	"stratbench/engine"
	"stratbench/job"
	"stratbench/sweep"
)

// TestRanPython: the version recorded when the sweep started wins; a
// document without one takes the first kept run whose report says, and
// skips runs without a job or whose report cannot be read.
func TestRanPython(t *testing.T) {
	reports := map[string]*job.Report{"b": {}, "c": {}}
	reports["b"].Python.Version = "3.12.1"
	reports["c"].Python.Version = "3.13.0"
	load := func(id string) (*job.Report, error) {
		if r, ok := reports[id]; ok {
			return r, nil
		}
		return nil, errors.New("gone")
	}
	runs := []sweep.Result{{}, {JobID: "a"}, {JobID: "b"}, {JobID: "c"}}
	for _, tc := range []struct {
		doc          *sweep.Document
		version, how string
	}{
		{&sweep.Document{RunFlags: &sweep.RunFlags{PythonVersion: "3.11.9"}, Runs: runs}, "3.11.9", "when the sweep started"},
		{&sweep.Document{RunFlags: &sweep.RunFlags{}, Runs: runs}, "3.12.1", "as job b reported"},
		{&sweep.Document{RunFlags: &sweep.RunFlags{}, Runs: runs[:2]}, "", ""},
	} {
		if v, how := RanPython(tc.doc, load); v != tc.version || how != tc.how {
			t.Errorf("RanPython = %q, %q; want %q, %q", v, how, tc.version, tc.how)
		}
	}
}

// TestCheckPython: a resume whose interpreter is another version than the
// runs ran is refused, typed; the same version, none recorded, or no
// interpreter probed passes.
func TestCheckPython(t *testing.T) {
	doc := &sweep.Document{RunFlags: &sweep.RunFlags{PythonVersion: "3.11.9"}}
	none := func(string) (*job.Report, error) { return nil, errors.New("gone") }
	var pe *PythonChangedError
	if err := CheckPython(doc, &engine.Interpreter{Version: "3.12.1", Executable: "/usr/bin/python3"}, none); !errors.As(err, &pe) ||
		pe.Ran != "3.11.9" || pe.How != "when the sweep started" {
		t.Errorf("another version: %v", err)
	}
	for _, py := range []*engine.Interpreter{nil, {Version: "3.11.9"}} {
		if err := CheckPython(doc, py, none); err != nil {
			t.Errorf("%+v: %v", py, err)
		}
	}
	if err := CheckPython(&sweep.Document{RunFlags: &sweep.RunFlags{}}, &engine.Interpreter{Version: "3.12.1"}, none); err != nil {
		t.Errorf("nothing recorded: %v", err)
	}
}

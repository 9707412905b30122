package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"stratbench/engine"
)

// TestManifestReadAhead: the MANIFEST read started ahead of the probe
// answers only for the content and interpreter it read: a strategy saved
// since (another hash), another interpreter (the probe named one other
// than the path), a read that failed or saw the file change under it (no
// hash) each make the sweep read the MANIFEST again, now.
func TestManifestReadAhead(t *testing.T) {
	py, err := engine.FindPython(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "strategy.py")
	if err := os.WriteFile(path, []byte(`MANIFEST = {"params": {"now": 1}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, sum, err := ReadStrategy(path)
	if err != nil {
		t.Fatal(err)
	}
	ahead := map[string]any{"ahead": int64(1)}
	now := map[string]any{"now": int64(1)}
	for _, tc := range []struct {
		name string
		path string // the interpreter the read ahead ran
		m    manifestAhead
		want map[string]any
	}{
		{"same content and interpreter", py.Executable, manifestAhead{sum: sum, params: ahead}, ahead},
		{"saved since", py.Executable, manifestAhead{sum: "another", params: ahead}, now},
		{"changed under the read", py.Executable, manifestAhead{sum: "", params: ahead}, now},
		{"another interpreter", "/usr/bin/launcher", manifestAhead{sum: sum, params: ahead}, now},
		{"failed", py.Executable, manifestAhead{sum: sum, err: errors.New("timeout")}, now},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			m.done = make(chan struct{})
			close(m.done)
			a := &Ahead{path: tc.path, manifest: &m}
			got, err := a.Params(context.Background(), py, path, sum)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("params %#v, want %#v", got, tc.want)
			}
		})
	}
}

// TestReadManifestParams reads MANIFESTs with the real interpreter, without
// running the strategy: typed params, none, and what it refuses.
func TestReadManifestParams(t *testing.T) {
	py, err := engine.FindPython(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, source string
		want         map[string]any
		refused      string // part of the *InputError's message
	}{
		{"typed", `MANIFEST = {"params": {"fast": 10, "stop": 0.5, "big": 10.0, "trend": True, "mode": "x"}}` + "\n",
			map[string]any{"fast": int64(10), "stop": 0.5, "big": 10.0, "trend": true, "mode": "x"}, ""},
		{"none", "def on_data(ctx, history):\n    pass\n", map[string]any{}, ""},
		{"no params", `MANIFEST = {"name": "x"}` + "\n", map[string]any{}, ""},
		{"annotated, last wins", "MANIFEST: dict = {\"params\": {\"a\": 1}}\nMANIFEST = {\"params\": {\"b\": 2}}\n", map[string]any{"b": int64(2)}, ""},
		{"runs nothing", "import os\nos.makedirs('SHOULD-NOT-EXIST')\nMANIFEST = {\"params\": {\"a\": 1}}\n", map[string]any{"a": int64(1)}, ""},
		{"not a literal", "P = {'a': 1}\nMANIFEST = {'params': P}\n", nil, "line 2: MANIFEST is not a literal dict"},
		{"syntax error", "MANIFEST = {\n", nil, "SyntaxError"},
		{"nested default", `MANIFEST = {"params": {"a": [1, 2]}}` + "\n", nil, "must be an int, float, bool or str"},
		{"too big", `MANIFEST = {"params": {"a": 10**30}}` + "\n", nil, "not a literal"},
		{"int beyond 64 bits", `MANIFEST = {"params": {"a": 100000000000000000000}}` + "\n", nil, "does not fit in a 64-bit integer"},
		{"not finite", `MANIFEST = {"params": {"a": 1e999}}` + "\n", nil, "must be finite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "strategy.py")
			if err := os.WriteFile(path, []byte(tc.source), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadManifest(context.Background(), py, path)
			if tc.refused != "" {
				var ie *InputError
				if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("error %v, want an *InputError with %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("params %#v, want %#v", got, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "SHOULD-NOT-EXIST")); err == nil {
				t.Fatal("reading the MANIFEST ran the strategy")
			}
		})
	}
}

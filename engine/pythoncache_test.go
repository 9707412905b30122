package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// ahead is a clock racyWindow ahead: a probe it dates keeps its answer
// although the test made the interpreter's files just before.
func ahead() time.Time { return time.Now().Add(racyWindow + 10*time.Millisecond) }

// TestFindPythonCached: a probe's answer is kept and given back without
// running the interpreter while none of its inputs changes; a changed
// input, an interpreter that is a script (a launcher), and an input that
// changed just before the probe each keep it from being used.
func TestFindPythonCached(t *testing.T) {
	// The interpreter's own file: python3 on PATH may be a launcher.
	out, err := exec.Command("python3", "-I", "-S", "-c", "import os, sys; print(os.path.realpath(sys.executable))").Output()
	if err != nil {
		t.Skip("python3 does not run: ", err)
	}
	real := strings.TrimSpace(string(out))
	ctx := context.Background()
	cache, bin := t.TempDir(), t.TempDir()
	python := filepath.Join(bin, "python3")
	if err := os.Symlink(real, python); err != nil {
		t.Fatal(err)
	}
	if _, ok := CachedPython(python, cache); ok {
		t.Fatal("an answer before any probe")
	}
	probed, err := findPythonCached(ctx, python, cache, ahead)
	if err != nil {
		t.Fatal(err)
	}
	if probed.Executable != python || probed.BytecodeTag == "" || len(probed.Paths) == 0 {
		t.Fatalf("probe: %+v", probed)
	}
	kept, ok := CachedPython(python, cache)
	if !ok || fmt.Sprint(*kept) != fmt.Sprint(*probed) {
		t.Fatalf("kept %+v (%v), want %+v", kept, ok, probed)
	}

	// The answer is given without a probe: an answer edited in the cache
	// is what comes back.
	file := probeCacheFile(cache, python)
	var e probeEntry
	b, err := os.ReadFile(file)
	if err == nil {
		err = json.Unmarshal(b, &e)
	}
	if err != nil {
		t.Fatal(err)
	}
	e.Interpreter.Version = "3.99.0"
	if b, err = json.Marshal(e); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if py, err := findPythonCached(ctx, python, cache, ahead); err != nil || py.Version != "3.99.0" {
		t.Fatalf("answered %+v, %v: not from the cache", py, err)
	}

	// The interpreter's file replaced (a new link, as an upgrade or a
	// virtual environment made again leaves): probed again.
	if err := os.Remove(python); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, python); err != nil {
		t.Fatal(err)
	}
	if _, ok := CachedPython(python, cache); ok {
		t.Fatal("an answer kept across a replaced interpreter")
	}
	if py, err := findPythonCached(ctx, python, cache, ahead); err != nil || py.Version != probed.Version {
		t.Fatalf("after the replacement: %+v, %v", py, err)
	}
	if _, ok := CachedPython(python, cache); !ok {
		t.Fatal("the new answer was not kept")
	}

	// An input changed just before the probe: the answer is not kept.
	fresh := filepath.Join(bin, "fresh")
	if err := os.Symlink(real, fresh); err != nil {
		t.Fatal(err)
	}
	if _, err := FindPythonCached(ctx, fresh, cache); err != nil {
		t.Fatal(err)
	}
	if _, ok := CachedPython(fresh, cache); ok {
		t.Fatal("kept an answer whose interpreter changed just before the probe")
	}

	// A launcher script runs whatever its environment names: never kept.
	// This one passes its own path as argv[0], so the interpreter names
	// it as sys.executable: only the script check keeps it out.
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	shim := filepath.Join(bin, "shim")
	if err := os.WriteFile(shim, []byte("#!/usr/bin/env bash\nexec -a \"$0\" "+real+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if py, err := findPythonCached(ctx, shim, cache, ahead); err != nil || py.Executable != shim {
		t.Fatalf("shim: %+v, %v; want it named as the executable", py, err)
	}
	if _, ok := CachedPython(shim, cache); ok {
		t.Fatal("kept the answer of a launcher script")
	}
}

// TestProbeCacheIsBounded: beyond maxCachedPythons answers, the oldest go.
func TestProbeCacheIsBounded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "python")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour)
	for i := range maxCachedPythons + 5 {
		name := filepath.Join(dir, fmt.Sprintf("%02d.json", i))
		if err := os.WriteFile(name, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		mod := base.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(name, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	if err := pruneProbes(dir); err != nil {
		t.Fatal(err)
	}
	for i := range maxCachedPythons + 5 {
		_, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%02d.json", i)))
		if gone := os.IsNotExist(err); gone != (i < 5) {
			t.Errorf("answer %d: gone %v, want %v", i, gone, i < 5)
		}
	}
}

// TestProbeCacheSeesSitePackages: a virtual environment's answer is kept,
// and a .pth file added to its site-packages (what a package installed in
// development mode adds), or a folder a .pth file names appearing, makes
// it stale.
func TestProbeCacheSeesSitePackages(t *testing.T) {
	out, err := exec.Command("python3", "-I", "-S", "-c", "import os, sys; print(os.path.realpath(sys.executable))").Output()
	if err != nil {
		t.Skip("python3 does not run: ", err)
	}
	venv := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command(strings.TrimSpace(string(out)), "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Skipf("no venv: %v %s", err, out)
	}
	python := filepath.Join(venv, "bin", "python")
	site, err := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
	if err != nil || len(site) != 1 {
		t.Fatalf("site-packages: %v %v", site, err)
	}
	later := filepath.Join(venv, "later")
	if err := os.WriteFile(filepath.Join(site[0], "dev.pth"), []byte(later+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cache := context.Background(), t.TempDir()
	if _, err := findPythonCached(ctx, python, cache, ahead); err != nil {
		t.Fatal(err)
	}
	if _, ok := CachedPython(python, cache); !ok {
		t.Fatal("the venv's answer was not kept")
	}
	if err := os.Mkdir(later, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, ok := CachedPython(python, cache); ok {
		t.Fatal("an answer kept across the creation of a folder a .pth file names")
	}
	py, err := findPythonCached(ctx, python, cache, ahead)
	if err != nil || !slices.Contains(py.Paths, later) {
		t.Fatalf("after the folder appeared: paths %v, %v", py.Paths, err)
	}
	if _, ok := CachedPython(python, cache); !ok {
		t.Fatal("the new answer was not kept")
	}
	if err := os.WriteFile(filepath.Join(site[0], "another.pth"), []byte("# nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := CachedPython(python, cache); ok {
		t.Fatal("an answer kept across a .pth file added to site-packages")
	}
}

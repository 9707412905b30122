package ray

// Package integrity on a real cluster (subtests of TestRaySweep): whoever
// can reach the dashboard can upload a package under any name, and can
// leave files on a node. A sweep whose package on the cluster, or whose
// unpacked folder on a node, is not the one stratbench built fails with
// exit 1 naming what differs, and nothing of that package runs: not the
// binary, not a Python file of it, not a run.

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"stratbench/internal/e2etest"
	"stratbench/sweep/ray"
)

// expectedPackage builds the code package a sweep of strategy (on the
// bundled data) sends, as stratbench builds it: the same inputs give the
// same bytes, so the same name.
func expectedPackage(t *testing.T, strategy string) *ray.Package {
	t.Helper()
	pkg, err := ray.BuildPackage(context.Background(), ray.PackageSpec{Binary: e2etest.Binary(), Strategy: filepath.Dir(strategy)}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// markerCode is Python that, when it runs, leaves a file in marks saying
// who ran it: proof that a file of a tampered package was used.
func markerCode(marks, who string) string {
	return fmt.Sprintf("open(%s, 'w').write('ran')\n", strconv.Quote(filepath.Join(marks, who)))
}

// tamperedZip is the package's zip with the files of change put in (in
// place of the package's, or added): what someone uploads under the
// package's name.
func tamperedZip(t *testing.T, pkg *ray.Package, change map[string]string) []byte {
	t.Helper()
	zr, err := zip.OpenReader(pkg.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	add := func(name string, mode os.FileMode, content io.Reader) {
		h := &zip.FileHeader{Name: name, Method: zip.Deflate}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err == nil {
			_, err = io.Copy(w, content)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range zr.File {
		if body, ok := change[f.Name]; ok {
			add(f.Name, f.Mode(), strings.NewReader(body))
			delete(change, f.Name)
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		add(f.Name, f.Mode(), rc)
		rc.Close()
	}
	for name, body := range change {
		add(name, 0o644, strings.NewReader(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sweepRefused runs a two-run sweep of strategy on the cluster, which
// must fail with exit 1, and returns its stderr.
func (e *rayEnv) sweepRefused(t *testing.T, strategy string) string {
	t.Helper()
	r := e.Run(e.rayArgs("sweep", strategy, "--ci", "--output", "json", "--grid", "fast=3,5", "--grid", "slow=10",
		"--from", "2026-01-05", "--to", "2026-01-05 04:00:00")...)
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.Code, r.Stderr)
	}
	t.Logf("stderr:\n%s", r.Stderr)
	return r.Stderr
}

// assertNothingRan checks that the sweep id left no result, no job here or
// on the nodes, and that nothing of the tampered files ran.
func (e *rayEnv) assertNothingRan(t *testing.T, marks string) {
	t.Helper()
	if ran, _ := os.ReadDir(marks); len(ran) != 0 {
		t.Errorf("files of the tampered package ran: %v", ran)
	}
	if n := e.FolderEntries("jobs"); n != 0 {
		t.Errorf("%d jobs came back from the cluster, want none", n)
	}
	sweeps, _ := os.ReadDir(filepath.Join(e.Home, "sweeps"))
	for _, s := range sweeps {
		if got := e.ReadResults(s.Name()); len(got) != 0 {
			t.Errorf("sweep %s has %d results, want none", s.Name(), len(got))
		}
		if dirs, _ := filepath.Glob(filepath.Join(e.nodeTmp, "stratbench-ray", s.Name(), "jobs", "*")); len(dirs) != 0 {
			t.Errorf("runs of sweep %s on the nodes: %v", s.Name(), dirs)
		}
	}
}

// testRayTamperedUpload: someone uploads, under the name the sweep's
// package will have, a zip whose binary writes a file, whose strategy
// writes another, and with a sitecustomize.py that Python would import
// from a folder on its path. The sweep finds the package "already on the
// cluster", then fails with exit 1 naming the files that differ; none of
// them ran, and no run happened.
func testRayTamperedUpload(t *testing.T, e *rayEnv) {
	name := fmt.Sprintf("tampered_%d.py", time.Now().UnixNano())
	strategy := e2etest.CopyStrategy(t, e2etest.SweepStrategy, name)
	pkg := expectedPackage(t, strategy)
	marks := t.TempDir()
	tampered := tamperedZip(t, pkg, map[string]string{
		ray.PackageBinary:    "#!/bin/sh\necho ran > " + filepath.Join(marks, "binary") + "\n",
		"strategy/" + name:   markerCode(marks, "strategy"),
		"sitecustomize.py":   markerCode(marks, "sitecustomize"),
		"strategy/numpy.py":  markerCode(marks, "numpy"),
		"strategy/pandas.py": markerCode(marks, "pandas"),
	})
	cl, err := ray.New(e.c.Dashboard, ray.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.UploadPackage(context.Background(), pkg.URI, bytes.NewReader(tampered), int64(len(tampered))); err != nil {
		t.Fatal(err)
	}

	stderr := e.sweepRefused(t, strategy)
	if !strings.Contains(stderr, "package "+string(pkg.URI)+" already on the cluster, not sent") {
		t.Fatalf("the sweep did not find the uploaded package under its name:\n%s", stderr)
	}
	for _, want := range []string{
		"the package " + string(pkg.URI) + " on the cluster is not the one stratbench built",
		"stratbench differs (", "strategy/" + name + " differs (", "sitecustomize.py is not part of it; and 2 more",
		"someone who can reach the cluster's dashboard uploaded another package under its name",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	e.assertNothingRan(t, marks)
}

// testRayTamperedUnpacked: the package on the cluster is the right one,
// but a node's folder for it was put there first (by someone with a job
// on the cluster), with one file more: a numpy.py next to the strategy,
// which its import would pick up. The slot checks the folder before it
// runs anything of it: the sweep fails with exit 1 naming the file, and
// nothing of the folder ran.
func testRayTamperedUnpacked(t *testing.T, e *rayEnv) {
	name := fmt.Sprintf("unpacked_%d.py", time.Now().UnixNano())
	strategy := e2etest.CopyStrategy(t, e2etest.SweepStrategy, name)
	pkg := expectedPackage(t, strategy)
	marks := t.TempDir()
	dir := filepath.Join(e.nodeTmp, "stratbench-ray", "packages", pkg.SHA256)
	unzipTo(t, pkg.Path, dir)
	if err := os.WriteFile(filepath.Join(dir, "strategy", "numpy.py"), []byte(markerCode(marks, "numpy")), 0o644); err != nil {
		t.Fatal(err)
	}

	stderr := e.sweepRefused(t, strategy)
	for _, want := range []string{
		"does not hold the package stratbench built: strategy/numpy.py is not part of it",
		"nothing of it was run on that node",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	e.assertNothingRan(t, marks)
}

// unzipTo writes a package's files under dir, as a node unpacks it.
func unzipTo(t *testing.T, zipPath, dir string) {
	t.Helper()
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		dst := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, body, f.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

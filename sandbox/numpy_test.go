//go:build linux && amd64

package sandbox

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pybridge "stratbench/python"
)

// TestNumpyImportsSandboxed runs numpy (with OpenBLAS) in the sandbox, using
// the first interpreter that has it. The *_NUM_THREADS variables of the
// worker's environment (python.SandboxEnv) are what make this work: OpenBLAS fails to import when it cannot start
// threads. The policy reads the folders of the interpreter's sys.path,
// which covers distribution-specific site folders (Debian's dist-packages)
// that sysconfig does not name.
func TestNumpyImportsSandboxed(t *testing.T) {
	requireSandbox(t)
	var py string
	var dirs []string
	for _, candidate := range []string{"python3", "/usr/bin/python3"} {
		out, err := exec.Command(candidate, "-I", "-c",
			"import json, os, sys, numpy; print(json.dumps([sys.executable] + [p for p in sys.path if os.path.isdir(p)]))").Output()
		if err != nil {
			continue
		}
		var paths []string
		if err := json.Unmarshal(out, &paths); err != nil {
			t.Fatalf("%s paths %q: %v", candidate, out, err)
		}
		py, dirs = paths[0], paths[1:]
		break
	}
	if py == "" {
		t.Skip("no python3 with numpy")
	}
	p, err := InterpreterPolicy(py, dirs)
	if err != nil {
		t.Fatal(err)
	}
	p.Env = pybridge.SandboxEnv(nil)
	// A virtual environment's interpreter reads its pyvenv.cfg at start, as
	// the engine's policy allows.
	if cfg := filepath.Join(filepath.Dir(filepath.Dir(py)), "pyvenv.cfg"); fileExists(cfg) {
		p.ReadFiles = append(p.ReadFiles, cfg)
	}
	script := "import numpy; a = numpy.ones((300, 300)); print(int((a @ a).sum()))"
	stdout, stderr, code := runSandboxed(t, p, py, []string{"-I", "-B", "-c", script}, nil)
	if code != 0 || strings.TrimSpace(stdout) != "27000000" {
		t.Fatalf("%s: exit %d, stdout %q, stderr:\n%s", py, code, stdout, stderr)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Interpreter is a Python interpreter resolved to the real executable: a
// shim such as pyenv's python3 is a shell script that forks, so the worker
// runs sys.executable directly.
type Interpreter struct {
	Executable string // sys.executable
	Version    string // e.g. 3.11.7
	// Paths are the folders the interpreter imports from in isolated mode
	// (sysconfig's stdlib and site-packages, and sys.path, which also names
	// distribution folders such as Debian's dist-packages); the sandbox lets
	// the worker read them.
	Paths []string
	// VenvConfig is the virtual environment's pyvenv.cfg, if any.
	VenvConfig string
	// BytecodeTag names the bytecode the interpreter runs: its
	// implementation's cache tag and its magic number (cpython-311-a70d0d0a),
	// which together say which interpreters can run a .pyc file compiled
	// by it; empty when it caches no bytecode.
	BytecodeTag string
	// exe is the executable's file as it was when it was probed (zero for
	// an Interpreter made otherwise): an interpreter replaced since, by a
	// virtual environment made again with another Python say, cannot run
	// the bytecode compiled for the one probed (bridgeInstaller).
	exe statSign
}

// probeScript runs from / in isolated mode, so that sys.path names neither
// the user's folder nor PYTHONPATH.
//
// It also names its inputs: the files and folders whose change could
// change its answer (the executable, pyvenv.cfg, the folders of sys.path,
// every site-packages folder site looks at and every folder a .pth file
// names, whether or not they exist: site skips those that do not, and
// their creation changes sys.path; the .pth files themselves,
// sitecustomize), which decide whether a cached answer still holds
// (pythoncache.go).
const probeScript = `import importlib.util, json, os, site, sys, sysconfig
p = sysconfig.get_paths()
paths = {p[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if p.get(k)}
paths |= {d for d in sys.path if os.path.isabs(d) and os.path.isdir(d) and d != "/"}
cfg = os.path.join(sys.prefix, "pyvenv.cfg")
tag = sys.implementation.cache_tag
inputs = {sys.executable, os.path.realpath(sys.executable), cfg} | paths
for d in set(getattr(site, "getsitepackages", lambda: [])()) | {p.get("purelib"), p.get("platlib")}:
    if not d:
        continue
    inputs.add(d)
    if not os.path.isdir(d):
        continue
    for f in os.listdir(d):
        if not f.endswith(".pth"):
            continue
        inputs.add(os.path.join(d, f))
        try:
            with open(os.path.join(d, f), encoding="utf-8", errors="replace") as pth:
                for line in pth:
                    line = line.rstrip()
                    if line and not line.startswith(("#", "import ", "import\t")):
                        inputs.add(os.path.normpath(os.path.join(d, line)))
        except OSError:
            pass
custom = getattr(sys.modules.get("sitecustomize"), "__file__", None)
if custom:
    inputs.add(custom)
print(json.dumps({"executable": sys.executable, "version": "%d.%d.%d" % sys.version_info[:3],
  "ok": sys.version_info >= (3, 8), "paths": sorted(paths),
  "venv": cfg if os.path.isfile(cfg) else "",
  "pyc": "%s-%s" % (tag, importlib.util.MAGIC_NUMBER.hex()) if tag else "",
  "inputs": sorted(inputs)}))
`

// FindPython resolves the interpreter to run strategies with: flag (--python)
// if set, else $STRATBENCH_PYTHON, else $VIRTUAL_ENV/bin/python, else python3
// on PATH. It runs the interpreter once to learn sys.executable. Problems are
// *UsageError values.
func FindPython(ctx context.Context, flag string) (*Interpreter, error) {
	path, origin, err := locatePython(flag)
	if err != nil {
		return nil, err
	}
	py, _, err := probePython(ctx, path, origin)
	return py, err
}

// probePython runs the interpreter at path (found from origin) to learn
// what an Interpreter says of it, and the inputs of that answer
// (probeScript).
func probePython(ctx context.Context, path, origin string) (*Interpreter, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// -I: the paths are those a sandboxed worker imports from, which sees
	// neither PYTHONPATH nor the user's site-packages (the sandbox must not
	// open more folders than that).
	cmd := exec.CommandContext(ctx, path, "-I", "-c", probeScript)
	cmd.Dir = "/"
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, &UsageError{fmt.Errorf("python interpreter %s (from %s) does not run: %v %s", path, origin, err, bytes.TrimSpace(stderr.Bytes()))}
	}
	var probe struct {
		Executable string   `json:"executable"`
		Version    string   `json:"version"`
		OK         bool     `json:"ok"`
		Paths      []string `json:"paths"`
		Venv       string   `json:"venv"`
		Pyc        string   `json:"pyc"`
		Inputs     []string `json:"inputs"`
	}
	if err := json.Unmarshal(lastLine(out), &probe); err != nil || probe.Executable == "" {
		return nil, nil, &UsageError{fmt.Errorf("python interpreter %s (from %s) is not a usable Python 3: %q", path, origin, bytes.TrimSpace(out))}
	}
	if !probe.OK {
		return nil, nil, &UsageError{fmt.Errorf("python interpreter %s is Python %s; stratbench needs 3.8 or later", path, probe.Version)}
	}
	return &Interpreter{Executable: probe.Executable, Version: probe.Version, Paths: probe.Paths, VenvConfig: probe.Venv,
		BytecodeTag: probe.Pyc, exe: signOf(os.Stat(probe.Executable))}, probe.Inputs, nil
}

// PythonPath returns the absolute path of the interpreter FindPython would
// run for flag, without running it; FindPython's Executable is often the
// same (a virtual environment's python, an interpreter's own file) but not
// always (a pyenv shim names the interpreter it runs). It lets a caller
// start what needs the interpreter while FindPython probes it, and check
// the path against FindPython's Executable afterwards.
func PythonPath(flag string) (string, error) {
	path, _, err := locatePython(flag)
	return path, err
}

// IsScript reports whether the file at path is a script (it starts with
// "#!"), as the launchers are that run another interpreter (pyenv's and
// asdf's shims): FindPython's Executable is then that other interpreter,
// not path, and what was started with path ahead of the probe would be
// replaced. It reports false when the file cannot be read.
func IsScript(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [2]byte
	n, _ := io.ReadFull(f, head[:])
	return n == 2 && string(head[:]) == "#!"
}

// locatePython is FindPython's choice of interpreter: its absolute path
// and where the name came from.
func locatePython(flag string) (path, origin string, err error) {
	name, origin := flag, "--python"
	if name == "" {
		name, origin = os.Getenv("STRATBENCH_PYTHON"), "$STRATBENCH_PYTHON"
	}
	if name == "" {
		if venv := os.Getenv("VIRTUAL_ENV"); venv != "" {
			name, origin = filepath.Join(venv, "bin", "python"), "$VIRTUAL_ENV"
		}
	}
	if name == "" {
		name, origin = "python3", "PATH"
	}
	path, err = exec.LookPath(name)
	if err != nil {
		if origin == "PATH" {
			return "", origin, &UsageError{errors.New("python3 not found on PATH: install Python 3.8 or later, or pass --python PATH")}
		}
		if why := notAnInterpreter(name); why != "" {
			return "", origin, &UsageError{fmt.Errorf("python interpreter %q (from %s) %s", name, origin, why)}
		}
		return "", origin, &UsageError{fmt.Errorf("python interpreter %q (from %s) not found", name, origin)}
	}
	// A relative path (--python .venv/bin/python) names a file of the
	// current folder; the probe and the worker run elsewhere.
	if path, err = filepath.Abs(path); err != nil {
		return "", origin, &UsageError{fmt.Errorf("python interpreter %q (from %s): %w", name, origin, err)}
	}
	return path, origin, nil
}

// notAnInterpreter says why name, which the lookup of an interpreter
// refused, is there but cannot be one: a folder, a file that is not
// executable (--python rsi.py), or a program of the current folder named
// without a folder (which is never looked up there); "" when there is no
// such file.
func notAnInterpreter(name string) string {
	info, err := os.Stat(name)
	switch {
	case err != nil:
		return ""
	case info.IsDir():
		return "is a folder: give the interpreter, e.g. " + filepath.Join(name, "bin", "python")
	case info.Mode()&0o111 == 0:
		return "is not executable: it is a file, not a program (--python takes an interpreter, e.g. .venv/bin/python)"
	case !strings.ContainsRune(name, filepath.Separator):
		return "is in the current folder, which is not searched: give its path, ./" + name
	}
	return "is not executable by this user"
}

func lastLine(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}

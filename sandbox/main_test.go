package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pybridge "stratbench/python"
)

// TestMain makes the test binary the launcher, as main() does for stratbench.
func TestMain(m *testing.M) {
	MaybeRunLauncher()
	os.Exit(m.Run())
}

// python returns the real interpreter behind python3 (not a shim) and the
// folders sysconfig names for its library, as the engine will ask for them.
// It skips the test when there is no python3.
func python(t testing.TB) (exe string, libDirs []string) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on PATH")
	}
	out, err := exec.Command("python3", "-I", "-c",
		`import json, sys, sysconfig; p = sysconfig.get_paths(); `+
			`print(json.dumps([sys.executable] + [p[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")]))`).Output()
	if err != nil {
		t.Fatalf("ask python3 for its paths: %v", err)
	}
	var paths []string
	if err := json.Unmarshal(out, &paths); err != nil {
		t.Fatalf("python3 paths %q: %v", out, err)
	}
	return paths[0], paths[1:]
}

// requireSandbox skips the test where the system cannot run the sandbox.
func requireSandbox(t testing.TB) {
	t.Helper()
	if err := Check(); err != nil {
		t.Skipf("%v", err)
	}
}

// pythonPolicy is the policy the engine would build: the interpreter's own
// policy plus the script's folder, the artifacts folder and a temporary folder.
func pythonPolicy(t testing.TB, readDirs, writeDirs []string, env map[string]string) (exe string, p Policy) {
	t.Helper()
	exe, libDirs := python(t)
	p, err := InterpreterPolicy(exe, libDirs)
	if err != nil {
		t.Fatalf("InterpreterPolicy: %v", err)
	}
	p.ReadDirs = append(p.ReadDirs, readDirs...)
	p.WriteDirs = append(p.WriteDirs, writeDirs...)
	p.Env = pybridge.SandboxEnv(env)
	return exe, p
}

// runSandboxed runs exe with args under p and returns stdout, stderr and the
// exit code.
func runSandboxed(t testing.TB, p Policy, exe string, args []string, extra []*os.File) (stdout, stderr string, code int) {
	t.Helper()
	path, execArgs, err := Command(p, exe, args)
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	return run(t, exec.Command(path, execArgs...), p.Env, extra)
}

func run(t testing.TB, cmd *exec.Cmd, env []string, extra []*os.File) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	cmd.Env = env
	cmd.ExtraFiles = extra
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		t.Fatalf("%s timed out; stderr: %s", cmd, errOut.String())
	case !errors.As(err, &exitErr):
		t.Fatalf("run %s: %v", cmd, err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// writeScript writes a Python script into dir and returns its path.
func writeScript(t testing.TB, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(strings.TrimSpace(body)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

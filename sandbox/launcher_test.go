//go:build linux && amd64

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckPassesHere(t *testing.T) {
	abi, err := landlockABI()
	if err != nil || abi < minLandlockABI {
		t.Skipf("this kernel has no Landlock ABI %d (abi %d, %v)", minLandlockABI, abi, err)
	}
	if err := Check(); err != nil {
		t.Fatalf("Check on a kernel with Landlock ABI %d: %v", abi, err)
	}
}

func TestCheckRefusesForcedABI(t *testing.T) {
	abi, err := landlockABI()
	if err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	t.Setenv(abiOverrideEnv, "5")
	err = Check()
	if err == nil {
		t.Fatal("Check accepted Landlock ABI 5")
	}
	for _, want := range []string{"sandbox unavailable", "Landlock ABI 5 found", "ABI 6 or later is needed", kernelRelease()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	if _, _, err := Command(Policy{}, "/bin/true", nil); err == nil || !strings.Contains(err.Error(), "Landlock ABI 5 found") {
		t.Errorf("Command with Landlock ABI 5: %v, want the refusal", err)
	}

	// The override can only lower what the kernel offers.
	if abi >= minLandlockABI {
		t.Setenv(abiOverrideEnv, "99")
		if err := Check(); err != nil {
			t.Errorf("Check with override 99 on ABI %d: %v", abi, err)
		}
	}
	t.Setenv(abiOverrideEnv, "seven")
	if err := Check(); err == nil || !strings.Contains(err.Error(), "not a Landlock ABI number") {
		t.Errorf("Check with a malformed override: %v, want a refusal", err)
	}
}

// TestLauncherFailsClosed starts the launcher with policies that cannot be
// applied: it must exit with ExitCode, say why, and never run the program.
func TestLauncherFailsClosed(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	program := writeScript(t, dir, "program.sh", ": > "+marker)
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	loader, err := Interpreter(sh)
	if err != nil {
		t.Fatal(err)
	}
	base := Policy{
		ExecFiles:         []string{sh, loader},
		ReadDirs:          SystemReadDirs(),
		ReadFiles:         append(systemReadFiles(), program),
		WriteDirs:         []string{dir},
		AddressSpaceBytes: DefaultAddressSpaceBytes,
		OpenFiles:         DefaultOpenFiles,
		KeepFDs:           3,
	}

	// The control: with the base policy the program runs.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, exec.Command(exe, mustLauncherArgs(t, base, sh, program)...), nil, nil); code != 0 {
		t.Fatalf("base policy: exit %d, stderr %q", code, stderr)
	}
	if err := os.Remove(marker); err != nil {
		t.Fatalf("base policy did not run the program: %v", err)
	}

	cases := []struct {
		name string
		args func() []string
		want string
	}{
		{"malformed policy", func() []string { return []string{launcherArg, "{", sh, program} }, "decode sandbox policy"},
		{"unknown policy field", func() []string { return []string{launcherArg, `{"exec_files":["/bin/sh"],"net":true}`, sh} }, "unknown field"},
		{"no program", func() []string { return []string{launcherArg, `{}`} }, "want a policy and a program"},
		{"missing rule path", func() []string {
			p := base
			p.ReadDirs = append(p.ReadDirs, filepath.Join(dir, "missing"))
			return mustLauncherArgs(t, p, sh, program)
		}, "apply Landlock"},
		{"program not executable under the policy", func() []string {
			p := base
			p.ExecFiles = []string{loader}
			return mustLauncherArgs(t, p, sh, program)
		}, "execute " + sh + ": permission denied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := run(t, exec.Command(exe, c.args()...), nil, nil)
			if code != ExitCode {
				t.Errorf("exit code %d, want %d; stderr: %s", code, ExitCode, stderr)
			}
			if !strings.HasPrefix(stderr, "stratbench sandbox: ") || !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q, want a stratbench sandbox message with %q", stderr, c.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the program ran")
			}
			t.Logf("%s", stderr)
		})
	}
}

func mustLauncherArgs(t *testing.T, p Policy, path string, args ...string) []string {
	t.Helper()
	a, err := launcherArgs(p, path, args)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestConsecutiveStarts starts the sandboxed interpreter 30 times: the
// launcher must not fail intermittently (RLIMIT_AS against the Go runtime's
// address-space reservations was such a failure).
func TestConsecutiveStarts(t *testing.T) {
	requireSandbox(t)
	py, p := pythonPolicy(t, nil, nil, nil)
	for i := range 30 {
		stdout, stderr, code := runSandboxed(t, p, py, []string{"-I", "-B", "-c", "import json; print(json.dumps(42))"}, nil)
		if code != 0 || stdout != "42\n" {
			t.Fatalf("start %d: exit %d, stdout %q, stderr %q", i+1, code, stdout, stderr)
		}
	}
}

// TestSandboxedEnvironment checks that the program gets exactly the policy's
// environment and the exec filter, not the launcher's environment.
func TestSandboxedEnvironment(t *testing.T) {
	requireSandbox(t)
	py, p := pythonPolicy(t, nil, nil, map[string]string{"PYTHONHASHSEED": "0"})
	path, args, err := Command(p, py, []string{"-I", "-c", "import os; print(sorted(os.environ.items()))"})
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, exec.Command(path, args...), append(os.Environ(), "STRATBENCH_LAUNCHER_ONLY=1"), nil)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	filter, err := execFilterValue()
	if err != nil {
		t.Fatal(err)
	}
	want := "[('LANG', 'C.UTF-8'), ('MKL_NUM_THREADS', '1'), ('MPLBACKEND', 'Agg'), ('NUMEXPR_NUM_THREADS', '1'), ('OMP_NUM_THREADS', '1'), " +
		"('OPENBLAS_NUM_THREADS', '1'), ('PATH', '/usr/bin:/bin'), ('PYTHONDONTWRITEBYTECODE', '1'), ('PYTHONHASHSEED', '0'), " +
		"('PYTHONIOENCODING', 'utf-8'), ('PYTHONNOUSERSITE', '1'), " +
		"('" + ExecFilterEnv + "', '" + filter + "')]\n"
	if stdout != want {
		t.Errorf("environment in the sandbox:\n%s\nwant\n%s", stdout, want)
	}
}

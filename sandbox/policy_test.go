package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestPolicyResolved(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	realFile := filepath.Join(realDir, "file")

	got, err := Policy{ExecFiles: []string{link, file}, ReadDirs: []string{dir}, Env: []string{"A=1"}}.resolved()
	if err != nil {
		t.Fatal(err)
	}
	want := Policy{
		ExecFiles:         []string{realFile},
		ReadDirs:          []string{realDir},
		AddressSpaceBytes: DefaultAddressSpaceBytes,
		OpenFiles:         DefaultOpenFiles,
		KeepFDs:           3,
		Env:               []string{"A=1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resolved:\n%+v\nwant\n%+v", got, want)
	}

	bad := []struct {
		name   string
		policy Policy
		want   string
	}{
		{"relative path", Policy{ExecFiles: []string{file}, ReadDirs: []string{"lib"}}, "not absolute"},
		{"missing path", Policy{ExecFiles: []string{file}, ReadDirs: []string{filepath.Join(dir, "missing")}}, "no such file"},
		{"file as folder", Policy{ExecFiles: []string{file}, WriteDirs: []string{file}}, "is not a directory"},
		{"folder as file", Policy{ExecFiles: []string{file}, ReadFiles: []string{dir}}, "is a directory"},
		{"no executable", Policy{ReadDirs: []string{dir}}, "no executable file"},
		{"negative address space", Policy{ExecFiles: []string{file}, AddressSpaceBytes: -1}, "not positive"},
		{"too many descriptors", Policy{ExecFiles: []string{file}, KeepFDs: 1000}, "descriptors to keep"},
		{"descriptor limit below the kept", Policy{ExecFiles: []string{file}, KeepFDs: 6, OpenFiles: 5}, "descriptor limit 5, want 6"},
		{"descriptor limit too high", Policy{ExecFiles: []string{file}, OpenFiles: 1 << 30}, "descriptor limit 1073741824"},
		{"malformed environment", Policy{ExecFiles: []string{file}, Env: []string{"NOVALUE"}}, "not KEY=VALUE"},
		{"empty variable name", Policy{ExecFiles: []string{file}, Env: []string{"=x"}}, "not KEY=VALUE"},
		{"the exec filter's variable", Policy{ExecFiles: []string{file}, Env: []string{ExecFilterEnv + "=060000000000ff7f"}}, "is the launcher's to set"},
	}
	for _, c := range bad {
		if _, err := c.policy.resolved(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestCommand(t *testing.T) {
	requireSandbox(t)
	py, p := pythonPolicy(t, nil, nil, nil)
	path, args, err := Command(p, py, []string{"-I", "-c", "pass"})
	if err != nil {
		t.Fatal(err)
	}
	if path != "/proc/self/exe" || len(args) != 6 || args[0] != launcherArg || args[2] != py {
		t.Errorf("Command = %s %q, want /proc/self/exe %s <policy> %s -I -c pass", path, args, launcherArg, py)
	}
	decoded, program, argv, err := parseLauncherArgs(args[1:])
	if err != nil {
		t.Fatal(err)
	}
	resolved, err := p.resolved()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(decoded, resolved) || program != py || !slices.Equal(argv, []string{py, "-I", "-c", "pass"}) {
		t.Errorf("the launcher would see %+v %s %q", decoded, program, argv)
	}

	if _, _, err := Command(p, "/bin/sh", nil); err == nil || !strings.Contains(err.Error(), "not among the policy's executable files") {
		t.Errorf("Command for a program the policy does not execute: %v", err)
	}
	if _, _, err := Command(p, "python3", nil); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Errorf("Command for a relative program: %v", err)
	}
	if _, _, err := Command(p, py, []string{"a\x00b"}); err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("Command with a NUL in an argument: %v", err)
	}
}

func TestInterpreter(t *testing.T) {
	py, _ := python(t)
	loader, err := Interpreter(py)
	if err != nil {
		t.Fatal(err)
	}
	if loader == "" {
		t.Skipf("%s is statically linked", py)
	}
	if fi, err := os.Lstat(loader); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("loader %s is not a regular file (symlinks must be resolved): %v", loader, err)
	}
	if !slices.Contains(SystemReadDirs(), filepath.Dir(loader)) {
		t.Errorf("SystemReadDirs %q lacks the loader's folder %s", SystemReadDirs(), filepath.Dir(loader))
	}

	// A shared library has no ELF interpreter.
	libm := filepath.Join(filepath.Dir(loader), "libm.so.6")
	if _, err := os.Stat(libm); err == nil {
		if got, err := Interpreter(libm); err != nil || got != "" {
			t.Errorf("Interpreter(%s) = %q, %v; want none", libm, got, err)
		}
	}

	// A script (such as the pyenv shim) is refused.
	script := writeScript(t, t.TempDir(), "python3", "#!/bin/sh\nexec python3.11 \"$@\"")
	if _, err := Interpreter(script); err == nil || !strings.Contains(err.Error(), "not an ELF executable") {
		t.Errorf("Interpreter(script): %v, want a clear refusal", err)
	}
	if _, err := InterpreterPolicy(script, nil); err == nil {
		t.Errorf("InterpreterPolicy(script) accepted a script")
	}
}

// TestInterpreterPolicyFindsSharedLibpython checks the run-path libraries:
// a Python built with --enable-shared (pyenv's) loads libpython from its
// own prefix, outside the system folders and outside sysconfig's paths.
func TestInterpreterPolicyFindsSharedLibpython(t *testing.T) {
	py, libDirs := python(t)
	out, err := exec.Command(py, "-I", "-c",
		`import sysconfig as s; print(s.get_config_var("Py_ENABLE_SHARED"), s.get_config_var("LIBDIR"), s.get_config_var("INSTSONAME"))`).Output()
	if err != nil {
		t.Fatal(err)
	}
	var shared, libDir, soname string
	if f := strings.Fields(string(out)); len(f) == 3 {
		shared, libDir, soname = f[0], f[1], f[2]
	}
	p, err := InterpreterPolicy(py, libDirs)
	if err != nil {
		t.Fatal(err)
	}
	if shared != "1" {
		t.Skipf("%s is not built with a shared libpython", py)
	}
	lib, err := filepath.EvalSymlinks(filepath.Join(libDir, soname))
	if err != nil {
		t.Fatal(err)
	}
	if inSystem := slices.ContainsFunc(SystemReadDirs(), func(d string) bool { return strings.HasPrefix(lib, d+"/") }); inSystem {
		t.Skipf("libpython %s is in a system folder", lib)
	}
	if !slices.Contains(p.ReadFiles, lib) {
		t.Errorf("policy read files %q lack %s", p.ReadFiles, lib)
	}
}

// FuzzParseLauncherArgs feeds the launcher's policy decoder arbitrary input:
// it must not panic, and what it accepts must survive a round trip.
func FuzzParseLauncherArgs(f *testing.F) {
	f.Add(`{"exec_files":["/usr/bin/python3"],"address_space_bytes":536870912,"keep_fds":6,"env":["A=1"]}`, "/usr/bin/python3", "-I")
	f.Add(`{}`, "/bin/sh", "")
	f.Add(`{"exec_files":["/a"],"keep_fds":3,"address_space_bytes":1} {}`, "/a", "x")
	f.Add(`null`, "relative", "")
	f.Fuzz(func(t *testing.T, policy, program, arg string) {
		p, path, argv, err := parseLauncherArgs([]string{policy, program, arg})
		if err != nil {
			return
		}
		if path != program || len(argv) != 2 || argv[0] != program || argv[1] != arg {
			t.Fatalf("program %q argv %q from %q %q", path, argv, program, arg)
		}
		args, err := launcherArgs(p, path, []string{arg})
		if err != nil {
			if strings.ContainsRune(program+arg, 0) {
				return
			}
			t.Fatalf("re-encode accepted policy: %v", err)
		}
		q, _, _, err := parseLauncherArgs(args[1:])
		if err != nil {
			t.Fatalf("decode re-encoded policy %q: %v", args[1], err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed the policy:\n%+v\n%+v", p, q)
		}
	})
}

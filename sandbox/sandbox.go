// Package sandbox starts a program confined by Landlock, seccomp and
// resource limits. It knows nothing of the program: the caller supplies the
// policy as plain data (the folders, the environment, the descriptors to
// keep) and the sandbox applies it. The engine starts the Python worker this
// way; the worker's environment policy lives in the python package.
//
// The running binary is re-executed as a small launcher (Command builds its
// arguments; MaybeRunLauncher, called first thing in main, runs it). On one
// locked OS thread the launcher marks stray descriptors close-on-exec,
// pre-builds everything it will need, sets no_new_privs, drops capabilities,
// applies Landlock (ABI 6 or later, strict), sets RLIMIT_CORE, RLIMIT_NOFILE
// and RLIMIT_AS, loads two seccomp filters on that thread and executes the
// program with the policy's environment plus ExecFilterEnv. Any failure ends
// the launcher with ExitCode and a message on stderr; it never runs the
// program unconfined. Check tells beforehand whether the system supports the
// sandbox.
//
// The program completes the confinement itself: the launcher has to execute
// it, so nothing the launcher installs can refuse every execve, and the
// kernel needs the dynamic loader to be executable. The program stacks the
// seccomp filter handed over in ExecFilterEnv before it runs untrusted code,
// and from then on nothing is executed in the sandbox: not the loader with
// another file, not a memory file through /proc/self/fd.
package sandbox

import (
	"fmt"
	"path/filepath"
	"slices"
)

// ExitCode is the launcher's exit status when it could not confine or start
// the program; its stderr then says which step failed and why.
const ExitCode = 121

// ExecFilterEnv names the variable the launcher adds to the program's
// environment. Its value is a seccomp program, struct sock_filter records
// (u16 code, u8 jt, u8 jf, u32 k, little-endian) hex-encoded, that makes
// execve and execveat fail with EPERM. The sandboxed program must remove the
// variable from its environment, install the program with
// prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER) (no_new_privs is already set)
// before it runs any untrusted code, check that an execve now fails with
// EPERM, and exit with ExitCode and a "stratbench sandbox: " message on
// stderr when any of that fails (stratbench's Python bridge does). A policy cannot set
// this variable.
const ExecFilterEnv = "STRATBENCH_SANDBOX_EXEC_FILTER"

// Command returns the command that runs path with args under p: the running
// binary (/proc/self/exe) as the launcher, with the resolved policy in its
// arguments. path must be absolute, and once symbolic links are resolved it
// must be one of p.ExecFiles; it is executed as given, so a virtual
// environment's interpreter link keeps working. Command fails with Check's
// error where the sandbox is unavailable.
//
// The launcher does not pass its own environment on, but the Go runtime
// reads a few variables (GODEBUG, GOGC...) before the launcher runs, so
// start it with p.Env as its environment too.
func Command(p Policy, path string, args []string) (execPath string, execArgs []string, err error) {
	if err := Check(); err != nil {
		return "", nil, err
	}
	q, err := p.resolved()
	if err != nil {
		return "", nil, err
	}
	if !filepath.IsAbs(path) {
		return "", nil, fmt.Errorf("sandbox: program %q is not an absolute path", path)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: program: %w", err)
	}
	if !slices.Contains(q.ExecFiles, real) {
		return "", nil, fmt.Errorf("sandbox: program %s is not among the policy's executable files", path)
	}
	execArgs, err = launcherArgs(q, path, args)
	if err != nil {
		return "", nil, err
	}
	return "/proc/self/exe", execArgs, nil
}

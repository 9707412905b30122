//go:build linux && amd64

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"unsafe"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// minLandlockABI is the first Landlock ABI that scopes signals and abstract
// UNIX sockets (Linux 6.12).
const minLandlockABI = 6

// Check reports whether this system can run the sandbox, and if not, what
// is missing and what was found. It needs Linux on x86-64 with Landlock ABI
// 6 or later and seccomp filters with the kill-process and errno actions.
//
// STRATBENCH_SANDBOX_ABI_OVERRIDE=N makes Check behave as if the kernel
// offered Landlock ABI N when N is lower than the real ABI; it can only
// make Check refuse, never accept. It exists to test the refusal path.
func Check() error {
	abi, err := landlockABI()
	if err != nil {
		return fmt.Errorf("sandbox unavailable: %w (kernel %s)", err, kernelRelease())
	}
	if v, ok := os.LookupEnv(abiOverrideEnv); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("sandbox unavailable: %s=%q is not a Landlock ABI number", abiOverrideEnv, v)
		}
		abi = min(abi, n)
	}
	if abi < minLandlockABI {
		return fmt.Errorf("sandbox unavailable: Landlock ABI %d found (kernel %s), ABI %d or later is needed (Linux 6.12+)",
			abi, kernelRelease(), minLandlockABI)
	}
	if err := seccompAvailable(); err != nil {
		return fmt.Errorf("sandbox unavailable: %w (kernel %s)", err, kernelRelease())
	}
	return nil
}

// abiOverrideEnv names the variable that lowers the Landlock ABI Check sees.
const abiOverrideEnv = "STRATBENCH_SANDBOX_ABI_OVERRIDE"

// landlockABI returns the kernel's Landlock ABI version, or an error that
// says why there is none.
func landlockABI() (int, error) {
	abi, err := llsyscall.LandlockGetABIVersion()
	switch {
	case errors.Is(err, unix.ENOSYS):
		return 0, errors.New("no Landlock: the kernel was built without it, or a seccomp profile (a container's) blocks it")
	case errors.Is(err, unix.EOPNOTSUPP):
		return 0, errors.New("no Landlock: the kernel has it but it is not enabled at boot (lsm= parameter)")
	case err != nil:
		return 0, fmt.Errorf("query Landlock ABI: %w", err)
	}
	return abi, nil
}

// seccompAvailable checks that seccomp filters can be loaded with the
// actions the filters return.
func seccompAvailable() error {
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); errors.Is(err, unix.EINVAL) {
		return errors.New("seccomp is missing: the kernel was built without CONFIG_SECCOMP")
	}
	actions := []struct {
		name   string
		action uint32
	}{
		{"kill_process", unix.SECCOMP_RET_KILL_PROCESS},
		{"errno", unix.SECCOMP_RET_ERRNO},
		{"allow", unix.SECCOMP_RET_ALLOW},
	}
	for _, a := range actions {
		action := a.action
		_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
		switch errno {
		case 0:
		case unix.ENOSYS:
			return errors.New("seccomp is missing: no seccomp system call")
		case unix.EINVAL:
			return errors.New("seccomp filters are missing: the kernel was built without CONFIG_SECCOMP_FILTER")
		case unix.EOPNOTSUPP:
			return fmt.Errorf("seccomp action %s is not supported by the kernel", a.name)
		default:
			return fmt.Errorf("query seccomp action %s: %w", a.name, errno)
		}
	}
	return nil
}

func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}

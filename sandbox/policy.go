package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// DefaultAddressSpaceBytes is the address-space limit (RLIMIT_AS) of a
// sandboxed program when Policy.AddressSpaceBytes is zero.
const DefaultAddressSpaceBytes = 512 << 20

// DefaultOpenFiles is the descriptor limit (RLIMIT_NOFILE) of a sandboxed
// program when Policy.OpenFiles is zero. Without threads or processes a
// worker needs a handful; the bound matters because what descriptors hold
// is kernel memory in no process's RSS and outside RLIMIT_AS: measured, 10,000
// filled pipes held 142 MB at the 20,000 descriptors the launcher would
// otherwise pass on (the Go runtime raises its soft limit to the hard one).
// At 1,024, pipes hold at most the per-user pipe allowance
// (fs.pipe-user-pages-soft, 64 MiB by default) plus 8 KiB per pipe beyond it.
const DefaultOpenFiles = 1024

// maxOpenFiles bounds Policy.OpenFiles.
const maxOpenFiles = 1 << 20

// maxKeepFDs bounds Policy.KeepFDs: a worker needs stdio and a few protocol
// descriptors, never hundreds.
const maxKeepFDs = 64

// Policy is everything the launcher applies before it executes the sandboxed
// program. Paths must be absolute; Command resolves symbolic links and checks
// that each path exists with the right type, because Landlock refuses
// directory rights on a file.
type Policy struct {
	// ReadDirs may be read and listed, recursively.
	ReadDirs []string `json:"read_dirs,omitempty"`
	// ReadFiles are single files that may be read.
	ReadFiles []string `json:"read_files,omitempty"`
	// ExecFiles may be read and executed: the program itself and its ELF
	// interpreter (the dynamic loader). Nothing else can be executed.
	ExecFiles []string `json:"exec_files,omitempty"`
	// WriteDirs may be read, listed and written, recursively: files and
	// folders may be created, replaced, truncated and removed there.
	WriteDirs []string `json:"write_dirs,omitempty"`
	// WriteFiles are single files that may be read and written (/dev/null).
	WriteFiles []string `json:"write_files,omitempty"`
	// AddressSpaceBytes is the program's RLIMIT_AS; zero means
	// DefaultAddressSpaceBytes.
	AddressSpaceBytes int64 `json:"address_space_bytes,omitempty"`
	// Env is the program's environment, as KEY=VALUE entries; the
	// launcher adds ExecFilterEnv. The launcher's own environment is never
	// passed on: what the program gets is the caller's policy (for the
	// worker, python.SandboxEnv).
	Env []string `json:"env,omitempty"`
	// OpenFiles is the program's descriptor limit (RLIMIT_NOFILE, soft and
	// hard); zero means DefaultOpenFiles.
	OpenFiles int `json:"open_files,omitempty"`
	// KeepFDs is the number of descriptors that survive into the program:
	// 0 to KeepFDs-1. Values below 3 keep stdio (0, 1, 2); every other
	// descriptor is closed.
	KeepFDs int `json:"keep_fds,omitempty"`
}

// Resolved returns p as Command applies it: every path made symlink-free
// and checked, duplicates removed, and defaults filled in. A caller that
// must make the policy's paths reachable (in a mount namespace of its own,
// say) learns from it which paths the sandboxed program uses.
func (p Policy) Resolved() (Policy, error) { return p.resolved() }

// resolved returns a copy of p with every path made symlink-free and checked,
// duplicates removed, and defaults filled in.
func (p Policy) resolved() (Policy, error) {
	var err error
	q := Policy{AddressSpaceBytes: p.AddressSpaceBytes, OpenFiles: p.OpenFiles, KeepFDs: max(p.KeepFDs, 3)}
	if q.ReadDirs, err = resolvePaths("read dir", p.ReadDirs, true); err != nil {
		return Policy{}, err
	}
	if q.ReadFiles, err = resolvePaths("read file", p.ReadFiles, false); err != nil {
		return Policy{}, err
	}
	if q.ExecFiles, err = resolvePaths("exec file", p.ExecFiles, false); err != nil {
		return Policy{}, err
	}
	if q.WriteDirs, err = resolvePaths("write dir", p.WriteDirs, true); err != nil {
		return Policy{}, err
	}
	if q.WriteFiles, err = resolvePaths("write file", p.WriteFiles, false); err != nil {
		return Policy{}, err
	}
	if q.AddressSpaceBytes == 0 {
		q.AddressSpaceBytes = DefaultAddressSpaceBytes
	}
	if q.OpenFiles == 0 {
		q.OpenFiles = DefaultOpenFiles
	}
	q.Env = slices.Clone(p.Env)
	return q, q.validate()
}

// validate checks what can be checked without touching the file system. The
// launcher runs it again on the policy it decodes.
func (p Policy) validate() error {
	for _, list := range [][]string{p.ReadDirs, p.ReadFiles, p.ExecFiles, p.WriteDirs, p.WriteFiles} {
		for _, path := range list {
			if !filepath.IsAbs(path) || strings.IndexByte(path, 0) >= 0 {
				return fmt.Errorf("sandbox policy: path %q is not absolute", path)
			}
		}
	}
	if len(p.ExecFiles) == 0 {
		return errors.New("sandbox policy: no executable file")
	}
	if p.AddressSpaceBytes <= 0 {
		return fmt.Errorf("sandbox policy: address-space limit %d is not positive", p.AddressSpaceBytes)
	}
	if p.KeepFDs < 3 || p.KeepFDs > maxKeepFDs {
		return fmt.Errorf("sandbox policy: %d descriptors to keep, want 3 to %d", p.KeepFDs, maxKeepFDs)
	}
	if p.OpenFiles < p.KeepFDs || p.OpenFiles > maxOpenFiles {
		return fmt.Errorf("sandbox policy: descriptor limit %d, want %d (the descriptors kept) to %d", p.OpenFiles, p.KeepFDs, maxOpenFiles)
	}
	for _, kv := range p.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.IndexByte(kv, 0) >= 0 {
			return fmt.Errorf("sandbox policy: environment entry %q is not KEY=VALUE", kv)
		}
		if k == ExecFilterEnv {
			return fmt.Errorf("sandbox policy: environment variable %s is the launcher's to set", k)
		}
	}
	return nil
}

// resolvePaths makes paths absolute and symlink-free, checks that each is a
// directory (dir) or not, and drops duplicates.
func resolvePaths(what string, paths []string, dir bool) ([]string, error) {
	var out []string
	for _, path := range paths {
		if !filepath.IsAbs(path) {
			return nil, fmt.Errorf("sandbox policy: %s %q is not absolute", what, path)
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, fmt.Errorf("sandbox policy: %s: %w", what, err)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Errorf("sandbox policy: %s: %w", what, err)
		}
		switch {
		case dir && !fi.IsDir():
			return nil, fmt.Errorf("sandbox policy: %s %s is not a directory", what, path)
		case !dir && fi.IsDir():
			return nil, fmt.Errorf("sandbox policy: %s %s is a directory", what, path)
		}
		if !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out, nil
}

// launcherArg, as argv[1], makes the running binary act as the launcher:
// argv = [exe, launcherArg, policy JSON, program, program args...].
const launcherArg = "__stratbench_sandbox_launcher"

// launcherArgs builds the launcher's argv[1:] for p, which must be resolved.
func launcherArgs(p Policy, path string, args []string) ([]string, error) {
	enc, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode sandbox policy: %w", err)
	}
	for _, a := range append([]string{path}, args...) {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, fmt.Errorf("sandbox: argument %q contains a NUL byte", a)
		}
	}
	return append([]string{launcherArg, string(enc), path}, args...), nil
}

// parseLauncherArgs is the inverse of launcherArgs: it takes the launcher's
// argv[2:] and returns the policy, the program and its argv.
func parseLauncherArgs(args []string) (p Policy, path string, argv []string, err error) {
	if len(args) < 2 {
		return Policy{}, "", nil, errors.New("launcher arguments: want a policy and a program")
	}
	dec := json.NewDecoder(strings.NewReader(args[0]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Policy{}, "", nil, fmt.Errorf("decode sandbox policy: %w", err)
	}
	if dec.More() {
		return Policy{}, "", nil, errors.New("decode sandbox policy: trailing data")
	}
	if err := p.validate(); err != nil {
		return Policy{}, "", nil, err
	}
	path = args[1]
	if !filepath.IsAbs(path) {
		return Policy{}, "", nil, fmt.Errorf("launcher arguments: program %q is not absolute", path)
	}
	// The program sees its own path as argv[0], as a shell would start it;
	// Python finds a virtual environment through it.
	return p, path, append([]string{path}, args[2:]...), nil
}

package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"stratbench/python"
	"stratbench/sandbox"
	"stratbench/supervisor"
)

// startWorker starts the bridge under the supervisor, in the sandbox when
// the job asks for it, and makes it the worker Stop reaches.
func (j *Job) startWorker(ctx context.Context, logs *logSink, meter progressMeter) (*worker, error) {
	l := j.cfg.Limits
	spec := workerSpec(j.cfg)
	warm := j.warm != nil && !j.cfg.Sandbox
	bridge := python.BridgePath(cacheDir(j.cfg))
	if !warm {
		// A run forked from a live template starts no interpreter: the
		// bridge is installed (and its bytecode checked) only when the
		// launcher starts one, a template or a cold fallback (bridgeInstaller).
		program, err := bridgeInstaller(j.cfg)(ctx)
		if err != nil {
			return nil, err
		}
		spec.Args = python.BridgeArgs(program, j.cfg.Strategy)
	}
	spec.Limits.OutputBytes = l.LogBytes
	// Each file a process of the tree writes is capped (a write past it
	// fails with EFBIG; CPython ignores SIGXFSZ, so Python code gets
	// OSError "File too large"): the supervisor's init sets the limit,
	// soft and hard, before the interpreter starts.
	spec.FileSizeBytes = l.ArtifactFileBytes
	spec.StateFile = filepath.Join(j.dir, procsFile)
	spec.Output = logs.write
	spec.BindMounts = j.cfg.BindMounts
	if j.cfg.Sandbox {
		if err := j.sandbox(&spec, bridge); err != nil {
			return nil, err
		}
	}
	j.bridge = bridge
	sp := spawn{spec: spec, limits: l, host: j.cfg.Host, meter: meter, lastStderr: logs.lastStderr, sandboxed: j.cfg.Sandbox,
		stack: logs.stack, debug: j.cfg.Debug}
	if warm {
		sp.fork = func(ctx context.Context, spec supervisor.Spec) (*supervisor.Process, error) {
			return j.warm.start(ctx, j.cfg.Host, bridgeInstaller(j.cfg), spec)
		}
	}
	w, err := startWorker(ctx, sp)
	if errors.Is(err, supervisor.ErrPrivateTmpUnavailable) {
		// The sandbox's /tmp needs namespaces; it never runs without.
		return nil, &UsageError{fmt.Errorf("sandbox unavailable, refusing to run: %w", privateTmpReason(err))}
	}
	if err != nil {
		return nil, err
	}
	j.setWorker(w)
	return w, nil
}

// bridgeInstaller returns what installs the bridge for cfg's jobs
// (python.InstallBridge; its path is python.BridgePath, which tracebacks
// name and whose folder the sandbox opens) and returns the file the
// interpreter runs: the bridge's bytecode for cfg's interpreter
// (python.CompileBridge), compiled on the first start with that
// interpreter, where it can be had; else the source. A cold start calls
// it at once, a warmLauncher only when it starts an interpreter.
func bridgeInstaller(cfg Config) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		source, err := python.InstallBridge(cacheDir(cfg))
		if err != nil {
			return "", err
		}
		py := cfg.Python
		if py.BytecodeTag == "" || py.exe != (statSign{}) && signOf(os.Stat(py.Executable)) != py.exe {
			// No bytecode, or an interpreter replaced since it was probed
			// (a workbench runs for hours): the source runs on any.
			return source, nil
		}
		if pyc, err := python.CompileBridge(ctx, source, py.Executable, py.BytecodeTag); err == nil {
			return pyc, nil
		}
		return source, nil
	}
}

// workerSpec is what every worker of cfg is started with, a job's (cold,
// or forked from a template) and a Pool's template alike: the interpreter,
// its environment and folder, the tree's memory and process limits.
func workerSpec(cfg Config) supervisor.Spec {
	return supervisor.Spec{
		Path:        cfg.Python.Executable,
		Env:         python.WorkerEnv(workerEnv(cfg.Env)),
		Dir:         filepath.Dir(cfg.Strategy),
		Limits:      supervisor.Limits{MemoryBytes: cfg.Limits.MemoryBytes, Processes: cfg.Limits.Processes, Tasks: cfg.Limits.Tasks},
		DevShmBytes: cfg.Limits.DevShmBytes,
	}
}

// cacheDir is where the bridge is installed: Config.CacheDir, else
// DefaultCacheDir.
func cacheDir(cfg Config) string {
	if cfg.CacheDir != "" {
		return cfg.CacheDir
	}
	return DefaultCacheDir(cfg.Home)
}

// sandboxTmp is a sandboxed worker's temporary folder: a private tmpfs
// (supervisor.Spec.PrivateTmpBytes) mounted over /tmp in the tree's mount
// namespace, gone with the tree, its usage counted as the tree's memory.
// Writing past its size fails with ENOSPC inside the strategy.
const sandboxTmp = "/tmp"

// workerEnv is the job's extra environment plus PYTHONFAULTHANDLER, which
// makes the interpreter write its stack on SIGABRT (and on a fatal signal
// of its own, a segfault in an extension): a worker that runs past a time
// limit gets SIGABRT just before the kill (stack.go).
func workerEnv(env map[string]string) map[string]string {
	out := map[string]string{"PYTHONFAULTHANDLER": "1"}
	maps.Copy(out, env)
	return out
}

// sandbox wraps spec in the sandbox launcher: the worker may read the
// interpreter's folders, the strategy's folder and the bridge, and write only
// the artifacts folder, which is a tmpfs of the artifacts' cap until the
// tree ends (copied into the job folder then), and its private /tmp. The host's /tmp is hidden from
// it: the paths of the policy that lie there are kept visible at the same
// place, read-only unless the policy writes them. Its environment is
// python.SandboxEnv's; it keeps stdio and the protocol's descriptors only.
func (j *Job) sandbox(spec *supervisor.Spec, bridge string) error {
	if err := sandbox.Check(); err != nil {
		return &UsageError{fmt.Errorf("refusing to run: %w", err)}
	}
	py := j.cfg.Python
	pol, err := sandbox.InterpreterPolicy(py.Executable, py.Paths)
	if err != nil {
		return &UsageError{fmt.Errorf("sandbox: %w", err)}
	}
	pol.ReadDirs = append(pol.ReadDirs, filepath.Dir(j.cfg.Strategy), filepath.Dir(bridge))
	if py.VenvConfig != "" {
		pol.ReadFiles = append(pol.ReadFiles, py.VenvConfig)
	}
	pol.WriteDirs = append(pol.WriteDirs, filepath.Join(j.dir, "artifacts"), sandboxTmp)
	extra := map[string]string{"TMPDIR": sandboxTmp, "HOME": sandboxTmp}
	maps.Copy(extra, workerEnv(j.cfg.Env))
	pol.Env = python.SandboxEnv(extra)
	pol.KeepFDs = python.FDCount
	path, args, err := sandbox.Command(pol, spec.Path, spec.Args)
	if err != nil {
		return &UsageError{fmt.Errorf("sandbox: %w", err)}
	}
	kept, err := keptUnderTmp(pol, spec.Path)
	if err != nil {
		return &UsageError{fmt.Errorf("sandbox: %w", err)}
	}
	spec.Path, spec.Args, spec.Env = path, args, pol.Env
	spec.PrivateTmpBytes = j.cfg.Limits.SandboxTmpBytes
	spec.TmpMounts = kept
	// The kernel caps the strategy's files, whatever the rate of its
	// writes: ENOSPC at the cap, counted as the tree's memory meanwhile.
	artifacts, err := filepath.EvalSymlinks(filepath.Join(j.dir, "artifacts"))
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	spec.CappedDirs = []supervisor.CappedDir{{Path: artifacts, Bytes: j.cfg.Limits.ArtifactsBytes}}
	return nil
}

// keptUnderTmp returns the paths of pol (and the program) that lie under the
// host's /tmp, which the private /tmp hides: a strategy, a job folder or an
// interpreter there. A folder the sandbox only reads is kept read-only, so
// that the write rule on the private /tmp does not reach it.
func keptUnderTmp(pol sandbox.Policy, program string) ([]supervisor.TmpMount, error) {
	pol, err := pol.Resolved()
	if err != nil {
		return nil, err
	}
	var kept []supervisor.TmpMount
	add := func(path string, writable bool) error {
		if path == sandboxTmp {
			if writable {
				return nil // the private /tmp itself
			}
			return fmt.Errorf("%s, private in the sandbox, would be a folder it reads (the strategy's or the interpreter's): move the strategy into a folder of its own", sandboxTmp)
		}
		if strings.HasPrefix(path, sandboxTmp+"/") {
			kept = append(kept, supervisor.TmpMount{Path: path, Writable: writable})
		}
		return nil
	}
	// The program is executed by the path given (a virtual environment's
	// link); its folder is kept so that the link and pyvenv.cfg beside it
	// resolve as on the host.
	lists := []struct {
		paths    []string
		writable bool
	}{
		{pol.ReadDirs, false}, {pol.ReadFiles, false}, {pol.ExecFiles, false},
		{[]string{filepath.Dir(program)}, false}, {pol.WriteDirs, true}, {pol.WriteFiles, true},
	}
	for _, l := range lists {
		for _, p := range l.paths {
			if err := add(p, l.writable); err != nil {
				return nil, err
			}
		}
	}
	return kept, nil
}

// privateTmpReason returns the error of err's chain that says why there is
// no private /tmp, without the layers that say what was being started.
func privateTmpReason(err error) error {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.HasPrefix(e.Error(), supervisor.ErrPrivateTmpUnavailable.Error()) {
			return e
		}
	}
	return err
}

// pythonParams marks float params as floats for the worker's JSON decoder
// (10.0, not 10).
func pythonParams(params map[string]any) map[string]any {
	out := make(map[string]any, len(params))
	for k, v := range params {
		if f, ok := v.(float64); ok {
			v = python.Float(f)
		}
		out[k] = v
	}
	return out
}

package engine

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"stratbench/python"
	"stratbench/sandbox"
	"stratbench/supervisor"
)

// startWorker starts the bridge under the supervisor, in the sandbox when
// the job asks for it, and makes it the worker Stop reaches.
func (j *Job) startWorker(ctx context.Context, logs *logSink, meter progressMeter) (*worker, error) {
	cacheDir := j.cfg.CacheDir
	if cacheDir == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			cacheDir = filepath.Join(dir, "stratbench")
		} else {
			cacheDir = filepath.Join(j.cfg.Home, "cache")
		}
	}
	bridge, err := python.InstallBridge(cacheDir)
	if err != nil {
		return nil, err
	}
	l := j.cfg.Limits
	spec := supervisor.Spec{
		Path: j.cfg.Python.Executable,
		Args: python.BridgeArgs(bridge, j.cfg.Strategy),
		Env:  python.WorkerEnv(workerEnv(j.cfg.Env)),
		Dir:  filepath.Dir(j.cfg.Strategy),
		Limits: supervisor.Limits{
			MemoryBytes: l.MemoryBytes,
			Processes:   l.Processes,
			OutputBytes: l.LogBytes,
		},
		// Each file a process of the tree writes is capped (a write past
		// it fails with EFBIG; CPython ignores SIGXFSZ, so Python code gets
		// OSError "File too large"): the supervisor's init sets the limit,
		// soft and hard, before the interpreter starts.
		FileSizeBytes: l.ArtifactFileBytes,
		StateFile:     filepath.Join(j.dir, "procs.json"),
		Output:        logs.write,
	}
	if j.cfg.Sandbox {
		if err := j.sandbox(&spec, bridge); err != nil {
			return nil, err
		}
	}
	j.bridge = bridge
	sp := spawn{spec: spec, limits: l, host: j.cfg.Host, meter: meter, lastStderr: logs.lastStderr, sandboxed: j.cfg.Sandbox,
		stack: logs.stack}
	if j.warm != nil && !j.cfg.Sandbox {
		sp.fork = func(ctx context.Context, spec supervisor.Spec) (*supervisor.Process, error) {
			return j.warm.start(ctx, j.cfg.Host, bridge, spec)
		}
	}
	w, err := startWorker(ctx, sp)
	if err != nil {
		return nil, err
	}
	j.setWorker(w)
	return w, nil
}

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
// the artifacts folder and a private temporary folder (removed with the job's
// worker). Its environment is python.SandboxEnv's; it keeps stdio and the
// protocol's descriptors only.
func (j *Job) sandbox(spec *supervisor.Spec, bridge string) error {
	if err := sandbox.Check(); err != nil {
		return &UsageError{fmt.Errorf("refusing to run: %w", err)}
	}
	py := j.cfg.Python
	pol, err := sandbox.InterpreterPolicy(py.Executable, py.Paths)
	if err != nil {
		return &UsageError{fmt.Errorf("sandbox: %w", err)}
	}
	tmp := filepath.Join(j.dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	pol.ReadDirs = append(pol.ReadDirs, filepath.Dir(j.cfg.Strategy), filepath.Dir(bridge))
	if py.VenvConfig != "" {
		pol.ReadFiles = append(pol.ReadFiles, py.VenvConfig)
	}
	pol.WriteDirs = append(pol.WriteDirs, filepath.Join(j.dir, "artifacts"), tmp)
	extra := map[string]string{"TMPDIR": tmp, "HOME": tmp}
	maps.Copy(extra, workerEnv(j.cfg.Env))
	pol.Env = python.SandboxEnv(extra)
	pol.KeepFDs = python.FDCount
	path, args, err := sandbox.Command(pol, spec.Path, spec.Args)
	if err != nil {
		return &UsageError{fmt.Errorf("sandbox: %w", err)}
	}
	spec.Path, spec.Args, spec.Env = path, args, pol.Env
	return nil
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

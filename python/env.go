package python

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// The worker's environment policy: what the Python worker's environment
// holds, outside and inside the sandbox. The sandbox itself knows nothing
// of Python; it runs the program with the environment it is given.

// inheritedEnv lists the variables of stratbench's environment that an
// unsandboxed worker gets: what Python, its libraries and the user's
// toolchain need (locale, time zone, the virtual environment, certificate
// stores). Everything else (tokens, credentials) stays out.
var inheritedEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
	"VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "SSL_CERT_FILE", "SSL_CERT_DIR", "MPLBACKEND", "MPLCONFIGDIR"}

// Plotting is headless everywhere: a worker has no display (and, sandboxed,
// no socket to reach one), and its stdin is /dev/null. matplotlib's Agg
// backend renders to files only, so plt.savefig works and plt.show()
// returns at once (with a warning that the figure cannot be shown). A
// backend the user chose stays: MPLBACKEND in their environment (outside
// the sandbox), or matplotlib.use() in the strategy, which wins over the
// variable.
const (
	mplBackendEnv = "MPLBACKEND"
	mplConfigEnv  = "MPLCONFIGDIR"
	mplBackend    = "Agg"
)

// fixedEnv is set for every worker, sandboxed or not. A fixed hash seed
// makes set and dict-of-str iteration order, and so the run, reproducible;
// no bytecode is written into the user's folder; output is UTF-8 whatever
// the locale.
var fixedEnv = map[string]string{"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8"}

// threadEnv are the variables that size the thread pools of BLAS, OpenMP
// and numexpr (numpy's, pandas'). Every worker gets each one as 1 unless
// the user's environment sets it (outside the sandbox): the same in --ci,
// the workbench and every run of a sweep, whatever its --jobs. A pool's
// size changes the last bits of a long dot product (OpenBLAS splits it
// over its threads), and so can change a strategy's orders: a sweep's run
// that set another count than its --ci run traded differently under the
// same fingerprint. One thread each also keeps a sweep's runs from
// oversubscribing the CPUs, and the sandbox forbids threads (OpenBLAS
// fails to import when it cannot start its pool).
var threadEnv = []string{"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"}

// sandboxBaseEnv is a sandboxed worker's environment before fixedEnv: it
// inherits nothing. No user site-packages (the sandbox does not grant the
// user's home); threadEnv's variables at 1 (env_test.go checks the list).
var sandboxBaseEnv = map[string]string{
	"PATH":                 "/usr/bin:/bin",
	mplBackendEnv:          mplBackend,
	"LANG":                 "C.UTF-8",
	"PYTHONNOUSERSITE":     "1",
	"OPENBLAS_NUM_THREADS": "1",
	"OMP_NUM_THREADS":      "1",
	"MKL_NUM_THREADS":      "1",
	"NUMEXPR_NUM_THREADS":  "1",
}

// WorkerEnv returns the environment of an unsandboxed worker, sorted by key:
// threadEnv's at 1, the inherited variables (threadEnv's too) that are
// set, fixedEnv, then extra (which wins),
// with MPLBACKEND=Agg when none of them sets a backend. matplotlib keeps the
// user's own configuration folder and font cache (MPLCONFIGDIR when set,
// else its default under HOME): a fresh folder per run would rebuild the
// font cache, about a second, at every run.
func WorkerEnv(extra map[string]string) []string {
	env := make(map[string]string)
	for _, k := range threadEnv {
		env[k] = "1"
	}
	for _, k := range slices.Concat(inheritedEnv, threadEnv) {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	maps.Copy(env, fixedEnv)
	maps.Copy(env, extra)
	if _, ok := env[mplBackendEnv]; !ok {
		env[mplBackendEnv] = mplBackend
	}
	return sortedEnv(env)
}

// SandboxEnv returns the environment of a sandboxed worker, sorted by key:
// sandboxBaseEnv, fixedEnv, then extra (which wins). Nothing of
// stratbench's own environment is in it. Plotting uses the Agg backend, and
// matplotlib's configuration folder and font cache go into TMPDIR (the
// job's private temporary folder, which extra names) unless extra names
// one: nothing else is writable there, and nothing is shared between runs.
func SandboxEnv(extra map[string]string) []string {
	env := maps.Clone(sandboxBaseEnv)
	maps.Copy(env, fixedEnv)
	maps.Copy(env, extra)
	if _, ok := env[mplConfigEnv]; !ok {
		if tmp, ok := env["TMPDIR"]; ok {
			env[mplConfigEnv] = filepath.Join(tmp, "matplotlib")
		}
	}
	return sortedEnv(env)
}

// sortedEnv returns env as KEY=VALUE entries sorted by key.
func sortedEnv(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

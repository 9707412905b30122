// Package python is everything of stratbench that is about Python: the
// bridge that runs in the worker process (bridge.py, embedded), the Go codec
// of the framed protocol between host and worker (protocol.go, batch.go,
// messages.go), the shared state page, the worker's descriptor numbers
// (fds.go) and environment policy (env.go), and the bundled example
// strategy. The engine, the supervisor and the sandbox know none of it.
package python

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"stratbench/internal/atomicfile"
)

//go:embed bridge.py
var bridgeSource []byte

// bridgeSum is the SHA-256 of bridgeSource, computed once, when first
// needed: a sweep asks for the bridge's path at every run, and the
// executable's other roles (a tree's init) never.
var bridgeSum = sync.OnceValue(func() [sha256.Size]byte { return sha256.Sum256(bridgeSource) })

//go:embed example/strategy.py
var exampleStrategy []byte

// ExampleStrategy returns the bundled example strategy's source.
func ExampleStrategy() []byte { return append([]byte(nil), exampleStrategy...) }

// InstallBridge writes the bridge into a folder of cacheDir named by its
// content hash (so that two stratbench versions never share one) and returns
// the path of bridge.py. An existing, intact copy is reused.
func InstallBridge(cacheDir string) (string, error) {
	sum := bridgeSum()
	path := BridgePath(cacheDir)
	dir := filepath.Dir(path)
	if have, err := os.ReadFile(path); err == nil && sha256.Sum256(have) == sum {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("install bridge: %w", err)
	}
	// Volatile: a copy is checked against its hash before it is used.
	if err := atomicfile.WriteFile(path, bridgeSource, 0o644, atomicfile.Volatile); err != nil {
		return "", fmt.Errorf("install bridge: %w", err)
	}
	return path, nil
}

// BridgePath is where InstallBridge installs the bridge in cacheDir, found
// without reading or writing anything: a warm run, forked from a template
// that runs the bridge already, only needs its name (its tracebacks name
// it).
func BridgePath(cacheDir string) string {
	sum := bridgeSum()
	return filepath.Join(cacheDir, "bridge-"+hex.EncodeToString(sum[:8]), "stratbench_bridge.py")
}

// compileScript compiles the bridge at argv[1] to bytecode at argv[2]. The
// code names the source (dfile), as the source's own would, so that
// tracebacks and the host's stack filters see stratbench_bridge.py; the
// header holds the source's hash, not its time (UNCHECKED_HASH: nothing
// checks it, the file is run directly), so that the same source compiles
// to the same bytes.
const compileScript = `import py_compile, sys
py_compile.compile(sys.argv[1], cfile=sys.argv[2], dfile=sys.argv[1], doraise=True,
    invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
`

// compileTimeout bounds compiling the bridge: a few tens of milliseconds.
const compileTimeout = 30 * time.Second

// bytecodeTag is what a bytecode tag may be, as it becomes part of a file
// name: cpython-311-a70d0d0a; at most 64 bytes, checked apart (a bounded
// repetition compiles to that many copies at every start of stratbench).
var bytecodeTag = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// CompileBridge returns the bridge installed at source (InstallBridge)
// compiled to bytecode for the interpreter at python, whose bytecode tag
// is tag (the implementation's cache tag and magic number): an interpreter
// runs a .pyc file given on its command line as it runs the source, and
// so skips compiling the bridge's 65 kB at every start (15 ms of the 40 a
// worker takes to start on the 2-vCPU VM).
//
// The bytecode is compiled once per tag, by python in isolated mode
// without site (nothing of the user's is imported), beside source. Beside
// it goes a record of what was compiled: the SHA-256 of the bytecode, and
// of the compile script and the source's path (which the code names: the
// host's stack filter compares frames with it). Every call checks the file
// and the record, as InstallBridge checks the source against the embedded
// hash, and compiles again when either differs (the file cut short or
// overwritten, written by two stratbench at once, compiled by another
// stratbench or for the folder reached by another path). The cache folder
// is the host's: a sandboxed worker cannot write it. On an error the
// caller runs the source.
func CompileBridge(ctx context.Context, source, python, tag string) (string, error) {
	if len(tag) > 64 || !bytecodeTag.MatchString(tag) {
		return "", fmt.Errorf("compile bridge: bytecode tag %q", tag)
	}
	pyc := strings.TrimSuffix(source, ".py") + "." + tag + ".pyc"
	recordFile := pyc + ".sha256"
	how := hexSum([]byte(compileScript + "\x00" + source))
	if have, err := os.ReadFile(pyc); err == nil {
		if rec, err := os.ReadFile(recordFile); err == nil && string(rec) == compileRecord(have, how) {
			return pyc, nil
		}
	}
	// A folder of its own: py_compile writes through a temporary file of
	// its own beside its target, which a compile cancelled or killed
	// leaves behind.
	tmp, err := os.MkdirTemp(filepath.Dir(pyc), ".compile-*")
	if err != nil {
		return "", fmt.Errorf("compile bridge: %w", err)
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, filepath.Base(pyc))
	ctx, cancel := context.WithTimeout(ctx, compileTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-I", "-S", "-B", "-c", compileScript, source, out)
	cmd.Dir = "/"
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("compile bridge with %s: %w: %s", python, err, bytes.TrimSpace(msg))
	}
	code, err := os.ReadFile(out)
	if err != nil {
		return "", fmt.Errorf("compile bridge with %s: %w", python, err)
	}
	if len(code) == 0 {
		return "", fmt.Errorf("compile bridge with %s: it wrote no bytecode", python)
	}
	if err := os.Rename(out, pyc); err != nil {
		return "", fmt.Errorf("compile bridge: %w", err)
	}
	if err := atomicfile.WriteFile(recordFile, []byte(compileRecord(code, how)), 0o644, atomicfile.Volatile); err != nil {
		return "", fmt.Errorf("compile bridge: %w", err)
	}
	return pyc, nil
}

// compileRecord is what CompileBridge writes beside the bytecode code it
// compiled the way how names (the hash of its compile script and source
// path).
func compileRecord(code []byte, how string) string {
	return hexSum(code) + " " + how + "\n"
}

// hexSum is the hex SHA-256 of b.
func hexSum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

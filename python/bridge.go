// Package python is everything of stratbench that is about Python: the
// bridge that runs in the worker process (bridge.py, embedded), the Go codec
// of the framed protocol between host and worker (protocol.go, batch.go,
// messages.go), the shared state page, the worker's descriptor numbers
// (fds.go) and environment policy (env.go), and the bundled example
// strategy. The engine, the supervisor and the sandbox know none of it.
package python

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"stratbench/internal/atomicfile"
)

//go:embed bridge.py
var bridgeSource []byte

//go:embed example/strategy.py
var exampleStrategy []byte

// ExampleStrategy returns the bundled example strategy's source.
func ExampleStrategy() []byte { return append([]byte(nil), exampleStrategy...) }

// InstallBridge writes the bridge into a folder of cacheDir named by its
// content hash (so that two stratbench versions never share one) and returns
// the path of bridge.py. An existing, intact copy is reused.
func InstallBridge(cacheDir string) (string, error) {
	sum := sha256.Sum256(bridgeSource)
	dir := filepath.Join(cacheDir, "bridge-"+hex.EncodeToString(sum[:8]))
	path := filepath.Join(dir, "stratbench_bridge.py")
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

//go:build linux && amd64

package sandbox

import (
	"os/exec"
	"testing"
)

// BenchmarkStart measures a start of python -I -c pass, directly and
// through the launcher; the difference is the launcher's overhead.
func BenchmarkStart(b *testing.B) {
	py, p := pythonPolicy(b, nil, nil, nil)
	args := []string{"-I", "-c", "pass"}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(py, args...)
			cmd.Env = p.Env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
	b.Run("sandboxed", func(b *testing.B) {
		requireSandbox(b)
		path, execArgs, err := Command(p, py, args)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			cmd := exec.Command(path, execArgs...)
			cmd.Env = p.Env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
}

package components

import (
	"os"
	"os/exec"
)

// Opener is the command that opens an artifact or a report from a
// program: $STRATBENCH_OPEN, else xdg-open when it is installed, else ""
// (none).
func Opener() string {
	if o := os.Getenv("STRATBENCH_OPEN"); o != "" {
		return o
	}
	if path, err := exec.LookPath("xdg-open"); err == nil {
		return path
	}
	return ""
}

package tearsheet

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// OpenInBrowser hands the report at path to the first program of $BROWSER
// (a list separated by colons) that can be started, else to xdg-open;
// never through a shell. The program is left running.
func OpenInBrowser(path string) error {
	var tried []string
	candidates := append(strings.Split(os.Getenv("BROWSER"), ":"), "xdg-open")
	for _, c := range candidates {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		cmd := exec.Command(c, path)
		if err := cmd.Start(); err != nil {
			tried = append(tried, c)
			continue
		}
		return cmd.Process.Release()
	}
	return fmt.Errorf("open %s: no browser could be started (tried %s); set $BROWSER", path, strings.Join(tried, ", "))
}

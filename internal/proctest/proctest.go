// Package proctest finds the processes of a test's sweeps and pools in
// /proc, for tests that act on them from outside (stop or kill a warm
// template) the way a user or the kernel would.
package proctest

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// WarmTemplates returns the live warm templates among the processes that
// match accepts (given each one's pid and command line): those that run
// the bridge with --template one PID namespace below the caller's, in
// their own tree's namespace. The runs forked from a template carry the
// same command line one namespace further down, and a zombie's command
// line is empty, so neither is listed.
func WarmTemplates(match func(pid int, cmdline []byte) bool) []int {
	ours := namespaceDepth("self")
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmdline, []byte("\x00--template\x00")) || !match(pid, cmdline) {
			continue
		}
		if ours > 0 && namespaceDepth(e.Name()) == ours+1 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// namespaceDepth is how many PID namespaces the process (a /proc entry's
// name) lies in, from the NSpid line of its status; 0 when unreadable.
func namespaceDepth(pid string) int {
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			return len(strings.Fields(rest))
		}
	}
	return 0
}

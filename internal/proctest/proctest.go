// Package proctest finds the processes of this machine in /proc, for tests
// that check what was left running (a test's marked processes, a Ray
// cluster's) or act on a process from outside (stop or kill a warm
// template) the way a user or the kernel would.
package proctest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Proc is a process as /proc showed it when it was listed. What else /proc
// holds of it is read when asked: by then it may have ended, and reads as
// nothing.
type Proc struct {
	PID     int
	Args    []string // its command line (empty for a zombie)
	Cmdline string   // Args joined with spaces
}

// Env returns its environment, as KEY=value strings.
func (p Proc) Env() []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/environ")
	if err != nil {
		return nil
	}
	var env []string
	for _, kv := range bytes.Split(b, []byte{0}) {
		if len(kv) > 0 {
			env = append(env, string(kv))
		}
	}
	return env
}

// HasEnv says whether its environment holds kv (KEY=value) exactly.
func (p Proc) HasEnv(kv string) bool { return slices.Contains(p.Env(), kv) }

// Files returns its working directory and the paths its descriptors name.
func (p Proc) Files() []string {
	dir := "/proc/" + strconv.Itoa(p.PID)
	var files []string
	if cwd, err := os.Readlink(dir + "/cwd"); err == nil {
		files = append(files, cwd)
	}
	fds, _ := os.ReadDir(dir + "/fd")
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, "fd", fd.Name())); err == nil && strings.HasPrefix(target, "/") {
			files = append(files, strings.TrimSuffix(target, " (deleted)"))
		}
	}
	return files
}

// Processes lists the processes of this machine that match (this process
// excepted). Processes that vanish while being read, or that cannot be
// read, are left out.
func Processes(match func(Proc) bool) ([]Proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("proctest: listing processes: %w", err)
	}
	self := os.Getpid()
	var out []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		var args []string
		for _, a := range bytes.Split(bytes.TrimSuffix(cmd, []byte{0}), []byte{0}) {
			args = append(args, string(a))
		}
		if len(cmd) == 0 {
			args = nil
		}
		p := Proc{PID: pid, Args: args, Cmdline: strings.TrimSpace(strings.Join(args, " "))}
		if match(p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// PIDs returns the pids of the processes that match (see Processes).
func PIDs(match func(Proc) bool) []int {
	ps, _ := Processes(match)
	pids := make([]int, len(ps))
	for i, p := range ps {
		pids[i] = p.PID
	}
	return pids
}

// WarmTemplates returns the pids of the live warm templates among the
// processes that match: those that run the bridge with --template one PID
// namespace below this process, in their own tree's namespace. The runs
// forked from a template carry the same command line one namespace further
// down, and a zombie's command line is empty, so neither is listed; a
// fork's intermediate process is, for the instant it lives.
func WarmTemplates(match func(Proc) bool) []int {
	ours := namespaceDepth("self")
	return PIDs(func(p Proc) bool {
		return slices.Contains(p.Args, "--template") && match(p) && ours > 0 && namespaceDepth(strconv.Itoa(p.PID)) == ours+1
	})
}

// Status returns the number that the key line of the process's
// /proc/PID/status starts with (VmHWM, in KiB; Threads; PPid); 0 when it
// cannot be read.
func Status(pid int, key string) int64 {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
			return 0
		}
	}
	return 0
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

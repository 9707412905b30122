package raytest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Proc is a process as /proc shows it.
type Proc struct {
	PID     int
	Cmdline string
	env     []string
	files   []string // the targets of its descriptors, and its working directory
}

func (p Proc) hasEnv(kv string) bool {
	for _, e := range p.env {
		if e == kv {
			return true
		}
	}
	return false
}

// belongsTo says whether the process is one of the cluster's: tagged, or
// naming the cluster's folder in its command line or open files.
func (p Proc) belongsTo(tag, dir string) bool {
	if p.hasEnv(ClusterTagEnv + "=" + tag) {
		return true
	}
	if strings.Contains(p.Cmdline, dir) {
		return true
	}
	for _, f := range p.files {
		if f == dir || strings.HasPrefix(f, dir+"/") {
			return true
		}
	}
	return false
}

// Processes lists the processes of this machine that match (this process
// excepted). Processes that vanish while being read, or that cannot be
// read, are left out.
func Processes(match func(Proc) bool) ([]Proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("raytest: listing processes: %w", err)
	}
	self := os.Getpid()
	var out []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		p, ok := readProc(pid)
		if ok && match(p) {
			out = append(out, p)
		}
	}
	return out, nil
}

func readProc(pid int) (Proc, bool) {
	dir := "/proc/" + strconv.Itoa(pid)
	cmd, err := os.ReadFile(dir + "/cmdline")
	if err != nil {
		return Proc{}, false
	}
	p := Proc{PID: pid, Cmdline: strings.TrimSpace(string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))}
	if env, err := os.ReadFile(dir + "/environ"); err == nil {
		for _, kv := range bytes.Split(env, []byte{0}) {
			if len(kv) > 0 {
				p.env = append(p.env, string(kv))
			}
		}
	}
	if cwd, err := os.Readlink(dir + "/cwd"); err == nil {
		p.files = append(p.files, cwd)
	}
	fds, _ := os.ReadDir(dir + "/fd")
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, "fd", fd.Name())); err == nil && strings.HasPrefix(target, "/") {
			p.files = append(p.files, strings.TrimSuffix(target, " (deleted)"))
		}
	}
	return p, true
}

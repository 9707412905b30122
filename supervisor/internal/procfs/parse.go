package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// Parsers of the /proc files the Reader reads: pure functions of the bytes,
// fuzzed.

// Stat is the part of /proc/PID/stat the supervisor uses.
type Stat struct {
	PID       int
	Comm      string // the executable's name, at most 15 bytes; changes on exec
	State     byte   // R, S, D, T, t, Z, X, ...
	PPID      int
	PGID      int
	SID       int
	Threads   int
	StartTime uint64 // clock ticks after boot; (PID, StartTime) names one process
	RSSPages  int64
}

// Zombie reports whether the process has exited and only waits to be reaped.
func (s Stat) Zombie() bool { return s.State == 'Z' || s.State == 'X' }

// ParseStat parses the contents of /proc/PID/stat.
func ParseStat(b []byte) (Stat, error) {
	// comm may hold spaces and parentheses, so it ends at the last ')'.
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return Stat{}, fmt.Errorf("stat %.40q: no (comm)", b)
	}
	var s Stat
	pid, err := atoi(bytes.TrimSpace(b[:open]))
	if err != nil || pid <= 0 {
		return Stat{}, fmt.Errorf("stat %.40q: bad pid", b)
	}
	s.PID = pid
	s.Comm = string(b[open+1 : end])
	rest := b[end+1:]
	// Fields are numbered as in proc_pid_stat(5); field 3 (state) is the first after comm.
	field := 2
	for len(rest) > 0 && field < 24 {
		rest = bytes.TrimLeft(rest, " ")
		i := bytes.IndexAny(rest, " \n")
		if i < 0 {
			i = len(rest)
		}
		tok := rest[:i]
		rest = rest[i:]
		if len(tok) == 0 {
			break
		}
		field++
		switch field {
		case 3:
			if len(tok) != 1 || !isLetter(tok[0]) {
				return Stat{}, fmt.Errorf("stat of %d: state %q", pid, tok)
			}
			s.State = tok[0]
		case 4:
			s.PPID, err = atoi(tok)
		case 5:
			s.PGID, err = atoi(tok)
		case 6:
			s.SID, err = atoi(tok)
		case 20:
			s.Threads, err = atoi(tok)
		case 22:
			s.StartTime, err = strconv.ParseUint(string(tok), 10, 64)
		case 24:
			var rss int
			rss, err = atoi(tok)
			s.RSSPages = int64(rss)
		}
		if err != nil {
			return Stat{}, fmt.Errorf("stat of %d field %d: %w", pid, field, err)
		}
	}
	if field < 24 {
		return Stat{}, fmt.Errorf("stat of %d: %d fields, want at least 24", pid, field)
	}
	return s, nil
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// atoi parses a decimal int (possibly negative, as some stat fields are).
func atoi(b []byte) (int, error) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, fmt.Errorf("bad number %q", b)
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad number %q", b)
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// Status is the part of /proc/PID/status the sampler reads on every tick.
type Status struct {
	Name    string // comm, escaped; changes on exec
	State   byte
	PPID    int
	Threads int
	RSS     int64 // VmRSS in bytes
	Peak    int64 // VmHWM in bytes: peak RSS since start or since the last ResetPeak
}

// Zombie reports whether the process has exited and only waits to be reaped.
func (s Status) Zombie() bool { return s.State == 'Z' || s.State == 'X' }

// ParseStatus parses the contents of /proc/PID/status. A zombie's status has
// no memory lines; RSS and Peak are then zero.
func ParseStatus(b []byte) (Status, error) {
	var s Status
	seen := 0
	for len(b) > 0 && seen < 6 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		key, val, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		switch string(key) {
		case "Name", "State", "PPid", "Threads", "VmHWM", "VmRSS":
			val = bytes.TrimLeft(val, " \t")
		default:
			continue
		}
		var err error
		switch string(key) {
		case "Name":
			s.Name = string(val)
		case "State":
			if len(val) == 0 || !isLetter(val[0]) {
				return Status{}, fmt.Errorf("status: bad state %q", val)
			}
			s.State = val[0]
		case "PPid":
			s.PPID, err = atoi(val)
		case "Threads":
			s.Threads, err = atoi(val)
		case "VmHWM":
			s.Peak, err = parseKB(val)
		case "VmRSS":
			s.RSS, err = parseKB(val)
		}
		if err != nil {
			return Status{}, fmt.Errorf("status line %q: %w", line, err)
		}
		seen++
	}
	if s.State == 0 {
		return Status{}, fmt.Errorf("status: no State line")
	}
	return s, nil
}

// parseKB parses a status size such as "1776 kB" into bytes.
func parseKB(b []byte) (int64, error) {
	num, ok := bytes.CutSuffix(b, []byte(" kB"))
	if !ok {
		return 0, fmt.Errorf("size %q has no kB unit", b)
	}
	kb, err := atoi(bytes.TrimSpace(num))
	if err != nil || kb < 0 {
		return 0, fmt.Errorf("bad size %q", b)
	}
	return int64(kb) << 10, nil
}

// ParsePIDList calls fn for each pid of a space-separated list, the format of
// /proc/PID/task/TID/children.
func ParsePIDList(b []byte, fn func(pid int)) error {
	for len(b) > 0 {
		b = bytes.TrimLeft(b, " \n")
		if len(b) == 0 {
			break
		}
		i := bytes.IndexAny(b, " \n")
		if i < 0 {
			i = len(b)
		}
		pid, err := atoi(b[:i])
		if err != nil || pid <= 0 {
			return fmt.Errorf("pid list %.40q: bad pid %q", b, b[:i])
		}
		fn(pid)
		b = b[i:]
	}
	return nil
}

// ParseNSPIDs appends the pids of the NSpid line of a /proc/PID/status to dst.
func ParseNSPIDs(status []byte, dst []int) ([]int, error) {
	for len(status) > 0 {
		line := status
		if i := bytes.IndexByte(status, '\n'); i >= 0 {
			line, status = status[:i], status[i+1:]
		} else {
			status = nil
		}
		val, ok := bytes.CutPrefix(line, []byte("NSpid:"))
		if !ok {
			continue
		}
		n := len(dst)
		if err := ParsePIDList(bytes.ReplaceAll(val, []byte{'\t'}, []byte{' '}), func(pid int) { dst = append(dst, pid) }); err != nil {
			return dst[:n], fmt.Errorf("status NSpid: %w", err)
		}
		if len(dst) == n {
			return dst, errors.New("status: empty NSpid line")
		}
		return dst, nil
	}
	return dst, errors.New("status: no NSpid line (Linux 4.1 or later has one)")
}

// ParseCaps reads the CapPrm, CapEff and CapAmb lines of a /proc/PID/status.
func ParseCaps(status []byte) (Caps, error) {
	var c Caps
	seen := 0
	for len(status) > 0 && seen < 3 {
		line := status
		if i := bytes.IndexByte(status, '\n'); i >= 0 {
			line, status = status[:i], status[i+1:]
		} else {
			status = nil
		}
		key, val, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var dst *uint64
		switch string(key) {
		case "CapPrm":
			dst = &c.Permitted
		case "CapEff":
			dst = &c.Effective
		case "CapAmb":
			dst = &c.Ambient
		default:
			continue
		}
		v, err := strconv.ParseUint(string(bytes.TrimSpace(val)), 16, 64)
		if err != nil {
			return Caps{}, fmt.Errorf("status line %q: %w", line, err)
		}
		*dst = v
		seen++
	}
	if seen < 3 {
		return Caps{}, errors.New("status: no CapPrm, CapEff and CapAmb lines")
	}
	return c, nil
}

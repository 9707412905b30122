// Package procfs reads the few /proc files the supervisor samples many times a
// second. It uses raw system calls and one reused buffer per Reader, because a
// general-purpose library (gopsutil) costs tens of milliseconds per sample.
package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

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

// Gone reports whether err says that the process no longer exists.
func Gone(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH)
}

// A Reader reads /proc files into one buffer it reuses. It is not safe for
// concurrent use; each sampling goroutine owns one.
type Reader struct {
	buf   []byte
	dents []byte
	tids  []int
}

// NewReader returns a Reader.
func NewReader() *Reader {
	return &Reader{buf: make([]byte, 8<<10), dents: make([]byte, 8<<10)}
}

// maxFile bounds what a Reader holds of one file (a children list of a
// process with thousands of children still fits).
const maxFile = 1 << 20

// readFD reads fd from offset 0 to its end into r.buf; the result is valid
// until the next read. /proc files regenerate their contents on a read at
// offset 0, so a held fd can be read again and again.
func (r *Reader) readFD(fd int) ([]byte, error) {
	n := 0
	for {
		if n == len(r.buf) {
			if err := r.grow(); err != nil {
				return nil, err
			}
		}
		m, err := unix.Pread(fd, r.buf[n:], int64(n))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, err
		case m == 0:
			return r.buf[:n], nil
		}
		n += m
	}
}

// readRecord reads a /proc file that the kernel generates as one record
// (stat, status): a single read returns all of it when the buffer is large
// enough. That saves the read that would find the end, which for these
// files generates the whole text again.
func (r *Reader) readRecord(fd int) ([]byte, error) {
	for {
		n, err := unix.Pread(fd, r.buf, 0)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, err
		case n < len(r.buf):
			return r.buf[:n], nil
		}
		if err := r.grow(); err != nil {
			return nil, err
		}
	}
}

func (r *Reader) grow() error {
	if len(r.buf) >= maxFile {
		return fmt.Errorf("longer than %d bytes", maxFile)
	}
	r.buf = append(r.buf, make([]byte, len(r.buf))...)
	return nil
}

// readAt reads the file name under the directory fd dir (unix.AT_FDCWD for
// an absolute name).
func (r *Reader) readAt(dir int, name string) ([]byte, error) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	return r.readFD(fd)
}

// Stat reads /proc/PID/stat.
func (r *Reader) Stat(pid int) (Stat, error) {
	b, err := r.readAt(unix.AT_FDCWD, "/proc/"+strconv.Itoa(pid)+"/stat")
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(b)
}

// PIDs appends the pid of every process on the system to dst.
func (r *Reader) PIDs(dst []int) ([]int, error) {
	fd, err := unix.Open("/proc", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return dst, err
	}
	defer unix.Close(fd)
	return r.listNumeric(fd, dst)
}

// listNumeric appends the numeric entries of the directory fd to dst.
func (r *Reader) listNumeric(fd int, dst []int) ([]int, error) {
	for {
		n, err := unix.Getdents(fd, r.dents)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return dst, err
		}
		if n == 0 {
			return dst, nil
		}
		dst = appendNumericDirents(r.dents[:n], dst)
	}
}

// appendNumericDirents appends the names of linux_dirent64 records that are
// positive decimal numbers.
func appendNumericDirents(b []byte, dst []int) []int {
	const nameOff = 19 // ino (8) + off (8) + reclen (2) + type (1)
	for len(b) >= nameOff {
		reclen := int(b[16]) | int(b[17])<<8
		if reclen < nameOff || reclen > len(b) {
			break
		}
		name := b[nameOff:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if len(name) > 0 && name[0] != '-' {
			if n, err := atoi(name); err == nil && n > 0 {
				dst = append(dst, n)
			}
		}
		b = b[reclen:]
	}
	return dst
}

// Getenv returns the value of key in the initial environment of pid
// (/proc/PID/environ), read in chunks so that a huge environment costs no
// memory. A zombie's environment is empty.
func (r *Reader) Getenv(pid int, key string) (string, bool, error) {
	return r.getenvAt(unix.AT_FDCWD, "/proc/"+strconv.Itoa(pid)+"/environ", key)
}

func (r *Reader) getenvAt(dir int, name, key string) (string, bool, error) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false, err
	}
	defer unix.Close(fd)
	s := envScanner{prefix: key + "="}
	for {
		n, err := unix.Read(fd, r.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return "", false, err
		}
		if n == 0 {
			v, ok := s.finish()
			return v, ok, nil
		}
		if v, ok := s.feed(r.buf[:n]); ok {
			return v, true, nil
		}
	}
}

// maxEnvValue bounds the value Getenv returns.
const maxEnvValue = 256

// envScanner finds "KEY=value" among NUL-separated entries fed in chunks.
type envScanner struct {
	prefix  string
	matched int  // bytes of prefix matched at the start of the current entry
	skip    bool // the current entry does not match; skip to its NUL
	inValue bool
	value   []byte
}

// feed consumes a chunk and reports the value once a whole entry matched.
func (s *envScanner) feed(b []byte) (string, bool) {
	for _, c := range b {
		switch {
		case c == 0:
			if s.inValue {
				return string(s.value), true
			}
			s.matched, s.skip = 0, false
		case s.skip:
		case s.inValue:
			if len(s.value) < maxEnvValue {
				s.value = append(s.value, c)
			}
		case c == s.prefix[s.matched]:
			s.matched++
			s.inValue = s.matched == len(s.prefix)
		default:
			s.skip = true
		}
	}
	return "", false
}

// finish handles an environment whose last entry has no NUL.
func (s *envScanner) finish() (string, bool) {
	return string(s.value), s.inValue
}

// Proc is one process pinned by file descriptors under /proc/PID. Its reads
// keep referring to that process even after its pid is reused, and fail
// (see Gone) once it has been reaped. It holds four descriptors; Close
// releases them.
type Proc struct {
	Stat     Stat // read at open: Stat.PID and Stat.StartTime name the process
	dir      int
	status   int
	clear    int // clear_refs, -1 when it could not be opened for writing
	children int // children of the main thread
}

// Open pins process pid.
func (r *Reader) Open(pid int) (*Proc, error) {
	dir, err := unix.Open("/proc/"+strconv.Itoa(pid), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	p := &Proc{dir: dir, status: -1, clear: -1, children: -1}
	b, err := r.readAt(dir, "stat")
	if err == nil {
		p.Stat, err = ParseStat(b)
	}
	if err == nil {
		p.status, err = unix.Openat(dir, "status", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if err == nil {
		p.children, err = unix.Openat(dir, "task/"+strconv.Itoa(pid)+"/children", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	// clear_refs is writable only by the owner (or root); without it peaks
	// are peaks since start, which is still a sound upper bound.
	if fd, err := unix.Openat(dir, "clear_refs", unix.O_WRONLY|unix.O_CLOEXEC, 0); err == nil {
		p.clear = fd
	}
	return p, nil
}

// Close releases p's descriptors.
func (p *Proc) Close() {
	for _, fd := range []*int{&p.dir, &p.status, &p.clear, &p.children} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

// Status reads p's status.
func (p *Proc) Status(r *Reader) (Status, error) {
	b, err := r.readRecord(p.status)
	if err != nil {
		return Status{}, err
	}
	return ParseStatus(b)
}

// Alive reports whether p still exists, as a process or a zombie.
func (p *Proc) Alive(r *Reader) bool {
	_, err := unix.Pread(p.status, r.buf[:1], 0)
	return err == nil
}

// DupClearRefs returns a new descriptor of p's clear_refs file, for
// ResetPeak on another goroutine; the caller closes it. It returns -1 when
// clear_refs could not be opened for writing (it is writable only by the
// owner or root): peaks are then peaks since start.
func (p *Proc) DupClearRefs() (int, error) {
	if p.clear < 0 {
		return -1, nil
	}
	return unix.FcntlInt(uintptr(p.clear), unix.F_DUPFD_CLOEXEC, 0)
}

// ResetPeak resets the VmHWM of the process whose clear_refs fd is open to
// its current RSS (clear_refs value 5), so that its next Status reports the
// peak since now. It takes the process's mmap lock for writing, so it waits
// while the process holds that lock, which MAP_POPULATE does for the whole
// mapping: call it where blocking for seconds is harmless.
func ResetPeak(fd int) error {
	_, err := unix.Pwrite(fd, []byte("5"), 0)
	return err
}

// Children appends the children of every thread of p to dst. threads is p's
// current thread count: with one thread only the held list of the main
// thread is read, which saves listing /proc/PID/task.
func (p *Proc) Children(r *Reader, threads int, dst []int) ([]int, error) {
	add := func(child int) { dst = append(dst, child) }
	if threads <= 1 {
		b, err := r.readFD(p.children)
		if err != nil {
			return dst, err
		}
		return dst, ParsePIDList(b, add)
	}
	task, err := unix.Openat(p.dir, "task", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return dst, err
	}
	r.tids, err = r.listNumeric(task, r.tids[:0])
	unix.Close(task)
	if err != nil {
		return dst, err
	}
	for _, tid := range r.tids {
		b, err := r.readAt(p.dir, "task/"+strconv.Itoa(tid)+"/children")
		if Gone(err) {
			continue // the thread exited; its children moved to another thread
		}
		if err != nil {
			return dst, err
		}
		if err := ParsePIDList(b, add); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// maxCmdline bounds a command line kept for display.
const maxCmdline = 4 << 10

// Cmdline returns p's command line with arguments joined by spaces, valid
// UTF-8, at most about 4 KiB. A zombie's is empty.
func (p *Proc) Cmdline(r *Reader) (string, error) {
	b, err := r.readAt(p.dir, "cmdline")
	if err != nil {
		return "", err
	}
	b = bytes.TrimRight(b, "\x00")
	if len(b) > maxCmdline {
		b = b[:maxCmdline]
	}
	b = bytes.ReplaceAll(b, []byte{0}, []byte{' '})
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))), nil
}

// Getenv is Reader.Getenv for the pinned process.
func (p *Proc) Getenv(r *Reader, key string) (string, bool, error) {
	return r.getenvAt(p.dir, "environ", key)
}

// ReadPIDList reads a children file by path and calls fn for each pid in it.
func (r *Reader) ReadPIDList(path string, fn func(pid int)) error {
	b, err := r.readAt(unix.AT_FDCWD, path)
	if err != nil {
		return err
	}
	return ParsePIDList(b, fn)
}

// NSPIDs appends to dst the pid of process pid in each PID namespace it is
// in, from the reader's own namespace inward (the NSpid line of
// /proc/PID/status): the last is its pid as its own namespace numbers it.
func (r *Reader) NSPIDs(pid int, dst []int) ([]int, error) {
	b, err := r.readAt(unix.AT_FDCWD, "/proc/"+strconv.Itoa(pid)+"/status")
	if err != nil {
		return dst, err
	}
	return ParseNSPIDs(b, dst)
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

// NSPIDs is Reader.NSPIDs for the pinned process.
func (p *Proc) NSPIDs(r *Reader, dst []int) ([]int, error) {
	b, err := r.readRecord(p.status)
	if err != nil {
		return dst, err
	}
	return ParseNSPIDs(b, dst)
}

// Caps are a process's capability sets (the Cap* lines of its status).
type Caps struct {
	Permitted, Effective, Ambient uint64
}

// Caps reads p's capability sets.
func (p *Proc) Caps(r *Reader) (Caps, error) {
	b, err := r.readRecord(p.status)
	if err != nil {
		return Caps{}, err
	}
	return ParseCaps(b)
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

// Exe returns the device and inode of the file p executes (its exe link,
// followed). Reading it needs ptrace access to p.
func (p *Proc) Exe() (dev, ino uint64, err error) {
	var st unix.Stat_t
	if err := unix.Fstatat(p.dir, "exe", &st, 0); err != nil {
		return 0, 0, err
	}
	return st.Dev, st.Ino, nil
}

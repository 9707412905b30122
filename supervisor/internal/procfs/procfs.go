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

// Namespace returns the inode that names p's namespace of the given kind
// ("ipc", "mnt", "pid"...). Reading it needs ptrace access to p.
func (p *Proc) Namespace(kind string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(p.dir, "ns/"+kind, &st, 0); err != nil {
		return 0, err
	}
	return st.Ino, nil
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

package python

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// StatePage is a page of memory shared with the worker (its fd 5). Word 0 is
// the worker's clock: 2k-1 while hook call k runs, 2k once it returned; the
// host reads it only to show progress and to say which call was running when
// a deadline passed. Word 1 is the host's stop request, which the worker
// looks at between calls (over one symbol at most a millisecond of calls
// apart: python/bridge.py, _STOP_POLL_NS). Word 2 is the worker's local word: 2m + e after
// it delivered m fills of the batch in flight itself (YieldMsg.Local), e = 1
// while the m-th one's on_execution runs; with the clock, it names the call
// in flight, and nothing else.
//
// The worker can write anything into the page, so nothing read from it
// decides a limit or a deadline: those come from the host's own clock. And
// the page cannot hurt the host: it is a memfd sealed against shrinking and
// growing before the worker gets it (a worker that truncated a page the host
// has mapped would make the host's next read fault with SIGBUS), and it is
// not executable (MFD_NOEXEC_SEAL where the kernel has it, mode 0600
// otherwise), so it cannot carry a program into execve.
type StatePage struct {
	file *os.File
	mem  []byte
}

const statePageSize = 4096

// Words of the page.
const (
	wordClock = 0
	wordStop  = 1
	wordLocal = 2
)

// NewStatePage creates the shared page.
func NewStatePage() (*StatePage, error) {
	fd, err := unix.MemfdCreate("stratbench-state", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_NOEXEC_SEAL)
	if errors.Is(err, unix.EINVAL) {
		// Before Linux 6.3 there is no MFD_NOEXEC_SEAL; the mode below
		// keeps the page out of execve, and the sandbox denies chmod.
		fd, err = unix.MemfdCreate("stratbench-state", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
		if err == nil {
			err = unix.Fchmod(fd, 0o600)
		}
	}
	if err != nil {
		if fd > 0 {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("create state page: %w", err)
	}
	f := os.NewFile(uintptr(fd), "stratbench-state")
	if err := f.Truncate(statePageSize); err != nil {
		f.Close()
		return nil, fmt.Errorf("size state page: %w", err)
	}
	// F_SEAL_SEAL last: the worker cannot add seals of its own either.
	seals := unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_SEAL
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		f.Close()
		return nil, fmt.Errorf("seal state page: %w", err)
	}
	mem, err := unix.Mmap(fd, 0, statePageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("map state page: %w", err)
	}
	return &StatePage{file: f, mem: mem}, nil
}

// File is the descriptor to hand to the worker.
func (s *StatePage) File() *os.File { return s.file }

func (s *StatePage) word(i int) *uint64 { return (*uint64)(unsafe.Pointer(&s.mem[8*i])) }

// Clock returns the worker's clock word, as the worker claims it.
func (s *StatePage) Clock() uint64 { return atomic.LoadUint64(s.word(wordClock)) }

// Local returns the worker's local word, as the worker claims it.
func (s *StatePage) Local() uint64 { return atomic.LoadUint64(s.word(wordLocal)) }

// RequestStop asks the worker to return after the call in flight.
func (s *StatePage) RequestStop() { atomic.StoreUint64(s.word(wordStop), 1) }

// Close unmaps the page and closes its descriptor.
func (s *StatePage) Close() error {
	err := unix.Munmap(s.mem)
	if cerr := s.file.Close(); err == nil {
		err = cerr
	}
	return err
}

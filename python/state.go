package python

import (
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// StatePage is a page of memory shared with the worker (its fd 5). Word 0 is
// the worker's clock: 2k-1 while hook call k runs, 2k once it returned. The
// host reads it to time each call without a round trip, which is what lets a
// batch of bars run without one message per bar. Word 1 is the host's stop
// request, which the worker checks before every call. Word 2 counts the
// commands the call in flight has issued, so that the host knows how many it
// discards when the call fails without a word.
//
// The worker can write anything into the page: the host treats the clock as
// a claim to be checked (it must only move forward, within the calls the host
// asked for), never as a fact.
type StatePage struct {
	file *os.File
	mem  []byte
}

const statePageSize = 4096

// NewStatePage creates the shared page.
func NewStatePage() (*StatePage, error) {
	fd, err := unix.MemfdCreate("stratbench-state", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("create state page: %w", err)
	}
	f := os.NewFile(uintptr(fd), "stratbench-state")
	if err := f.Truncate(statePageSize); err != nil {
		f.Close()
		return nil, fmt.Errorf("size state page: %w", err)
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

// Clock returns the worker's clock word.
func (s *StatePage) Clock() uint64 { return atomic.LoadUint64(s.word(0)) }

// PendingCommands returns the number of commands the call in flight has
// issued so far, as the worker claims it.
func (s *StatePage) PendingCommands() uint64 { return atomic.LoadUint64(s.word(2)) }

// RequestStop asks the worker to return after the call in flight.
func (s *StatePage) RequestStop() { atomic.StoreUint64(s.word(1), 1) }

// Close unmaps the page and closes its descriptor.
func (s *StatePage) Close() error {
	err := unix.Munmap(s.mem)
	if cerr := s.file.Close(); err == nil {
		err = cerr
	}
	return err
}

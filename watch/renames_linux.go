package watch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// renameMask is what the second inotify instance asks the kernel for, on the
// strategy's folder. IN_MOVED_TO is sent when a name is renamed into the
// folder: the file under that name was written whole before it got the
// name (an editor's atomic save). IN_CLOSE_WRITE is not asked for: it is
// sent when *a* writer closes the file, which says nothing of other
// writers, or of the same one opening it again to write the rest (a
// close, then an append; touch while an editor writes). IN_MODIFY,
// IN_CREATE, IN_DELETE and IN_MOVED_FROM, in the same queue and so in
// order with it, say that the file changed again after the rename.
// IN_Q_OVERFLOW (events lost) is always sent. IN_ONLYDIR and
// IN_DONT_FOLLOW: the folder, resolved by New, must still be a folder and
// not a link.
const renameMask = unix.IN_MOVED_TO |
	unix.IN_MODIFY | unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// renameReadSize is the reader's buffer: whole events only, and at least
// one event with the longest name (NAME_MAX, 255 bytes, and its NUL).
const renameReadSize = 4096

// renameWatcher is the second inotify instance on the strategy's folder. Its
// reader goroutine is owned by the loop: it ends when stop returns.
type renameWatcher struct {
	f    *os.File // the inotify descriptor, on the runtime's poller
	wd   int32
	base string // the strategy's name in its folder
	// events carries one signal per read that concerns the strategy or
	// lost events; it is closed when the reader ends.
	events chan renameSignal
	quit   chan struct{}
	done   chan struct{}
}

// watchRenames starts the second inotify instance on path's folder.
func watchRenames(path string) (*renameWatcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify_init1: %w", err)
	}
	dir := filepath.Dir(path)
	wd, err := unix.InotifyAddWatch(fd, dir, renameMask)
	if err != nil {
		_ = unix.Close(fd) // the watch's error is the one to report
		return nil, fmt.Errorf("inotify_add_watch %s: %w", dir, err)
	}
	// A non-blocking descriptor goes on the runtime's poller, so that
	// Close wakes a Read blocked on it; a file without deadlines is not
	// on it, and its Read would not block at all.
	f := os.NewFile(uintptr(fd), "inotify "+dir)
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("inotify descriptor not pollable: %w", err)
	}
	return newRenameWatcher(f, int32(wd), filepath.Base(path)), nil
}

// newRenameWatcher starts the reader of f, an inotify descriptor (or, in
// tests, a pipe carrying what one would), for the events of watch wd on
// the name base.
func newRenameWatcher(f *os.File, wd int32, base string) *renameWatcher {
	c := &renameWatcher{
		f:      f,
		wd:     wd,
		base:   base,
		events: make(chan renameSignal),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	go c.read()
	return c
}

// read reads the kernel's events until the descriptor is closed or the
// loop stops listening.
func (c *renameWatcher) read() {
	defer close(c.done)
	defer close(c.events)
	buf := make([]byte, renameReadSize)
	for {
		n, err := c.f.Read(buf)
		if err != nil {
			// Closed by stop; or the instance broke, and the loop, seeing
			// events closed, waits the debounce every time.
			return
		}
		sig := c.summarize(buf[:n])
		if sig.end == endNone && !sig.lost && len(sig.names) == 0 {
			continue
		}
		select {
		case c.events <- sig:
		case <-c.quit:
			return
		}
	}
}

// stop ends the reader and releases the instance; the reader has ended
// when it returns.
func (c *renameWatcher) stop() {
	close(c.quit)
	// Close fails only if closing the descriptor does; nothing is left
	// to do with it then.
	_ = c.f.Close()
	<-c.done
}

// summarize says what one read's events mean for the strategy: the last
// event on its name decides, and an overflow or a malformed answer means
// events were lost. The other names touched are listed for the loop, which
// knows which are dependencies.
func (c *renameWatcher) summarize(buf []byte) renameSignal {
	var sig renameSignal
	err := parseInotify(buf, func(wd int32, mask uint32, name []byte) {
		switch {
		case mask&unix.IN_Q_OVERFLOW != 0:
			sig.lost = true
		case wd != c.wd || len(name) == 0:
			// Another watch's, or the folder's own (IN_IGNORED when it
			// is gone: the folder's main watch reports that).
		case string(name) != c.base:
			if !slices.Contains(sig.names, string(name)) {
				sig.names = append(sig.names, string(name))
			}
		case mask&(unix.IN_MODIFY|unix.IN_CREATE|unix.IN_DELETE|unix.IN_MOVED_FROM|unix.IN_ISDIR) != 0:
			// A mask with these and IN_MOVED_TO is no event the kernel
			// sends; taking it as a write is the safe reading.
			sig.end = endWriting
		case mask&unix.IN_MOVED_TO != 0:
			sig.end = endComplete
		}
	})
	if err != nil {
		sig.lost = true
	}
	return sig
}

var errInotifyFormat = errors.New("malformed inotify event")

// parseInotify calls fn for each struct inotify_event in buf, in order:
// its watch descriptor, its mask and its name without the NUL padding
// (empty for an event on the folder itself). Every event and its name
// length are checked against what is left of buf; the first one that does
// not fit, or a name that is not NUL-terminated, ends the parse with an
// error (fn has been called for the events before it).
func parseInotify(buf []byte, fn func(wd int32, mask uint32, name []byte)) error {
	for len(buf) > 0 {
		if len(buf) < unix.SizeofInotifyEvent {
			return fmt.Errorf("%w: %d bytes left, less than a header", errInotifyFormat, len(buf))
		}
		// struct inotify_event { int wd; uint32 mask, cookie, len; char name[]; }
		wd := int32(binary.NativeEndian.Uint32(buf[0:4]))
		mask := binary.NativeEndian.Uint32(buf[4:8])
		size := binary.NativeEndian.Uint32(buf[12:16])
		buf = buf[unix.SizeofInotifyEvent:]
		if uint64(size) > uint64(len(buf)) {
			return fmt.Errorf("%w: a %d-byte name with %d bytes left", errInotifyFormat, size, len(buf))
		}
		name := buf[:size]
		buf = buf[size:]
		if size > 0 {
			end := bytes.IndexByte(name, 0)
			if end < 0 {
				return fmt.Errorf("%w: a name without its NUL", errInotifyFormat)
			}
			name = name[:end]
		}
		fn(wd, mask, name)
	}
	return nil
}

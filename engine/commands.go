package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"stratbench/internal/units"
	"stratbench/python"
)

// commandPipe is the host's end of the command pipe (python.FDCommands): the
// worker writes a command frame there the moment a hook issues a command,
// and the host reads them only after the call's answer, or after killing the
// worker, so issuing an order wakes nobody (measured: a wake-up of the host
// per order cost a third more CPU on the 1M-bar benchmark). Its descriptor is
// non-blocking and read with plain read(2): nothing waits on it.
type commandPipe struct {
	fd  int    // read end, owned: closed by close
	buf []byte // bytes read, not yet parsed
	// read is the read buffer, made at the first drain with
	// firstCommandRead bytes and doubled (up to maxCommandRead) each time
	// a read fills it: most runs issue no command or a few, and a buffer
	// of the maximum per job was a sixth of a sweep run's garbage.
	read []byte
}

// The command pipe's read buffer: its first size, and its largest.
const (
	firstCommandRead = 4 << 10
	maxCommandRead   = 64 << 10
)

// commandPipeBytes is the pipe's capacity, when the kernel allows it: about
// 30,000 commands a call before the worker sends the rest inline.
const commandPipeBytes = 1 << 20

// newCommandPipe returns the host's end and the worker's (to be passed as
// python.FDCommands and closed by the caller after the start).
func newCommandPipe() (*commandPipe, *os.File, error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, fmt.Errorf("command pipe: %w", err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, fmt.Errorf("command pipe: %w", err)
	}
	// Best effort: the kernel caps it at fs.pipe-max-size.
	unix.FcntlInt(uintptr(fds[1]), unix.F_SETPIPE_SZ, commandPipeBytes)
	return &commandPipe{fd: fds[0]}, os.NewFile(uintptr(fds[1]), "worker commands"), nil
}

// drain reads every frame the pipe holds and passes each to take. A frame
// cut short, or anything but a command frame, is a *python.ProtocolError:
// the worker writes each frame whole.
func (p *commandPipe) drain(max int, take func(python.Frame) error) error {
	if p.read == nil {
		p.read = make([]byte, firstCommandRead)
	}
	for {
		n, err := unix.Read(p.fd, p.read)
		if n > 0 {
			p.buf = append(p.buf, p.read[:n]...)
			if err := p.parse(max, take); err != nil {
				return err
			}
			if n == len(p.read) && len(p.read) < maxCommandRead {
				p.read = make([]byte, 2*len(p.read))
			}
		}
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN), n == 0 && err == nil:
			if len(p.buf) > 0 {
				return &python.ProtocolError{Msg: fmt.Sprintf("command pipe: %d bytes of a cut frame", len(p.buf))}
			}
			return nil
		case err != nil:
			return fmt.Errorf("command pipe: %w", err)
		}
	}
}

// parse passes on the whole frames at the start of p.buf.
func (p *commandPipe) parse(max int, take func(python.Frame) error) error {
	b := p.buf
	for len(b) >= 4 {
		size := int(binary.BigEndian.Uint32(b))
		if size == 0 || size > max {
			return &python.ProtocolError{Msg: fmt.Sprintf("command pipe: frame of %s (limit %s)", units.Bytes(int64(size)), units.Bytes(int64(max)))}
		}
		if len(b) < 4+size {
			break
		}
		f := python.Frame{Type: b[4], Payload: b[5 : 4+size]}
		if f.Type != python.TypeCommand {
			return &python.ProtocolError{Msg: fmt.Sprintf("command pipe: %q frame", f.Type)}
		}
		if err := take(f); err != nil {
			return err
		}
		b = b[4+size:]
	}
	p.buf = append(p.buf[:0], b...)
	return nil
}

// close closes the host's end.
func (p *commandPipe) close() { unix.Close(p.fd) }

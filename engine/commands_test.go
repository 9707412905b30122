package engine

import (
	"encoding/binary"
	"fmt"
	"testing"

	"stratbench/python"
)

// TestCommandPipeDrainsEveryFrame writes command frames of odd sizes in
// rounds, as a worker does (whole frames, then its answer, after which the
// host drains), far more in all than the pipe's read buffer holds at first
// or at its largest, so that frames straddle reads while the buffer grows:
// drain must pass every one on, whole and in order.
func TestCommandPipeDrainsEveryFrame(t *testing.T) {
	p, w, err := newCommandPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	defer w.Close()
	var want, got []string
	take := func(f python.Frame) error {
		got = append(got, string(f.Payload))
		return nil
	}
	// One command, as most runs issue: the buffer stays small.
	one := "buy"
	want = append(want, one)
	if _, err := w.Write(append(append(binary.BigEndian.AppendUint32(nil, uint32(1+len(one))), python.TypeCommand), one...)); err != nil {
		t.Fatal(err)
	}
	if err := p.drain(1<<20, take); err != nil {
		t.Fatal(err)
	}
	if len(p.read) != firstCommandRead {
		t.Fatalf("read buffer of %d bytes for one command, want %d", len(p.read), firstCommandRead)
	}
	sent := 0
	for i := 0; sent < 4*maxCommandRead; {
		// A round fits the pipe at its default size (64 KiB): the write
		// never waits for a reader.
		var round []byte
		for ; len(round) < 48<<10; i++ {
			payload := fmt.Sprintf("command %d %s", i, make([]byte, i%97))
			want = append(want, payload)
			round = binary.BigEndian.AppendUint32(round, uint32(1+len(payload)))
			round = append(append(round, python.TypeCommand), payload...)
		}
		if _, err := w.Write(round); err != nil {
			t.Fatal(err)
		}
		sent += len(round)
		if err := p.drain(1<<20, take); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("drained %d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("frame %d is %.40q, want %.40q", i, got[i], want[i])
		}
	}
	if len(p.read) != maxCommandRead {
		t.Fatalf("read buffer of %d bytes after a flood, want it grown to %d", len(p.read), maxCommandRead)
	}
}

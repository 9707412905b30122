//go:build linux

package watch

// Attacks on the early read at a close or a rename (watch/renames_linux.go):
// each test states the promise it checks. The writers pause between their
// steps the way real ones do (a process started per step, an editor's
// second pass): for at most writerPause, and less when the watcher has
// already read the file early; the debounces are far longer, so that
// without the early read every one of these saves is one Change.

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writerPause is the longest pause a writer in these tests makes between two
// steps of one save: a third of the default debounce, which therefore never
// split such a save.
const writerPause = DefaultDebounce / 3

// pauseLikeAWriter pauses between two steps of a save: until the watcher
// has read the file early, or writerPause.
func pauseLikeAWriter(tr *tracer) {
	timeout := time.After(writerPause)
	for {
		select {
		case why := <-tr.reads:
			if why == checkEarly {
				return
			}
		case <-timeout:
			return
		}
	}
}

// settleAll waits for the debounce of the last step to read the file, then
// returns every change received meanwhile and in the quiet period after.
func settleAll(t *testing.T, r *recorder, tr *tracer) []Change {
	t.Helper()
	tr.waitFor(t, checkDebounce)
	var got []Change
	for {
		select {
		case c := <-r.changes:
			got = append(got, c)
			continue
		case <-time.After(quiet):
		}
		return got
	}
}

func describe(got []Change, names map[[32]byte]string) string {
	var s []string
	for _, c := range got {
		name, ok := names[c.Hash]
		if !ok {
			name = fmt.Sprintf("%x", c.Hash[:6])
		}
		s = append(s, fmt.Sprintf("%s %s", c.Kind, name))
	}
	return strings.Join(s, ", ")
}

// An in-place writer that closes the file and opens it again to write the
// rest (a shell script of `echo ... > f; echo ... >> f`, a generator that
// appends) is one save: its first close, a few milliseconds before the
// rest, must not be read as the end.
func TestAttack6CloseAndReopenIsOneWholeSave(t *testing.T) {
	t.Parallel()
	path, content := newStrategy(t)
	r, tr := startTraced(t, path, Options{Debounce: time.Second}, nil)
	r.expect(t, Changed, content)
	tr.drain()

	first := []byte("def on_data(ctx, history):\n")
	whole := append(append([]byte{}, first...), "    assert TOKEN == 'save 1'\nTOKEN = 'save 1'\n"...)
	write(t, path, first) // open O_TRUNC, write, close
	pauseLikeAWriter(tr)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(whole[len(first):]); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got := settleAll(t, r, tr)
	names := map[[32]byte]string{sha256.Sum256(first): "first-half", sha256.Sum256(whole): "whole"}
	if len(got) != 1 || got[0].Hash != sha256.Sum256(whole) {
		t.Fatalf("one save written in two opens (%s apart at most) gave: %s; want one Changed with the whole content",
			writerPause, describe(got, names))
	}
}

// A second process that opens the file for writing and closes it while the
// editor is still writing (touch, a tool that opens read-write to lock or
// sniff the file) makes the kernel send IN_CLOSE_WRITE: that close is not
// the end of the editor's write, and the half-written file must not be
// reported.
func TestAttack6OtherWritersCloseMidSave(t *testing.T) {
	t.Parallel()
	path, content := newStrategy(t)
	r, tr := startTraced(t, path, Options{Debounce: time.Second}, nil)
	r.expect(t, Changed, content)
	tr.drain()

	whole := append(append([]byte{}, content...), "# edited, written in two parts\n"...)
	half := len(whole) / 2
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(whole[:half]); err != nil {
		t.Fatal(err)
	}
	// touch: open(O_WRONLY|O_CREAT), utimensat, close.
	other, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	pauseLikeAWriter(tr)
	if _, err := f.Write(whole[half:]); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got := settleAll(t, r, tr)
	names := map[[32]byte]string{sha256.Sum256(whole[:half]): "half", sha256.Sum256(whole): "whole"}
	if len(got) != 1 || got[0].Hash != sha256.Sum256(whole) {
		t.Fatalf("a save with another writer's open and close in its middle gave: %s; want one Changed with the whole content",
			describe(got, names))
	}
}

// A checkout writes the files in the order of their paths: strategy.py
// before strategy_utils.py or utils.py, with a moment between them (another
// file, a large one, checked out in between). It is one run, with the new
// strategy and the new module together: never the new strategy with the old
// module.
func TestAttack6CheckoutModuleAfterStrategyIsOneChange(t *testing.T) {
	t.Parallel()
	for _, style := range []saveStyle{{"in-place", saveInPlace}, {"atomic-rename", saveAtomic}} {
		t.Run(style.name, func(t *testing.T) {
			t.Parallel()
			dir, path, content := newProject(t)
			module := filepath.Join(dir, "strategy_utils.py")
			write(t, module, []byte("VERSION = 1\n"))
			r, tr := startTraced(t, path, Options{Debounce: time.Second, Modules: true}, nil)
			first := r.expect(t, Changed, content)
			tr.drain()

			data := append(append([]byte{}, content...), "assert strategy_utils.VERSION == 2\n"...)
			style.save(t, path, data)
			pauseLikeAWriter(tr) // git writes the files between the two
			saveInPlace(t, module, []byte("VERSION = 2\n"))
			got := settleAll(t, r, tr)
			var mixed bool
			for _, c := range got {
				mixed = mixed || (c.Kind == Changed && c.Hash == sha256.Sum256(data) && c.Deps == first.Deps)
			}
			if len(got) != 1 || mixed {
				t.Fatalf("a checkout of the strategy and then its module gave %d changes (one with the new strategy and the old module: %v); want one",
					len(got), mixed)
			}
		})
	}
}

// Not a regular file put in the strategy's place by a rename (the early
// read's trigger): a warning, no hang, and Run still ends at once.
func TestAttack6SpecialFilesRenamedOntoTheStrategy(t *testing.T) {
	t.Parallel()
	kinds := map[string]func(t *testing.T, at string){
		"fifo": func(t *testing.T, at string) {
			if err := syscall.Mkfifo(at, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"link-to-dev-zero": func(t *testing.T, at string) {
			if err := os.Symlink("/dev/zero", at); err != nil {
				t.Fatal(err)
			}
		},
		"link-to-fifo": func(t *testing.T, at string) {
			fifo := at + ".target"
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(fifo, at); err != nil {
				t.Fatal(err)
			}
		},
		"socket": func(t *testing.T, at string) {
			fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer syscall.Close(fd)
			if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: at}); err != nil {
				t.Skipf("bind %s: %v", at, err)
			}
		},
	}
	for name, mk := range kinds {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path, w, tr, cancel, runErr := startAttacked(t)
			defer cancel()
			tmp := filepath.Join(filepath.Dir(path), "s") // short: a socket's path is bounded
			mk(t, tmp)
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
			select {
			case c := <-w.Changes():
				if c.Kind != Warning {
					t.Fatalf("got %s (%v), want a warning", c.Kind, c.Err)
				}
				t.Logf("warning: %v", c.Err)
			case <-time.After(patience):
				t.Fatalf("no warning within %s", patience)
			}
			if n := tr.drain(); n[checkEarly] == 0 {
				t.Log("no early read was tried")
			}
			cancel()
			select {
			case <-runErr:
			case <-time.After(time.Second):
				t.Fatal("Run did not end within a second of its context's end")
			}
		})
	}
}

// A regular file whose read blocks (root: /proc/kmsg, a FUSE file): linked
// onto the strategy's name, it is a warning, not a read that never ends;
// the next real save is reported, and Run ends with its context.
func TestAttack6BlockingRegularFileDoesNotHoldRun(t *testing.T) {
	if os.Getenv("STRATBENCH_ATTACK_KMSG") == "" {
		t.Skip("reads (and so consumes) the kernel's log: set STRATBENCH_ATTACK_KMSG=1")
	}
	f, err := os.Open("/proc/kmsg")
	if err != nil {
		t.Skipf("no readable /proc/kmsg: %v", err)
	}
	f.Close()
	path, w, _, cancel, runErr := startAttacked(t)
	defer cancel()
	tmp := path + ".link"
	if err := os.Symlink("/proc/kmsg", tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	next := func() Change {
		t.Helper()
		select {
		case c := <-w.Changes():
			return c
		case <-time.After(patience):
			t.Fatalf("nothing reported within %s: the read of /proc/kmsg, a regular file, blocks", patience)
		}
		return Change{}
	}
	if c := next(); c.Kind != Warning {
		t.Fatalf("got %s (%v), want a warning", c.Kind, c.Err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	data := []byte("def on_data(ctx, history):\n    pass  # saved after the link\n")
	saveAtomic(t, path, data)
	for {
		c := next()
		if c.Kind == Changed && c.Hash == sha256.Sum256(data) {
			break
		}
	}
	cancel()
	select {
	case <-runErr:
	case <-time.After(time.Second):
		t.Fatal("Run did not end within a second of its context's end")
	}
}

// A stream of saves (an autosave on every keystroke, a script rewriting
// the file in a loop, 100 saves a second here) is coalesced: the owner
// starts a run per Change, and a run per save of a stream is a run per
// event.
func TestAttack6StreamOfSavesIsCoalesced(t *testing.T) {
	t.Parallel()
	path, content := newStrategy(t)
	r, tr := startTraced(t, path, Options{Debounce: time.Second}, nil)
	r.expect(t, Changed, content)
	tr.drain()
	const saves = 100
	var last []byte
	for i := range saves {
		last = fmt.Appendf(nil, "%s# autosave %d\n", content, i)
		saveInPlace(t, path, last)
		time.Sleep(10 * time.Millisecond) // the writer's pace, not an assertion
	}
	got := settleAll(t, r, tr)
	if len(got) == 0 || got[len(got)-1].Hash != sha256.Sum256(last) {
		t.Fatalf("the stream's last save was not reported last (%d changes)", len(got))
	}
	if len(got) > 2 {
		t.Fatalf("%d saves, 10 ms apart, gave %d changes (a run each); want them coalesced", saves, len(got))
	}
}

// startAttacked starts a Watcher, traced, on a new strategy, and waits
// for its first Change; cancel ends its Run, whose error runErr gives.
func startAttacked(t *testing.T) (path string, w *Watcher, tr *tracer, cancel context.CancelFunc, runErr chan error) {
	t.Helper()
	path, content := newStrategy(t)
	w, err := New(path, Options{Debounce: testDebounce})
	if err != nil {
		t.Fatal(err)
	}
	tr = trace(w)
	ctx, cancel := context.WithCancel(context.Background())
	runErr = make(chan error, 1)
	go func() { runErr <- w.Run(ctx) }()
	if c := <-w.Changes(); c.Kind != Changed || c.Hash != sha256.Sum256(content) {
		cancel()
		t.Fatalf("first change %s, want Changed", c.Kind)
	}
	return path, w, tr, cancel, runErr
}

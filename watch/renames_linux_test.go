package watch

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/internal/leakcheck"
)

// The tests of the early read use debounces far longer than a save, and
// decide from the order of events, not from timings: a Change that arrives
// before the watcher's debounce has expired once since the save was read
// early (the watcher tells the tests why it reads the file).

// tracer receives the reasons of a Watcher's reads of the file, as Run's
// goroutine makes them (before it sends the Change a read found).
type tracer struct{ reads chan checkReason }

func trace(w *Watcher) *tracer {
	tr := &tracer{reads: make(chan checkReason, 1000)}
	w.checked = func(why checkReason) { tr.reads <- why }
	return tr
}

// drain counts the reads made since the last drain.
func (tr *tracer) drain() map[checkReason]int {
	n := map[checkReason]int{}
	for {
		select {
		case why := <-tr.reads:
			n[why]++
		default:
			return n
		}
	}
}

// waitFor waits for a read for the reason why.
func (tr *tracer) waitFor(t *testing.T, why checkReason) {
	t.Helper()
	timeout := time.After(patience)
	for {
		select {
		case got := <-tr.reads:
			if got == why {
				return
			}
		case <-timeout:
			t.Fatalf("no read of kind %d within %s", why, patience)
		}
	}
}

func startTraced(t *testing.T, path string, opts Options, setup func(*Watcher)) (*recorder, *tracer) {
	t.Helper()
	w, err := New(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	tr := trace(w)
	if setup != nil {
		setup(w)
	}
	return runWatcher(t, w), tr
}

// neverExpires is a debounce no test waits out: a change reported within
// the test's patience was read early.
const neverExpires = 2 * patience

func TestAtomicSaveIsReadWithoutTheDebounce(t *testing.T) {
	t.Parallel()
	for i, style := range []saveStyle{{"atomic-rename", saveAtomic}, {"jetbrains", saveJetBrains}} {
		t.Run(style.name, func(t *testing.T) {
			t.Parallel()
			path, content := newStrategy(t)
			r, tr := startTraced(t, path, Options{Debounce: neverExpires}, nil)
			r.expect(t, Changed, content)
			tr.drain()
			data := fmt.Appendf(nil, "%s# save %d\n", content, i)
			style.save(t, path, data)
			r.expect(t, Changed, data)
			if n := tr.drain(); n[checkDebounce] != 0 || n[checkEarly] == 0 {
				t.Fatalf("the change was read %d times at the debounce's end and %d times early; want early only", n[checkDebounce], n[checkEarly])
			}
		})
	}
}

// TestSecondRenameWithinADebounceWaits: a rename onto the file within a
// debounce of the file's last change is one of a stream of saves (a
// formatter saving after the editor, a script): the debounce gathers it.
func TestSecondRenameWithinADebounceWaits(t *testing.T) {
	t.Parallel()
	const debounce = 2 * time.Second
	path, content := newStrategy(t)
	r, tr := startTraced(t, path, Options{Debounce: debounce}, nil)
	r.expect(t, Changed, content)
	tr.drain()
	first := append(content, "# first\n"...)
	saveAtomic(t, path, first)
	r.expect(t, Changed, first)
	second := append(content, "# second\n"...)
	saveAtomic(t, path, second)
	r.expect(t, Changed, second)
	if n := tr.drain(); n[checkDebounce] == 0 {
		t.Fatalf("the second save was read early (%d early reads, no debounce)", n[checkEarly])
	}
}

func TestInPlaceSaveIsReportedOnceWhole(t *testing.T) {
	t.Parallel()
	// Long enough that the test holds the file half-written well within
	// it; short enough to wait for it once.
	const debounce = 3 * time.Second
	path, content := newStrategy(t)
	r, tr := startTraced(t, path, Options{Debounce: debounce}, nil)
	r.expect(t, Changed, content)
	tr.drain()

	data := append(content, "# written in two parts\n"...)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	half := len(data) / 2
	if _, err := f.Write(data[:half]); err != nil {
		t.Fatal(err)
	}
	r.none(t) // open and half-written: nothing to believe
	if _, err := f.Write(data[half:]); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// A close says nothing of other writers, or of this one opening the
	// file again: the debounce reads it, whole, once.
	r.expect(t, Changed, data)
	if n := tr.drain(); n[checkEarly] != 0 || n[checkDebounce] == 0 {
		t.Fatalf("the save was read %d times early and %d times at the debounce's end; want the debounce only", n[checkEarly], n[checkDebounce])
	}
	r.none(t)
}

func TestEmptyFileIsNotBelievedEarly(t *testing.T) {
	t.Parallel()
	const debounce = time.Second
	path, content := newStrategy(t)
	r, tr := startTraced(t, path, Options{Debounce: debounce}, nil)
	r.expect(t, Changed, content)

	// An empty file renamed onto the strategy is read early, and not
	// believed: reported after two quiet debounces, as without the early
	// read.
	tr.drain()
	saveAtomic(t, path, nil)
	tr.waitFor(t, checkEarly)
	r.expect(t, Changed, nil)
	if n := tr.drain(); n[checkDebounce] < 2 {
		t.Fatalf("the empty file was reported after %d debounces; want 2", n[checkDebounce])
	}
}

func TestDependencyEventsKeepTheDebounce(t *testing.T) {
	t.Parallel()
	for _, dep := range []string{"helpers.py", filepath.Join("data", "bars.csv")} {
		t.Run(filepath.Base(dep), func(t *testing.T) {
			t.Parallel()
			dir, path, content := newProject(t)
			opts := Options{Debounce: time.Second, Modules: true, Inputs: []string{filepath.Join(dir, "data", "bars.csv")}}
			r, tr := startTraced(t, path, opts, nil)
			first := r.expect(t, Changed, content)
			tr.drain()
			// A checkout: the dependency, then the strategy.
			saveInPlace(t, filepath.Join(dir, dep), []byte("# checked out\n"))
			data := append(content, "# checked out\n"...)
			saveAtomic(t, path, data)
			c := r.expect(t, Changed, data)
			if c.Deps == first.Deps {
				t.Fatal("the change does not include the dependency's")
			}
			if n := tr.drain(); n[checkDebounce] == 0 {
				t.Fatal("the checkout was reported before the debounce expired")
			}
			r.none(t)
		})
	}
}

func TestNoSecondInstanceWaitsTheDebounceSilently(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			path, content := newStrategy(t)
			calls := make(chan struct{}, 1)
			r, tr := startTraced(t, path, mode.opts, func(w *Watcher) {
				w.watchRenames = func(string) (*renameWatcher, error) {
					calls <- struct{}{}
					// As inotify_init1 fails at max_user_instances.
					return nil, fmt.Errorf("inotify_init1: %w", syscall.EMFILE)
				}
			})
			r.expect(t, Changed, content) // no warning first
			tr.drain()
			data := append(content, "# saved\n"...)
			r.save(t, saveAtomic, path, data)
			if n := tr.drain(); n[checkEarly] != 0 || n[checkDebounce] == 0 {
				t.Fatalf("%d early reads, %d at the debounce's end; want the debounce only", n[checkEarly], n[checkDebounce])
			}
			select {
			case <-calls:
				if mode.opts.Poll {
					t.Error("a polling watcher started the second instance")
				}
			default:
				if !mode.opts.Poll {
					t.Error("the second instance was not tried")
				}
			}
		})
	}
}

func TestStopEndsTheCloseReader(t *testing.T) {
	// Not parallel: no other test's instance runs meanwhile.
	for _, way := range []string{"run ends", "folder removed"} {
		t.Run(way, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "project")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "strategy.py")
			content := []byte("def on_data(ctx, history): pass\n")
			write(t, path, content)
			w, err := New(path, Options{Debounce: testDebounce, PollInterval: testPoll})
			if err != nil {
				t.Fatal(err)
			}
			held := make(chan *renameWatcher, 1)
			w.watchRenames = func(path string) (*renameWatcher, error) {
				cw, err := watchRenames(path)
				held <- cw
				return cw, err
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			runErr := make(chan error, 1)
			go func() { runErr <- w.Run(ctx) }()
			if c := <-w.Changes(); c.Kind != Changed {
				t.Fatalf("first change %s, want Changed", c.Kind)
			}
			cw := <-held
			if cw == nil {
				t.Fatal("no second inotify instance")
			}
			if way == "folder removed" {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				// The switch to polling, which stops the instance, comes
				// with its warning.
				timeout := time.After(patience)
			warned:
				for {
					select {
					case c := <-w.Changes():
						if c.Kind == Warning {
							break warned
						}
					case <-timeout:
						t.Fatalf("no warning about polling within %s of the folder's removal", patience)
					}
				}
				// Run, in polling mode, goes on.
				ended(t, cw)
			}
			cancel()
			select {
			case err := <-runErr:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(patience):
				t.Fatalf("Run did not return within %s of its context's end", patience)
			}
			ended(t, cw)
		})
	}
}

// ended checks that cw's reader has ended (stop waits for it) and that no
// goroutine of it is left.
func ended(t *testing.T, cw *renameWatcher) {
	t.Helper()
	select {
	case <-cw.done:
	default:
		t.Fatal("the second instance's reader still runs")
	}
	if left := leakcheck.Leaked("stratbench/watch.(*renameWatcher)"); left != "" {
		t.Fatalf("goroutines left:\n%s", left)
	}
}

// inotifyEvent is one struct inotify_event, for tests to write.
type inotifyEvent struct {
	wd   int32
	mask uint32
	name string
}

// inotifyBytes encodes events as the kernel does: the name NUL-terminated
// and padded with NULs to a multiple of the header's size.
func inotifyBytes(events ...inotifyEvent) []byte {
	var out []byte
	for _, ev := range events {
		size := 0
		if ev.name != "" {
			size = (len(ev.name) + unix.SizeofInotifyEvent) / unix.SizeofInotifyEvent * unix.SizeofInotifyEvent
		}
		out = binary.NativeEndian.AppendUint32(out, uint32(ev.wd))
		out = binary.NativeEndian.AppendUint32(out, ev.mask)
		out = binary.NativeEndian.AppendUint32(out, 0) // cookie
		out = binary.NativeEndian.AppendUint32(out, uint32(size))
		out = append(out, ev.name...)
		out = append(out, make([]byte, size-len(ev.name))...)
	}
	return out
}

func parseAll(buf []byte) ([]inotifyEvent, error) {
	var got []inotifyEvent
	err := parseInotify(buf, func(wd int32, mask uint32, name []byte) {
		got = append(got, inotifyEvent{wd, mask, string(name)})
	})
	return got, err
}

func TestParseInotify(t *testing.T) {
	valid := []inotifyEvent{
		{1, unix.IN_CLOSE_WRITE, "strategy.py"},
		{1, unix.IN_MOVED_TO, "a-name-of-exactly-32-bytes-long."},
		{-1, unix.IN_Q_OVERFLOW, ""},
		{1, unix.IN_IGNORED, ""},
	}
	got, err := parseAll(inotifyBytes(valid...))
	if err != nil || !slices.Equal(got, valid) {
		t.Fatalf("parse = %v, %v; want %v", got, err, valid)
	}
	one := inotifyBytes(valid[0])
	header := func(size uint32) []byte {
		b := slices.Clone(one[:unix.SizeofInotifyEvent])
		binary.NativeEndian.PutUint32(b[12:], size)
		return b
	}
	bad := map[string][]byte{
		"a short header":            one[:unix.SizeofInotifyEvent-1],
		"a name past the end":       one[:len(one)-1],
		"a huge name length":        append(header(0xffffffff), one[unix.SizeofInotifyEvent:]...),
		"a name without its NUL":    append(header(4), "abcd"...),
		"a good event, then a half": append(slices.Clone(one), one[:8]...),
	}
	for name, buf := range bad {
		got, err := parseAll(buf)
		if !errors.Is(err, errInotifyFormat) {
			t.Errorf("%s: error %v, want a format error", name, err)
		}
		if name == "a good event, then a half" && (len(got) != 1 || got[0] != valid[0]) {
			t.Errorf("%s: parsed %v before the error, want the good event", name, got)
		}
	}
}

func TestSummarize(t *testing.T) {
	c := &renameWatcher{wd: 1, base: "strategy.py"}
	ev := func(mask uint32, name string) inotifyEvent { return inotifyEvent{1, mask, name} }
	cases := []struct {
		name   string
		events []inotifyEvent
		want   renameSignal
	}{
		{"close", []inotifyEvent{ev(unix.IN_MODIFY, "strategy.py"), ev(unix.IN_CLOSE_WRITE, "strategy.py")}, renameSignal{end: endWriting}},
		{"rename onto", []inotifyEvent{ev(unix.IN_MOVED_FROM, "strategy.py"), ev(unix.IN_MOVED_TO, "strategy.py")}, renameSignal{end: endComplete}},
		{"written after a rename", []inotifyEvent{ev(unix.IN_MOVED_TO, "strategy.py"), ev(unix.IN_MODIFY, "strategy.py")}, renameSignal{end: endWriting}},
		{"removed after a rename", []inotifyEvent{ev(unix.IN_MOVED_TO, "strategy.py"), ev(unix.IN_DELETE, "strategy.py")}, renameSignal{end: endWriting}},
		{"a folder renamed onto it", []inotifyEvent{ev(unix.IN_MOVED_TO|unix.IN_ISDIR, "strategy.py")}, renameSignal{end: endWriting}},
		{"other names", []inotifyEvent{ev(unix.IN_MODIFY, "helpers.py"), ev(unix.IN_CLOSE_WRITE, "helpers.py"), ev(unix.IN_MOVED_TO, "x.tmp")},
			renameSignal{names: []string{"helpers.py", "x.tmp"}}},
		{"a name and the strategy", []inotifyEvent{ev(unix.IN_MODIFY, "helpers.py"), ev(unix.IN_MOVED_TO, "strategy.py")},
			renameSignal{end: endComplete, names: []string{"helpers.py"}}},
		{"the folder itself", []inotifyEvent{ev(unix.IN_IGNORED, "")}, renameSignal{}},
		{"another watch", []inotifyEvent{{2, unix.IN_CLOSE_WRITE, "strategy.py"}}, renameSignal{}},
		{"overflow", []inotifyEvent{ev(unix.IN_MOVED_TO, "strategy.py"), {-1, unix.IN_Q_OVERFLOW, ""}}, renameSignal{end: endComplete, lost: true}},
	}
	for _, tc := range cases {
		if got := c.summarize(inotifyBytes(tc.events...)); got.end != tc.want.end || got.lost != tc.want.lost || !slices.Equal(got.names, tc.want.names) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if got := c.summarize(append(inotifyBytes(ev(unix.IN_CLOSE_WRITE, "strategy.py")), 1, 2, 3)); !got.lost {
		t.Errorf("a malformed read gives %+v, want events lost", got)
	}
}

// The loop takes lost events and malformed reads of the second instance as
// the debounce's to decide. The instance here reads a pipe the test writes
// what the kernel would into.
func TestLostEventsKeepTheDebounce(t *testing.T) {
	t.Parallel()
	const debounce = time.Second
	path, content := newStrategy(t)
	kernel := make(chan *os.File, 1)
	r, tr := startTraced(t, path, Options{Debounce: debounce}, func(w *Watcher) {
		w.watchRenames = func(path string) (*renameWatcher, error) {
			pr, pw, err := os.Pipe()
			if err != nil {
				return nil, err
			}
			kernel <- pw
			return newRenameWatcher(pr, 1, filepath.Base(path)), nil
		}
	})
	pw := <-kernel
	defer pw.Close()
	r.expect(t, Changed, content)
	moved := inotifyEvent{1, unix.IN_MOVED_TO, "strategy.py"}
	steps := []struct {
		name  string
		read  []byte // what one read of the instance gives
		early bool
	}{
		{"the rename alone", inotifyBytes(moved), true},
		{"an overflow with it", inotifyBytes(moved, inotifyEvent{-1, unix.IN_Q_OVERFLOW, ""}), false},
		{"a malformed read", append(inotifyBytes(moved), 0xff, 0xff), false},
	}
	for i, step := range steps {
		tr.drain()
		data := fmt.Appendf(nil, "%s# save %d\n", content, i)
		saveAtomic(t, path, data) // seen by the folder's watch only
		if _, err := pw.Write(step.read); err != nil {
			t.Fatal(err)
		}
		if !step.early {
			r.none(t) // the quiet period is half the debounce
		}
		r.expect(t, Changed, data)
		n := tr.drain()
		if early := n[checkDebounce] == 0; early != step.early {
			t.Fatalf("%s: read early %v (%d reads at the debounce's end), want %v", step.name, early, n[checkDebounce], step.early)
		}
		if !step.early {
			continue
		}
		// Let the debounce expire, which ends the window.
		tr.waitFor(t, checkDebounce)
	}
}

func FuzzParseInotify(f *testing.F) {
	f.Add(inotifyBytes(inotifyEvent{1, unix.IN_CLOSE_WRITE, "strategy.py"}, inotifyEvent{1, unix.IN_MODIFY, "strategy.py"}))
	f.Add(inotifyBytes(inotifyEvent{-1, unix.IN_Q_OVERFLOW, ""}))
	f.Add(inotifyBytes(inotifyEvent{1, unix.IN_MOVED_TO, "a"})[:20])
	f.Add([]byte{})
	c := &renameWatcher{wd: 1, base: "strategy.py"}
	f.Fuzz(func(t *testing.T, buf []byte) {
		got, err := parseAll(buf)
		for _, ev := range got {
			if len(ev.name) > len(buf) || bytes.IndexByte([]byte(ev.name), 0) >= 0 {
				t.Fatalf("parsed a name %q out of %d bytes", ev.name, len(buf))
			}
		}
		if sig := c.summarize(buf); err != nil && !sig.lost {
			t.Fatalf("a malformed read (%v) summarized as %+v, not as lost events", err, sig)
		}
		if err != nil {
			return
		}
		// What parses is what encodes to it, padding aside.
		again, err := parseAll(inotifyBytes(got...))
		if err != nil || !slices.Equal(again, got) {
			t.Fatalf("re-encoded %v parses as %v, %v", got, again, err)
		}
	})
}

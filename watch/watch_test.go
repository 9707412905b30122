package watch

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

func TestOneChangePerSave(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		for _, style := range saveStyles {
			t.Run(mode.name+"/"+style.name, func(t *testing.T) {
				t.Parallel()
				path, content := newStrategy(t)
				r := startWatcher(t, path, mode.opts)
				r.expect(t, Changed, content)
				// The second save checks that the folder watch survived the
				// first one replacing the file.
				for i := range 2 {
					data := fmt.Appendf(nil, "%s# save %d\n", content, i)
					r.save(t, style.save, path, data)
				}
			})
		}
	}
}

func TestDefaultOptions(t *testing.T) {
	t.Parallel()
	path, content := newStrategy(t)
	r := startWatcher(t, path, Options{})
	r.expect(t, Changed, content)
	for i, save := range []func(testing.TB, string, []byte){saveInPlace, saveAtomic, saveJetBrains} {
		data := fmt.Appendf(nil, "%s# save %d\n", content, i)
		r.save(t, save, path, data)
	}
}

func TestNoChangeWithoutNewContent(t *testing.T) {
	t.Parallel()
	noops := []struct {
		name string
		do   func(t testing.TB, path string, content []byte)
	}{
		{"touch", func(t testing.TB, path string, _ []byte) {
			later := time.Now().Add(time.Minute)
			if err := os.Chtimes(path, later, later); err != nil {
				t.Fatal(err)
			}
		}},
		{"chmod", func(t testing.TB, path string, _ []byte) {
			if err := os.Chmod(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"same content in place", saveInPlace},
		{"same content by rename", saveAtomic},
		{"vim write without edits", saveVim},
	}
	for _, mode := range modes {
		for _, noop := range noops {
			t.Run(mode.name+"/"+noop.name, func(t *testing.T) {
				t.Parallel()
				path, content := newStrategy(t)
				r := startWatcher(t, path, mode.opts)
				r.expect(t, Changed, content)
				r.unchanged(t, content, func() { noop.do(t, path, content) })
				// The watcher is still alive: a real edit is reported.
				edited := append(content, "# edited\n"...)
				r.save(t, saveInPlace, path, edited)
			})
		}
	}
}

func TestDeleteThenRecreate(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			path, content := newStrategy(t)
			r := startWatcher(t, path, mode.opts)
			r.expect(t, Changed, content)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			c := r.expectOne(t, Missing, nil)
			if !errors.Is(c.Err, fs.ErrNotExist) {
				t.Errorf("Missing carries %v, want a not-exist error", c.Err)
			}
			// The same content as before the delete is still a change: the
			// owner last heard that the file was gone.
			r.save(t, saveAtomic, path, content)
		})
	}
}

func TestMissingAtStart(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "strategy.py")
			r := startWatcher(t, path, mode.opts)
			r.expectOne(t, Missing, nil)
			data := []byte("def on_data(ctx, history): pass\n")
			r.save(t, saveInPlace, path, data)
		})
	}
}

func TestSymlinkedFolder(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			real, content := newStrategy(t)
			link := filepath.Join(t.TempDir(), "project")
			if err := os.Symlink(filepath.Dir(real), link); err != nil {
				t.Fatal(err)
			}
			viaLink := filepath.Join(link, "strategy.py")
			w, err := New(viaLink, mode.opts)
			if err != nil {
				t.Fatal(err)
			}
			wantPath, err := filepath.EvalSymlinks(real)
			if err != nil {
				t.Fatal(err)
			}
			if w.Path() != wantPath {
				t.Errorf("Path() = %s, want %s", w.Path(), wantPath)
			}
			r := runWatcher(t, w)
			r.expect(t, Changed, content)
			for i, path := range []string{viaLink, real} {
				data := fmt.Appendf(nil, "%s# save %d\n", content, i)
				r.save(t, saveAtomic, path, data)
			}
		})
	}
}

func TestSymlinkedFile(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			target, content := newStrategy(t)
			link := filepath.Join(t.TempDir(), "strategy.py")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			r := startWatcher(t, link, mode.opts)
			r.expect(t, Changed, content)
			data := append(content, "# via the link\n"...)
			r.save(t, saveInPlace, link, data)
			data = append(content, "# the target itself\n"...)
			r.save(t, saveJetBrains, target, data)
		})
	}
}

func TestFallbackToPollingOnInotifyLimits(t *testing.T) {
	t.Parallel()
	limits := []struct {
		errno syscall.Errno
		fix   string
	}{
		{syscall.ENOSPC, "sudo sysctl fs.inotify.max_user_watches=524288"},
		{syscall.EMFILE, "sudo sysctl fs.inotify.max_user_instances=512"},
	}
	for _, limit := range limits {
		t.Run(limit.errno.Error(), func(t *testing.T) {
			t.Parallel()
			path, content := newStrategy(t)
			w, err := New(path, Options{Debounce: testDebounce, PollInterval: testPoll})
			if err != nil {
				t.Fatal(err)
			}
			w.watchDir = func(string) (*fsnotify.Watcher, error) {
				// As fsnotify.NewWatcher and Watcher.Add return them.
				return nil, fmt.Errorf("couldn't initialize inotify: %w", limit.errno)
			}
			r := runWatcher(t, w)
			warning := r.expect(t, Warning, nil)
			if !errors.Is(warning.Err, limit.errno) {
				t.Errorf("warning %q does not wrap %v", warning.Err, limit.errno)
			}
			for _, want := range []string{limit.fix, "/etc/sysctl.d/", "polling every 50ms"} {
				if !strings.Contains(warning.Err.Error(), want) {
					t.Errorf("warning %q lacks %q", warning.Err, want)
				}
			}
			r.expect(t, Changed, content)
			data := append(content, "# polled\n"...)
			r.save(t, saveAtomic, path, data)
		})
	}
}

func TestFallbackError(t *testing.T) {
	cases := []struct {
		err  error
		want []string
	}{
		{fmt.Errorf("watch folder /x: %w", syscall.ENOSPC), []string{
			"inotify watch limit reached", "no space left on device", "polling every 500ms",
			"sudo sysctl fs.inotify.max_user_watches=524288",
			"echo fs.inotify.max_user_watches=524288 | sudo tee /etc/sysctl.d/90-inotify.conf",
		}},
		{fmt.Errorf("couldn't initialize inotify: %w", syscall.EMFILE), []string{
			"inotify instance limit reached", "too many open files", "polling every 500ms",
			"sudo sysctl fs.inotify.max_user_instances=512",
			"echo fs.inotify.max_user_instances=512 | sudo tee /etc/sysctl.d/90-inotify.conf",
		}},
		{fmt.Errorf("couldn't initialize inotify: %w", syscall.ENOSYS), []string{
			"inotify unavailable", "function not implemented", "polling every 500ms",
		}},
	}
	for _, tc := range cases {
		got := fallbackError(tc.err, DefaultPollInterval)
		if !errors.Is(got, tc.err) {
			t.Errorf("fallbackError(%v) does not wrap its cause", tc.err)
		}
		for _, want := range tc.want {
			if !strings.Contains(got.Error(), want) {
				t.Errorf("fallbackError(%v) = %q, lacks %q", tc.err, got, want)
			}
		}
		if errors.Is(tc.err, syscall.ENOSYS) && strings.Contains(got.Error(), "sysctl") {
			t.Errorf("fallbackError(%v) = %q suggests a sysctl that cannot help", tc.err, got)
		}
	}
}

func TestEventOverflowRereads(t *testing.T) {
	t.Parallel()
	path, content := newStrategy(t)
	w, err := New(path, Options{Debounce: testDebounce})
	if err != nil {
		t.Fatal(err)
	}
	// Watch an unrelated folder, so that the edit below sends no event the
	// watcher sees: only the overflow can make it read the file again.
	other := t.TempDir()
	notifier := make(chan *fsnotify.Watcher, 1)
	w.watchDir = func(string) (*fsnotify.Watcher, error) {
		fw, err := watchDir(other)
		notifier <- fw
		return fw, err
	}
	// Nor may the kernel's word that the file was closed.
	w.watchRenames = func(string) (*renameWatcher, error) { return nil, errors.ErrUnsupported }
	r := runWatcher(t, w)
	fw := <-notifier
	if fw == nil {
		t.Fatal("watchDir failed")
	}
	r.expect(t, Changed, content)
	edited := append(content, "# unseen edit\n"...)
	saveInPlace(t, path, edited)
	r.none(t)
	fw.Errors <- fsnotify.ErrEventOverflow
	warning := r.expect(t, Warning, nil)
	if !errors.Is(warning.Err, fsnotify.ErrEventOverflow) {
		t.Errorf("warning %q does not wrap the overflow", warning.Err)
	}
	r.expectOne(t, Changed, edited)
}

func TestFolderGoneFallsBackToPolling(t *testing.T) {
	t.Parallel()
	ways := []struct {
		name string
		gone func(dir string) error
	}{
		{"removed", os.RemoveAll},
		{"moved", func(dir string) error { return os.Rename(dir, dir+".old") }},
	}
	for _, way := range ways {
		for _, modules := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/modules=%v", way.name, modules), func(t *testing.T) {
				t.Parallel()
				dir := filepath.Join(t.TempDir(), "project")
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(dir, "strategy.py")
				content := []byte("def on_data(ctx, history): pass\n")
				write(t, path, content)
				r := startWatcher(t, path, Options{Debounce: testDebounce, PollInterval: testPoll, Modules: modules})
				r.expect(t, Changed, content)
				if err := way.gone(dir); err != nil {
					t.Fatal(err)
				}
				// Which of the Warning and the Missing comes first depends on
				// whether the file's removal or the folder's is seen first.
				kinds := map[Kind]Change{}
				for range 2 {
					c := r.next(t)
					kinds[c.Kind] = c
				}
				if _, ok := kinds[Missing]; !ok {
					t.Fatalf("got %v, want a Missing", kinds)
				}
				warning, ok := kinds[Warning]
				if !ok || !strings.Contains(warning.Err.Error(), "polling every 50ms") {
					t.Fatalf("got %v, want a warning about polling", kinds)
				}
				r.none(t)
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				r.save(t, saveInPlace, path, content)
			})
		}
	}
}

func TestTooLargeIsAWarning(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			path, content := newStrategy(t)
			r := startWatcher(t, path, mode.opts)
			r.expect(t, Changed, content)
			// A sparse file: large to read, cheap to make.
			if err := os.Truncate(path, MaxFileSize+1); err != nil {
				t.Fatal(err)
			}
			warning := r.expectOne(t, Warning, nil)
			if !strings.Contains(warning.Err.Error(), "larger than 16 MiB") {
				t.Errorf("warning %q does not give the limit", warning.Err)
			}
			// The last state reported had this content: nothing new.
			r.unchanged(t, content, func() { saveInPlace(t, path, content) })
			edited := append(content, "# smaller\n"...)
			r.save(t, saveInPlace, path, edited)
		})
	}
}

func TestFIFODoesNotBlock(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			path, content := newStrategy(t)
			r := startWatcher(t, path, mode.opts)
			r.expect(t, Changed, content)
			fifo := path + ".fifo"
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(fifo, path); err != nil {
				t.Fatal(err)
			}
			warning := r.expectOne(t, Warning, nil)
			if !strings.Contains(warning.Err.Error(), "not a regular file") {
				t.Errorf("warning %q does not say why", warning.Err)
			}
			edited := append(content, "# a file again\n"...)
			r.save(t, saveAtomic, path, edited)
		})
	}
}

func TestSlowOwnerGetsTheLatestState(t *testing.T) {
	t.Parallel()
	path, content := newStrategy(t)
	w, err := New(path, Options{Debounce: testDebounce})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	// Nobody receives while the file changes three times and disappears
	// once; each state is held for several debounce periods so that the
	// watcher observes it.
	var last []byte
	for i := range 3 {
		last = fmt.Appendf(nil, "%s# save %d\n", content, i)
		saveAtomic(t, path, last)
		time.Sleep(3 * testDebounce)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * testDebounce)
	saveInPlace(t, path, last)
	time.Sleep(quiet)
	select {
	case c := <-w.Changes():
		if c.Kind != Changed || c.Hash != sha256.Sum256(last) {
			t.Fatalf("got %s %x, want the last content", c.Kind, c.Hash[:6])
		}
	case <-time.After(patience):
		t.Fatal("no change")
	}
	select {
	case c := <-w.Changes():
		t.Fatalf("got a second change %s: states did not coalesce", c.Kind)
	case <-time.After(quiet):
	}
}

func TestOutboxCoalesces(t *testing.T) {
	a := Change{Kind: Changed, Hash: sha256.Sum256([]byte("a"))}
	b := Change{Kind: Changed, Hash: sha256.Sum256([]byte("b"))}
	var o outbox
	if _, ok := o.next(); ok {
		t.Fatal("an empty outbox offers a change")
	}
	o.set(a)
	if c, ok := o.next(); !ok || c.Hash != a.Hash {
		t.Fatalf("next = %v %v, want a", c, ok)
	}
	o.sent()
	o.set(b)
	o.set(Change{Kind: Missing})
	o.set(a)
	if c, ok := o.next(); ok {
		t.Fatalf("back to the delivered state, next offers %s", c.Kind)
	}
	o.set(b)
	o.warn(errors.New("first"))
	o.warn(errors.New("first"))
	o.warn(errors.New("second"))
	var got []string
	for {
		c, ok := o.next()
		if !ok {
			break
		}
		o.sent()
		if c.Kind == Warning {
			got = append(got, c.Err.Error())
		} else {
			got = append(got, c.Kind.String())
		}
	}
	if want := "first second changed"; strings.Join(got, " ") != want {
		t.Errorf("delivered %q, want %q", got, want)
	}
	for i := range maxPendingWarnings + 3 {
		o.warn(fmt.Errorf("warning %d", i))
	}
	if len(o.warnings) != maxPendingWarnings || o.warnings[0].Err.Error() != "warning 0" {
		t.Errorf("pending warnings %d starting with %v, want the first %d", len(o.warnings), o.warnings[0].Err, maxPendingWarnings)
	}
}

func TestRunEndsCleanly(t *testing.T) {
	before := runtime.NumGoroutine()
	path, content := newStrategy(t)
	w, err := New(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	if c := <-w.Changes(); c.Kind != Changed || c.Hash != sha256.Sum256(content) {
		t.Fatalf("first change %s, want Changed", c.Kind)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, open := <-w.Changes(); open {
		t.Error("Changes is still open after Run returned")
	}
	if err := w.Run(context.Background()); err == nil {
		t.Error("a second Run did not fail")
	}
	// fsnotify's reader goroutine has ended when Close returns; allow the
	// runtime a moment to retire the goroutines that just exited.
	deadline := time.Now().Add(patience)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Run, %d before", n, before)
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "data.csv")
	write(t, file, nil)
	cases := []struct {
		name string
		path string
		opts Options
		want string
	}{
		{"empty path", "", Options{}, "empty path"},
		{"missing folder", filepath.Join(dir, "nope", "strategy.py"), Options{}, "folder"},
		{"folder is a file", filepath.Join(file, "strategy.py"), Options{}, "not a directory"},
		{"path is a folder", dir, Options{}, "is a directory"},
		{"negative debounce", filepath.Join(dir, "s.py"), Options{Debounce: -time.Second}, "negative debounce"},
		{"negative interval", filepath.Join(dir, "s.py"), Options{PollInterval: -time.Second}, "negative poll interval"},
		{"negative settle", filepath.Join(dir, "s.py"), Options{Settle: -time.Millisecond}, "negative settle time"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.path, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New(%q) error %v, want one mentioning %q", tc.path, err, tc.want)
			}
		})
	}
}

func TestRemoteFilesystemsAreNamed(t *testing.T) {
	// Magic numbers from statfs(2); the local filesystems of this machine
	// must not be mistaken for remote ones.
	remote := map[uint32]string{0x6969: "NFS", 0xff534d42: "SMB", 0x01021997: "9p", 0x65735546: "FUSE"}
	for magic, want := range remote {
		if got, ok := remoteFSName(magic); !ok || got != want {
			t.Errorf("remoteFSName(%#x) = %q, %v; want %q", magic, got, ok, want)
		}
	}
	for _, local := range []uint32{0xef53 /* ext4 */, 0x01021994 /* tmpfs */, 0x9123683e /* btrfs */, 0x58465342 /* xfs */} {
		if got, ok := remoteFSName(local); ok {
			t.Errorf("remoteFSName(%#x) = %q, want a local filesystem", local, got)
		}
	}
}

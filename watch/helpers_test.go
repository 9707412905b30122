package watch

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Test timing: the debounce is longer than the default so that a slow CI
// machine does not split one save's syscalls into two bursts, and counts are
// asserted after a quiet period several debounces long, never as timings.
const (
	testDebounce = 150 * time.Millisecond
	testPoll     = 50 * time.Millisecond
	quiet        = 500 * time.Millisecond
	patience     = 10 * time.Second
)

var modes = []struct {
	name string
	opts Options
}{
	{"events", Options{Debounce: testDebounce}},
	{"poll", Options{Debounce: testDebounce, Poll: true, PollInterval: testPoll}},
}

// recorder receives a Watcher's changes as soon as they are sent, so that
// the watcher's coalescing for slow owners cannot hide a duplicate report.
type recorder struct {
	w       *Watcher
	changes chan Change
	stalls  *stallMonitor
}

// startWatcher runs a Watcher on path until the test ends.
func startWatcher(t *testing.T, path string, opts Options) *recorder {
	t.Helper()
	w, err := New(path, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return runWatcher(t, w)
}

func runWatcher(t *testing.T, w *Watcher) *recorder {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &recorder{w: w, changes: make(chan Change, 1000), stalls: newStallMonitor()}
	runErr := make(chan error, 1)
	collected := make(chan struct{})
	go r.stalls.run(ctx)
	go func() { runErr <- w.Run(ctx) }()
	go func() {
		defer close(collected)
		for c := range w.Changes() {
			r.changes <- c
		}
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-runErr; err != nil {
			t.Errorf("Run: %v", err)
		}
		<-collected
	})
	return r
}

// next returns the next change, failing the test if none comes.
func (r *recorder) next(t *testing.T) Change {
	t.Helper()
	select {
	case c := <-r.changes:
		return c
	case <-time.After(patience):
		t.Fatalf("no change within %s", patience)
		return Change{}
	}
}

// expect receives the next change and checks its kind and, for Changed, the
// hash of want.
func (r *recorder) expect(t *testing.T, kind Kind, want []byte) Change {
	t.Helper()
	c := r.next(t)
	if c.Kind != kind {
		t.Fatalf("got %s (err %v), want %s", c.Kind, c.Err, kind)
	}
	if kind == Changed && c.Hash != sha256.Sum256(want) {
		t.Fatalf("Changed hash %x, want the hash of %q", c.Hash[:6], want)
	}
	return c
}

// none checks that no change arrives within the quiet period.
func (r *recorder) none(t *testing.T) {
	t.Helper()
	select {
	case c := <-r.changes:
		t.Fatalf("unexpected %s (hash %x, err %v)", c.Kind, c.Hash[:6], c.Err)
	case <-time.After(quiet):
	}
}

// expectOne receives exactly one change of kind within the quiet period.
func (r *recorder) expectOne(t *testing.T, kind Kind, want []byte) Change {
	t.Helper()
	c := r.expect(t, kind, want)
	r.none(t)
	return c
}

// save saves data to path with style and checks that the watcher reports
// it with exactly one Changed.
func (r *recorder) save(t *testing.T, style func(testing.TB, string, []byte), path string, data []byte) {
	t.Helper()
	since := time.Now().Add(-quiet) // late events of the previous step count
	began := time.Now()
	style(t, path, data)
	took := time.Since(began)
	got := r.collect(t)
	if len(got) == 1 && got[0].Kind == Changed && got[0].Hash == sha256.Sum256(data) {
		return
	}
	// The save itself may have been held up between its steps (its
	// thread not scheduled while the process's others ran, which the
	// stall monitor cannot see): then the watcher saw a half-done save
	// for that long, as it would an editor's.
	if took >= r.w.opts.Debounce/2 {
		t.Logf("the save took %s, longer than half the %s debounce: checking the final state only", took, r.w.opts.Debounce)
	} else {
		r.excuse(t, since, got)
	}
	if last := got[len(got)-1]; last.Kind != Changed || last.Hash != sha256.Sum256(data) {
		t.Fatalf("last change %s %x, want Changed with the saved content", last.Kind, last.Hash[:6])
	}
}

// unchanged runs fn, which rewrites the content already reported, touches
// or chmods the file, and checks that the watcher reports nothing.
func (r *recorder) unchanged(t *testing.T, content []byte, fn func()) {
	t.Helper()
	since := time.Now().Add(-quiet)
	fn()
	var got []Change
	for {
		select {
		case c := <-r.changes:
			got = append(got, c)
			continue
		case <-time.After(quiet):
		}
		break
	}
	if len(got) == 0 {
		return
	}
	r.excuse(t, since, got)
	if last := got[len(got)-1]; last.Kind != Changed || last.Hash != sha256.Sum256(content) {
		t.Fatalf("last change %s %x, want Changed with the unchanged content", last.Kind, last.Hash[:6])
	}
}

// collect receives at least one change, then every change until none comes
// for the quiet period.
func (r *recorder) collect(t *testing.T) []Change {
	t.Helper()
	got := []Change{r.next(t)}
	for {
		select {
		case c := <-r.changes:
			got = append(got, c)
		case <-time.After(quiet):
			return got
		}
	}
}

// excuse fails the test for an unexpected series of changes, unless the
// machine stalled for long enough since the step began that parts of one
// save could be quiet for a whole debounce period: then the watcher rightly
// reported them apart, and the caller checks only the final state.
func (r *recorder) excuse(t *testing.T, since time.Time, got []Change) {
	t.Helper()
	kinds := make([]string, len(got))
	for i, c := range got {
		kinds[i] = fmt.Sprintf("%s %x", c.Kind, c.Hash[:6])
	}
	stall := r.stalls.longest(since)
	if stall < r.w.opts.Debounce/2 {
		t.Fatalf("got %s; the longest stall of the test process was %s", strings.Join(kinds, ", "), stall)
	}
	t.Logf("got %s after a %s stall of the test process, longer than half the %s debounce: checking the final state only",
		strings.Join(kinds, ", "), stall, r.w.opts.Debounce)
}

// stallMonitor records how late a 5 ms ticker runs, which shows when a
// loaded machine has not scheduled the test process for a while.
type stallMonitor struct {
	mu     sync.Mutex
	stalls []stall
}

type stall struct {
	end time.Time
	gap time.Duration
}

func newStallMonitor() *stallMonitor { return &stallMonitor{} }

func (m *stallMonitor) run(ctx context.Context) {
	const every = 5 * time.Millisecond
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	prev := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			now := time.Now()
			if gap := now.Sub(prev); gap > 4*every {
				m.mu.Lock()
				m.stalls = append(m.stalls, stall{end: now, gap: gap})
				m.mu.Unlock()
			}
			prev = now
		}
	}
}

// longest returns the longest stall that ended after since.
func (m *stallMonitor) longest(since time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	var longest time.Duration
	for _, s := range m.stalls {
		if s.end.After(since) && s.gap > longest {
			longest = s.gap
		}
	}
	return longest
}

func write(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func newStrategy(t *testing.T) (path string, content []byte) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "strategy.py")
	content = []byte("def on_data(ctx, history):\n    pass\n")
	write(t, path, content)
	return path, content
}

// A saveStyle writes data to path the way an editor does.
type saveStyle struct {
	name string
	save func(t testing.TB, path string, data []byte)
}

var saveStyles = []saveStyle{
	{"in-place", saveInPlace},
	{"atomic-rename", saveAtomic},
	{"jetbrains", saveJetBrains},
	{"vim", saveVim},
	{"burst", saveBurst},
}

// saveInPlace truncates and writes the file (nano, VS Code by default).
func saveInPlace(t testing.TB, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	half := len(data) / 2
	for _, part := range [][]byte{data[:half], data[half:]} {
		if _, err := f.Write(part); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// saveAtomic writes a temporary file and renames it over the original.
func saveAtomic(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp, err := os.CreateTemp(filepath.Dir(path), ".strategy.py.tmp*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmp.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		t.Fatal(err)
	}
}

// saveJetBrains follows IntelliJ's safe write: write a temporary file, move
// the original aside, move the temporary file in, delete the original.
func saveJetBrains(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp, old := path+"___jb_tmp___", path+"___jb_old___"
	write(t, tmp, data)
	if err := os.Rename(path, old); err != nil {
		t.Fatal(err)
	}
	// An editor takes a moment between the two renames; the file is
	// missing meanwhile, and that must not be reported.
	time.Sleep(5 * time.Millisecond)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(old); err != nil {
		t.Fatal(err)
	}
}

// saveVim writes the way vim does with its swap and backup files: the swap
// file exists around the edit, a backup copy is made, the file is written in
// place and its mode restored, the backup is removed.
func saveVim(t testing.TB, path string, data []byte) {
	t.Helper()
	dir, base := filepath.Dir(path), filepath.Base(path)
	swp, swx, backup := filepath.Join(dir, "."+base+".swp"), filepath.Join(dir, "."+base+".swx"), path+"~"
	write(t, swp, []byte("b0VIM 9.0"))
	write(t, swx, nil)
	if err := os.Remove(swx); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	write(t, backup, old)
	saveInPlace(t, path, data)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{backup, swp} {
		if err := os.Remove(name); err != nil {
			t.Fatal(err)
		}
	}
}

// saveBurst saves five times, 20 ms apart, ending with data.
func saveBurst(t testing.TB, path string, data []byte) {
	t.Helper()
	for i := range 4 {
		saveInPlace(t, path, fmt.Appendf(nil, "# draft %d\n%s", i, data))
		time.Sleep(20 * time.Millisecond)
	}
	saveInPlace(t, path, data)
}

package watch

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// newProject writes a strategy with a sibling module, a package and a data
// file, and returns the strategy's path and content.
func newProject(t *testing.T) (dir, path string, content []byte) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "strategy.py")
	content = []byte("import helpers\nfrom pkg import mod\n\ndef on_data(ctx, history):\n    pass\n")
	write(t, path, content)
	write(t, filepath.Join(dir, "helpers.py"), []byte("X = 1\n"))
	if err := os.Mkdir(filepath.Join(dir, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "pkg", "__init__.py"), nil)
	write(t, filepath.Join(dir, "pkg", "mod.py"), []byte("Y = 2\n"))
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "data", "bars.csv"), []byte("timestamp,symbol,open,high,low,close,volume\n"))
	return dir, path, content
}

// expectCause receives exactly one Changed caused by cause, with the
// strategy's content unchanged.
func (r *recorder) expectCause(t *testing.T, since time.Time, strategy []byte, cause string) {
	t.Helper()
	got := r.collect(t)
	if len(got) != 1 {
		r.excuse(t, since, got)
		got = got[len(got)-1:]
	}
	c := got[0]
	if c.Kind != Changed || c.Hash != sha256.Sum256(strategy) {
		t.Fatalf("got %s %x, want Changed with the strategy's content", c.Kind, c.Hash[:6])
	}
	if c.Cause != cause {
		t.Fatalf("Cause %q, want %q", c.Cause, cause)
	}
}

func TestModulesAndInputsAreWatched(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			dir, path, content := newProject(t)
			opts := mode.opts
			opts.Modules = true
			opts.Inputs = []string{filepath.Join(dir, "data", "bars.csv")}
			r := startWatcher(t, path, opts)
			first := r.expect(t, Changed, content)
			if first.Modules != 3 || len(first.Inputs) != 1 || first.Cause != "" {
				t.Fatalf("first report: %d modules, inputs %q, cause %q; want 3 (helpers.py, pkg/__init__.py, pkg/mod.py), the data file, no cause",
					first.Modules, first.Inputs, first.Cause)
			}
			steps := []struct {
				cause string
				do    func()
			}{
				{"helpers.py", func() { saveInPlace(t, filepath.Join(dir, "helpers.py"), []byte("X = 10\n")) }},
				{"helpers.py", func() { saveAtomic(t, filepath.Join(dir, "helpers.py"), []byte("X = 11\n")) }},
				{filepath.Join("pkg", "mod.py"), func() { saveInPlace(t, filepath.Join(dir, "pkg", "mod.py"), []byte("Y = 3\n")) }},
				{opts.Inputs[0], func() {
					saveInPlace(t, opts.Inputs[0], []byte("timestamp,symbol,open,high,low,close,volume\n1,A,1,1,1,1,1\n"))
				}},
				{"fresh.py", func() { write(t, filepath.Join(dir, "fresh.py"), []byte("Z = 1\n")) }},
			}
			for _, s := range steps {
				since := time.Now().Add(-quiet)
				s.do()
				r.expectCause(t, since, content, s.cause)
			}
			// Files that are no module and no input change nothing.
			r.unchanged(t, content, func() {
				write(t, filepath.Join(dir, "notes.txt"), []byte("remember\n"))
				write(t, filepath.Join(dir, "data", "README"), []byte("bars\n"))
				touch := time.Now().Add(time.Minute)
				if err := os.Chtimes(filepath.Join(dir, "helpers.py"), touch, touch); err != nil {
					t.Fatal(err)
				}
			})
			// The strategy itself is still reported with no cause.
			data := append(content, "# saved\n"...)
			r.save(t, saveInPlace, path, data)
		})
	}
}

func TestModulesOffWatchesTheStrategyOnly(t *testing.T) {
	t.Parallel()
	dir, path, content := newProject(t)
	r := startWatcher(t, path, Options{Debounce: testDebounce})
	first := r.expect(t, Changed, content)
	if first.Modules != 0 || first.Inputs != nil || first.Deps != [32]byte{} {
		t.Fatalf("without Modules and Inputs: %d modules, inputs %q, deps %x", first.Modules, first.Inputs, first.Deps[:4])
	}
	r.unchanged(t, content, func() { write(t, filepath.Join(dir, "helpers.py"), []byte("X = 2\n")) })
}

// An in-place save truncates the file, then writes it. Under load the two
// can be more than a debounce apart; the watcher must not report a run of an
// empty strategy in between.
func TestEmptyContentWaitsASecondDebounce(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			path, content := newStrategy(t)
			r := startWatcher(t, path, mode.opts)
			r.expect(t, Changed, content)

			since := time.Now().Add(-quiet)
			data := append(content, "# saved late\n"...)
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(mode.opts.Debounce * 3 / 2) // one debounce passes with the file empty
			if _, err := f.Write(data); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			got := r.collect(t)
			if len(got) != 1 || got[0].Hash != sha256.Sum256(data) {
				for _, c := range got {
					if c.Hash == emptyHash {
						// Only a stall of a whole second debounce excuses it.
						if stall := r.stalls.longest(since); stall < mode.opts.Debounce/2 {
							t.Fatalf("an empty file was reported %s after the truncation; the longest stall was %s", c.Time.Sub(since.Add(quiet)), stall)
						}
					}
				}
				r.excuse(t, since, got)
			}

			// A file the user really emptied is reported, one debounce later.
			saveInPlace(t, path, nil)
			r.expectOne(t, Changed, nil)
		})
	}
}

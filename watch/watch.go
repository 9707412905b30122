// Package watch reports when a strategy file's content changes, so that the
// workbench can re-run the backtest once per save.
//
// A Watcher watches the file's folder rather than the file, because editors
// that save by renaming a temporary file over the original (VS Code, JetBrains,
// vim with backupcopy=no) would drop a watch on the file itself. Events on the
// file's name reset a trailing debounce timer; when the folder has been quiet
// for the debounce period the file is read and hashed, and a Change is
// reported only if the SHA-256 differs from the last state reported. One save,
// whatever the editor's sequence of writes and renames, is one Change; a save
// that does not change the content (touch, vim :w without edits) is none.
//
// On Linux the wait ends early for one kind of save: an editor's atomic
// save, which writes the new content to a temporary file and renames it
// onto the strategy's name. The kernel then sends IN_MOVED_TO, which
// fsnotify cannot tell apart from a creation: a second inotify instance on
// the folder asks for it, and the file is read after Options.Settle (a few
// milliseconds that gather what follows) instead of after the debounce; a
// write, creation, removal or rename away of the file in the meantime,
// seen in the same queue and so in order, cancels the early read. Only
// the rename says the content is whole: IN_CLOSE_WRITE, sent when *a*
// writer closes the file, says nothing of other writers or of the same one
// opening it again, so an in-place save still waits the debounce. And only
// a lone save is read early: the first rename after a quiet debounce (a
// stream of saves is gathered as before), of a strategy with nothing else
// watched that could change with it (no module file beside it, no input:
// a checkout or a copy of several files, the strategy first, must be one
// run once the folder is quiet, whatever the gaps between the files). The
// early read is believed only if it finds a regular, non-empty file;
// anything else is left to the debounce, which still runs and finds the
// same state (no second Change). Where the second instance cannot be made
// (its limits, other systems, polling) the Watcher waits the debounce
// every time.
//
// Where file events are unavailable (inotify limits reached, network and FUSE
// filesystems, Options.Poll) the Watcher polls the file's size and
// modification time, hashing the content when they change and every few
// polls.
package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Kind says what a Change reports.
type Kind int

// The kinds of Change.
const (
	// Changed: the file exists and its content differs from the last state
	// reported. The first state observed is always reported, so the owner can
	// run once at start.
	Changed Kind = iota + 1
	// Missing: the file is gone (the workbench shows "waiting for
	// strategy.py"). When it comes back, with any content, that is a Changed.
	Missing
	// Warning: a problem the user must see that does not stop the watching,
	// such as a fallback to polling or a file too large to read.
	Warning
)

// String returns the kind's name in lower case.
func (k Kind) String() string {
	switch k {
	case Changed:
		return "changed"
	case Missing:
		return "missing"
	case Warning:
		return "warning"
	default:
		return fmt.Sprintf("Kind(%d)", int(k))
	}
}

// Change is one report of a Watcher.
type Change struct {
	Kind Kind
	// Hash is the SHA-256 of the file's content when Kind is Changed.
	Hash [32]byte
	// Err is the problem for a Warning, and the error that showed the file
	// gone for a Missing. Its text is written for the user.
	Err error
	// Time is when the state was observed or the problem occurred.
	Time time.Time

	// Deps is the digest of the dependencies' state when Kind is Changed
	// (Options.Modules, Options.Inputs); zero when none are watched. A
	// change of a dependency alone is a Changed with the same Hash.
	Deps [32]byte
	// Cause names the file whose change this report is, when it is not the
	// strategy: a module relative to the strategy's folder, or an input as
	// Options.Inputs gave it. Empty for the first report.
	Cause string
	// Modules is the number of module files watched besides the strategy,
	// and Inputs the inputs, when Kind is Changed: what the workbench says
	// it watches.
	Modules int
	Inputs  []string
}

// MaxFileSize is the largest strategy file a Watcher reads; a larger file is
// reported as a Warning and keeps the last state.
const MaxFileSize = 16 << 20

// Default option values.
const (
	DefaultDebounce     = 75 * time.Millisecond
	DefaultPollInterval = 500 * time.Millisecond
	DefaultSettle       = 5 * time.Millisecond
)

// Options tune a Watcher. The zero value is ready to use.
type Options struct {
	// Debounce is how long the file's name must be free of events before the
	// file is read (default 75 ms).
	Debounce time.Duration
	// Settle is how long the Watcher waits, once the kernel has said that
	// a file was renamed onto the file's name (a lone atomic save: see the
	// package comment; Linux with file events only), before it reads the
	// file instead of waiting out the Debounce. A write, creation or
	// removal of the file within it cancels the early read. If Settle is
	// zero, DefaultSettle (5 ms) is used.
	Settle time.Duration
	// Poll forces polling instead of file events.
	Poll bool
	// PollInterval is the time between two polls (default 500 ms). It also
	// applies when the Watcher falls back to polling on its own.
	PollInterval time.Duration
	// Modules also watches the Python modules the strategy may import from
	// its folder: the folder's .py files and those of the packages (folders
	// with an __init__.py) below it, at most 256 files four levels deep.
	// Their content is compared, as the strategy's.
	Modules bool
	// Inputs are other files or folders the run reads (the data): a change
	// to one is a Changed. Files up to MaxFileSize are compared by content,
	// larger ones and a folder's entries by size and modification time.
	Inputs []string
}

// A Watcher reports the changes of one file on its Changes channel while Run
// runs. Create it with New.
type Watcher struct {
	path    string // cleaned absolute path, folder symlinks resolved
	dir     string // filepath.Dir(path)
	opts    Options
	deps    *deps
	changes chan Change
	running atomic.Bool

	// watchDir starts file events for a folder; tests replace it to exercise
	// the fallback to polling.
	watchDir func(dir string) (*fsnotify.Watcher, error)
	// watchRenames starts the second inotify instance on the file's folder;
	// tests replace it to make it fail or to hold the instance.
	watchRenames func(path string) (*renameWatcher, error)
	// checked, when set (by tests), is called by Run's goroutine after each
	// read of the file with the reason for it.
	checked func(checkReason)
}

// New returns a Watcher for the file at path. The file need not exist yet,
// but its folder must. Symbolic links in the folder's path, and a symbolic
// link at path itself, are resolved once, here.
func New(path string, opts Options) (*Watcher, error) {
	if path == "" {
		return nil, errors.New("watch: empty path")
	}
	if opts.Debounce < 0 {
		return nil, fmt.Errorf("watch %s: negative debounce %s", path, opts.Debounce)
	}
	if opts.PollInterval < 0 {
		return nil, fmt.Errorf("watch %s: negative poll interval %s", path, opts.PollInterval)
	}
	if opts.Settle < 0 {
		return nil, fmt.Errorf("watch %s: negative settle time %s", path, opts.Settle)
	}
	if opts.Settle == 0 {
		opts.Settle = DefaultSettle
	}
	if opts.Debounce == 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = DefaultPollInterval
	}
	resolved, err := resolve(path)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", path, err)
	}
	deps, err := newDeps(resolved, opts)
	if err != nil {
		return nil, err
	}
	return &Watcher{
		deps:         deps,
		path:         resolved,
		dir:          filepath.Dir(resolved),
		opts:         opts,
		changes:      make(chan Change),
		watchDir:     watchDir,
		watchRenames: watchRenames,
	}, nil
}

// resolve returns the absolute path that a Watcher compares event names with
// and reads.
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", fmt.Errorf("folder: %w", err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("folder: %w", err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("folder %s is not a directory", dir)
	}
	file := filepath.Join(dir, filepath.Base(abs))
	info, err = os.Lstat(file)
	if err != nil {
		// Not there yet: Run reports it as Missing until it appears.
		return file, nil
	}
	if info.Mode()&os.ModeSymlink != 0 {
		// Edits through a link change the link's target, whose folder is
		// the one that sees the events. A dangling link stays as it is.
		if target, err := filepath.EvalSymlinks(file); err == nil {
			file = target
			info, err = os.Stat(file)
			if err != nil {
				return "", err
			}
		}
	}
	if info.IsDir() {
		return "", fmt.Errorf("%s is a directory", file)
	}
	return file, nil
}

// Path returns the absolute path the Watcher reads, with symbolic links
// resolved as New found them.
func (w *Watcher) Path() string { return w.path }

// Changes returns the channel of changes. It is closed when Run returns. If
// the owner is slow to receive, states coalesce to the latest one: the owner
// never receives a stale state after a newer one, and the watcher never waits
// for the owner.
func (w *Watcher) Changes() <-chan Change { return w.changes }

// Run watches the file until ctx is done, then releases its resources, closes
// the Changes channel and returns nil. The first change it reports is the
// file's state at start. Run may be called once.
func (w *Watcher) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("watch: Run called more than once")
	}
	defer close(w.changes)
	l := newLoop(w)
	defer l.stop()
	l.start()
	for {
		next, ok := l.out.next()
		var send chan<- Change
		if ok {
			send = w.changes
		}
		select {
		case <-ctx.Done():
			return nil
		case send <- next:
			l.out.sent()
		case ev, ok := <-l.events:
			l.event(ev, ok)
		case err, ok := <-l.errs:
			l.notifyError(err, ok)
		case <-l.tick:
			l.poll()
		case sig, ok := <-l.renames:
			l.renamed(sig, ok)
		case <-l.settle.C:
			l.settled()
		case <-l.debounce.C:
			l.debouncing = false
			l.noEarly = false
			l.check(checkDebounce)
		}
	}
}

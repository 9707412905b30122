package watch

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// hashEveryPolls is how often, in polls, a polling watcher hashes the file
// although its size and modification time are unchanged: this catches edits
// that keep both (coarse timestamps on network filesystems) at the cost of
// one read every few intervals.
const hashEveryPolls = 4

// relevantOps are the event operations on the file's name that may change
// its content. Chmod is not one of them: touch must not trigger a run.
const relevantOps = fsnotify.Write | fsnotify.Create | fsnotify.Remove | fsnotify.Rename

// loop is the state of one Run. Only Run's goroutine touches it.
type loop struct {
	w   *Watcher
	out outbox

	notify *fsnotify.Watcher // nil when file events are off
	events <-chan fsnotify.Event
	errs   <-chan error

	// renameW is the second inotify instance (see the package comment),
	// nil when there is none; renames its signals.
	renameW *renameWatcher
	renames <-chan renameSignal
	// settle runs from the kernel's word that the file is complete to its
	// early read.
	settle *time.Timer
	// noEarly is set when a dependency's event, or lost events, fell in
	// the current debounce window: then only the debounce reads the file.
	noEarly bool
	// lastRename is when a file was last renamed onto the strategy's
	// name: a rename within a debounce of the one before is part of a
	// stream of saves, which the debounce gathers.
	lastRename time.Time

	ticker   *time.Ticker // nil unless polling
	tick     <-chan time.Time
	lastStat fileStat
	lastSig  string // the dependencies' signature at the last poll
	polls    int

	// moduleDirs are the folders the module files were found in at the
	// last check; watchedDirs the folders with file events on them besides
	// the strategy's.
	moduleDirs  map[string]bool
	watchedDirs map[string]bool
	// parts is the dependencies' state last recorded, for Change.Cause.
	parts []part
	// emptyWaited is set when an empty strategy file was seen and given a
	// second debounce: an in-place save truncates, then writes, and under
	// load the two can be more than a debounce apart.
	emptyWaited bool

	debounce   *time.Timer
	debouncing bool

	// problem is the text of the last read problem reported, so that a
	// polling watcher does not repeat the same warning every few polls.
	problem string
}

func newLoop(w *Watcher) *loop {
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	return &loop{w: w, debounce: debounce, settle: settle, moduleDirs: map[string]bool{}, watchedDirs: map[string]bool{}}
}

// start sets up file events or polling and observes the initial state. The
// folder is watched before the file is first read, so that no save falls
// between the two.
func (l *loop) start() {
	l.startWatching()
	l.check(checkStart)
}

func (l *loop) startWatching() {
	if l.w.opts.Poll {
		l.startPolling()
		return
	}
	fw, err := l.w.watchDir(l.w.dir)
	if err != nil {
		l.out.warn(fallbackError(err, l.w.opts.PollInterval))
		l.startPolling()
		return
	}
	l.notify, l.events, l.errs = fw, fw.Events, fw.Errors
	l.watchDeps()
	if name, ok := eventlessFS(l.w.dir); ok {
		l.out.warn(fmt.Errorf("%s is on a %s filesystem, where changes made elsewhere send no file events: also polling every %s",
			filepath.Base(l.w.path), name, l.w.opts.PollInterval))
		l.startPolling()
		return
	}
	// Without the second instance (its limits reached, not Linux) every
	// read waits the debounce, as it always did: nothing to tell the user.
	if cw, err := l.w.watchRenames(l.w.path); err == nil {
		l.renameW, l.renames = cw, cw.events
	}
}

// stop releases the loop's resources; the fsnotify goroutine has ended when
// it returns.
func (l *loop) stop() {
	l.stopEvents()
	if l.ticker != nil {
		l.ticker.Stop()
	}
	l.debounce.Stop()
}

// stopRenames ends the second inotify instance and its reader, and any
// early read pending.
func (l *loop) stopRenames() {
	if l.renameW != nil {
		l.renameW.stop()
	}
	l.renameW, l.renames = nil, nil
	l.settle.Stop()
}

func (l *loop) stopEvents() {
	l.stopRenames()
	if l.notify != nil {
		// Close only fails if closing the inotify descriptor fails, and
		// there is nothing left to do with it then.
		_ = l.notify.Close()
	}
	l.notify, l.events, l.errs = nil, nil, nil
	clear(l.watchedDirs)
}

// watchDeps puts file events on the folders of the dependencies (module
// folders as the last check found them, the inputs' folders) and takes them
// off folders no longer needed. A folder that cannot be watched is a
// warning; its files are still read at every check.
func (l *loop) watchDeps() {
	if l.notify == nil || l.w.deps.none() {
		return
	}
	if l.w.deps.modules && len(l.moduleDirs) == 0 {
		_, dirs := l.w.deps.moduleFiles()
		for _, d := range dirs {
			l.moduleDirs[d] = true
		}
	}
	want := map[string]bool{}
	for d := range l.moduleDirs {
		want[d] = true
	}
	for _, d := range l.w.deps.inputDirs() {
		want[d] = true
	}
	delete(want, l.w.dir) // watched from the start
	for d := range l.watchedDirs {
		if !want[d] {
			_ = l.notify.Remove(d) // gone with its folder, perhaps
			delete(l.watchedDirs, d)
		}
	}
	for d := range want {
		if l.watchedDirs[d] {
			continue
		}
		if err := l.notify.Add(d); err != nil {
			l.out.warn(fmt.Errorf("cannot watch %s: %w", d, err))
			continue
		}
		l.watchedDirs[d] = true
	}
}

func (l *loop) startPolling() {
	if l.ticker != nil {
		return
	}
	l.ticker = time.NewTicker(l.w.opts.PollInterval)
	l.tick = l.ticker.C
	l.lastStat, l.lastSig = statFile(l.w.path), l.w.deps.signature()
}

// schedule (re)starts the trailing debounce: the file is read once its name
// has been quiet for the debounce period.
func (l *loop) schedule() {
	l.debounce.Reset(l.w.opts.Debounce)
	l.debouncing = true
}

func (l *loop) event(ev fsnotify.Event, ok bool) {
	if !ok {
		l.lostEvents(errors.New("file events stopped"))
		return
	}
	name := filepath.Clean(ev.Name)
	switch {
	case name == l.w.path && ev.Op&relevantOps != 0:
		l.schedule()
	case name == l.w.dir && ev.Op&(fsnotify.Remove|fsnotify.Rename) != 0:
		l.lostEvents(fmt.Errorf("folder %s was removed or moved", l.w.dir))
	case ev.Op&relevantOps != 0 && l.w.deps.concerns(name, l.moduleDirs):
		// A checkout changes the strategy and its dependencies at once:
		// one run, when the folder is quiet.
		l.noEarly = true
		l.schedule()
	}
}

// renamed takes a signal of the second inotify instance.
func (l *loop) renamed(sig renameSignal, ok bool) {
	if !ok {
		// The instance broke: wait the debounce every time, as without it.
		l.stopRenames()
		return
	}
	dep := false
	if !l.w.deps.none() {
		for _, name := range sig.names {
			if dep = l.w.deps.concerns(filepath.Join(l.w.dir, name), l.moduleDirs); dep {
				break
			}
		}
	}
	if sig.lost || dep {
		// A dependency's event, before or right after the rename onto
		// the strategy, as the folder's watch will say too (see event); or lost
		// events, which may have been a dependency's or a write: the
		// debounce decides, from now.
		l.noEarly = true
		l.settle.Stop()
		l.schedule()
		return
	}
	switch sig.end {
	case endNone:
		return
	case endWriting:
		l.settle.Stop()
	case endComplete:
		now := time.Now()
		if !l.noEarly && l.lone(now) {
			l.settle.Reset(l.w.opts.Settle)
		}
		l.lastRename = now
	}
	if !l.debouncing {
		// The folder's watch sees the same events, perhaps a moment later;
		// the debounce is the safety net of the early read.
		l.schedule()
	}
}

// lone reports whether a rename onto the file at now may be read early:
// the first for a debounce (not one of a stream of saves), of a strategy
// with nothing else watched that could change with it (the module files
// beside it at the last read, the inputs).
func (l *loop) lone(now time.Time) bool {
	if !l.lastRename.IsZero() && now.Sub(l.lastRename) < l.w.opts.Debounce {
		return false
	}
	return len(l.parts) == 0 && len(l.w.deps.inputs) == 0
}

// settled reads the file once the settle time after a rename
// onto its name has passed quietly. The folder watch's events already
// waiting are taken first: one may be a dependency's (in another folder,
// which the second instance does not watch).
func (l *loop) settled() {
	for range maxDrained {
		if !l.takeWaiting() {
			break
		}
	}
	if l.noEarly || l.renameW == nil {
		return
	}
	l.check(checkEarly)
}

// maxDrained bounds the events settled takes before it reads: a folder
// written without pause must not hold the read back for ever.
const maxDrained = 64

// takeWaiting takes one event or error of the folder's watch if one is
// waiting, and reports whether it did.
func (l *loop) takeWaiting() bool {
	select {
	case ev, ok := <-l.events:
		l.event(ev, ok)
	case err, ok := <-l.errs:
		l.notifyError(err, ok)
	default:
		return false
	}
	return true
}

func (l *loop) notifyError(err error, ok bool) {
	if !ok {
		l.lostEvents(errors.New("file events stopped"))
		return
	}
	l.noEarly = true
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		// Events were lost; one of them may have been a save.
		l.out.warn(fmt.Errorf("too many file events at once (%w): re-reading %s", err, filepath.Base(l.w.path)))
	} else {
		l.out.warn(fmt.Errorf("file events: %w: re-reading %s", err, filepath.Base(l.w.path)))
	}
	l.schedule()
}

// lostEvents switches from file events to polling when the folder's watch is
// gone.
func (l *loop) lostEvents(cause error) {
	if l.notify == nil {
		return
	}
	l.stopEvents()
	l.out.warn(fmt.Errorf("%w: polling every %s", cause, l.w.opts.PollInterval))
	l.startPolling()
	l.schedule()
}

func (l *loop) poll() {
	st, sig := statFile(l.w.path), l.w.deps.signature()
	changed := st != l.lastStat || sig != l.lastSig
	l.lastStat, l.lastSig = st, sig
	l.polls++
	switch {
	case changed:
		l.schedule()
	case !l.debouncing && l.polls%hashEveryPolls == 0 && l.differs():
		// The read may have caught a save half-way: let the debounce
		// decide once the file is quiet.
		l.schedule()
	}
}

// observe reads and hashes the file and the dependencies. The error is a
// problem to report; Missing and Changed are states.
func (l *loop) observe() (Change, []part, error) {
	now := time.Now()
	sum, err := hashFile(l.w.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Change{Kind: Missing, Err: err, Time: now}, nil, nil
	case err != nil:
		return Change{}, nil, err
	}
	c := Change{Kind: Changed, Hash: sum, Time: now}
	var parts []part
	if d := l.w.deps; !d.none() {
		parts = d.parts()
		c.Deps = digestOf(parts)
		// parts lists the modules, then the inputs.
		c.Modules = len(parts) - len(d.inputs)
		for _, in := range d.inputs {
			c.Inputs = append(c.Inputs, in.name)
		}
	}
	return c, parts, nil
}

// differs reports whether the file is not in the state last recorded.
func (l *loop) differs() bool {
	c, _, err := l.observe()
	if err != nil {
		return err.Error() != l.problem
	}
	return l.problem != "" || c.Kind != l.out.current.Kind || c.Hash != l.out.current.Hash || c.Deps != l.out.current.Deps
}

// emptyHash is the SHA-256 of an empty file.
var emptyHash = sha256.Sum256(nil)

// check reads and hashes the file and records the state it finds.
func (l *loop) check(why checkReason) {
	if l.w.checked != nil {
		defer l.w.checked(why)
	}
	c, parts, err := l.observe()
	if why == checkEarly && (err != nil || c.Kind != Changed || c.Hash == emptyHash) {
		// Only a regular, non-empty file is believed early: an empty one
		// waits two debounces (an in-place save truncates before it
		// writes), and problems are the debounce's to report, as they
		// always were.
		if !l.debouncing {
			l.schedule()
		}
		return
	}
	if err != nil {
		if err.Error() != l.problem {
			l.problem = err.Error()
			l.out.warn(err)
		}
		return
	}
	l.problem = ""
	if c.Kind == Changed && c.Hash == emptyHash && c.Hash != l.out.current.Hash && !l.emptyWaited {
		// An in-place save truncates the file before it writes it: an
		// empty file is believed after a second quiet debounce only.
		l.emptyWaited = true
		l.schedule()
		return
	}
	l.emptyWaited = false
	if c.Kind == Changed && l.out.current.Kind == Changed && c.Hash == l.out.current.Hash {
		c.Cause = firstDifference(l.parts, parts)
	}
	if c.Kind == Changed {
		l.parts = parts
	}
	l.out.set(c)
	if l.w.deps.modules {
		_, dirs := l.w.deps.moduleFiles()
		clear(l.moduleDirs)
		for _, d := range dirs {
			l.moduleDirs[d] = true
		}
		l.watchDeps()
	}
}

// maxPendingWarnings bounds the warnings kept for an owner that does not
// receive; later ones are dropped, the first ones usually name the cause.
const maxPendingWarnings = 8

// outbox holds what the owner has not received yet: warnings in order, and
// the latest state, which replaces any state not yet received.
type outbox struct {
	warnings  []Change
	current   Change // Kind is zero until the first check
	delivered Change // Kind is zero until the first state is received
}

func (o *outbox) warn(err error) {
	if len(o.warnings) >= maxPendingWarnings {
		return
	}
	if n := len(o.warnings); n > 0 && o.warnings[n-1].Err.Error() == err.Error() {
		return
	}
	o.warnings = append(o.warnings, Change{Kind: Warning, Err: err, Time: time.Now()})
}

func (o *outbox) set(c Change) { o.current = c }

// next returns the change to offer the owner, if any.
func (o *outbox) next() (Change, bool) {
	if len(o.warnings) > 0 {
		return o.warnings[0], true
	}
	if o.current.Kind != 0 && (o.current.Kind != o.delivered.Kind || o.current.Hash != o.delivered.Hash || o.current.Deps != o.delivered.Deps) {
		return o.current, true
	}
	return Change{}, false
}

// sent records that the owner received the change next returned.
func (o *outbox) sent() {
	if len(o.warnings) > 0 {
		o.warnings = o.warnings[1:]
		return
	}
	o.delivered = o.current
}

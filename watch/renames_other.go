//go:build !linux

package watch

import "errors"

// renameWatcher is Linux's second inotify instance; elsewhere there is none,
// and the Watcher waits the debounce every time.
type renameWatcher struct{ events chan renameSignal }

func watchRenames(string) (*renameWatcher, error) { return nil, errors.ErrUnsupported }

func (*renameWatcher) stop() {}

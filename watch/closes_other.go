//go:build !linux

package watch

import "errors"

// closeWatcher is Linux's second inotify instance; elsewhere there is none,
// and the Watcher waits the debounce every time.
type closeWatcher struct{ events chan closeSignal }

func watchCloses(string) (*closeWatcher, error) { return nil, errors.ErrUnsupported }

func (*closeWatcher) stop() {}

package watch

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchDir starts file events for the folder dir, non-recursively.
func watchDir(dir string) (*fsnotify.Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := fw.Add(dir); err != nil {
		_ = fw.Close() // the Add error is the one to report
		return nil, fmt.Errorf("watch folder %s: %w", dir, err)
	}
	return fw, nil
}

// fallbackError explains why file events are unavailable and, for the
// inotify limits, how to raise them.
func fallbackError(err error, every time.Duration) error {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		// inotify_add_watch: the user's watch count is at max_user_watches.
		return fmt.Errorf("inotify watch limit reached (%w): polling every %s instead; "+
			"raise the limit with: sudo sysctl fs.inotify.max_user_watches=524288 "+
			"(to keep it after a reboot: echo fs.inotify.max_user_watches=524288 | sudo tee /etc/sysctl.d/90-inotify.conf)",
			err, every)
	case errors.Is(err, syscall.EMFILE):
		// inotify_init1: the user's instance count is at max_user_instances
		// (the default, 128, is shared with every other watching program).
		return fmt.Errorf("inotify instance limit reached (%w): polling every %s instead; "+
			"raise the limit with: sudo sysctl fs.inotify.max_user_instances=512 "+
			"(to keep it after a reboot: echo fs.inotify.max_user_instances=512 | sudo tee /etc/sysctl.d/90-inotify.conf)",
			err, every)
	default:
		return fmt.Errorf("inotify unavailable (%w): polling every %s instead", err, every)
	}
}

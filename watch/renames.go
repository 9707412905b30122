package watch

// ending is what the kernel last said about the strategy file's name in one
// read of the second inotify instance (see the package comment).
type ending int

const (
	// endNone: nothing about the strategy's name.
	endNone ending = iota
	// endComplete: a file was renamed onto its name, and nothing touched
	// it after: its content is complete.
	endComplete
	// endWriting: the file was written, created, removed or renamed away
	// after the last rename onto it: it may be half-written, and the
	// debounce decides.
	endWriting
)

// renameSignal is what the second inotify instance's reader tells the loop
// about one read.
type renameSignal struct {
	end ending
	// lost is set when events were lost (the kernel's queue overflowed)
	// or the kernel's answer could not be parsed: the debounce decides.
	lost bool
	// names are the other names of the strategy's folder that the read's
	// events touched, each once: in the same queue as the strategy's, so
	// that a dependency's event before the rename is seen before it.
	names []string
}

// checkReason says why the loop reads the file; tests observe it.
type checkReason int

const (
	checkStart    checkReason = iota + 1 // the initial state
	checkDebounce                        // the debounce (or a poll's) expired
	checkEarly                           // the kernel said the content is complete
)

package contract

import "context"

// Worker is the engine's side of a running strategy, as a driver sees it.
type Worker interface {
	Manifest() Manifest
	// Run delivers b to the strategy: first b.Executions (on_execution, when
	// the strategy defines it), then one on_data call per bar. It returns after
	// the last call, or early after the first call that issued commands, or
	// early when a stop was requested. A hook failure or limit violation is
	// returned as a *Failure error.
	Run(ctx context.Context, b *Batch) (Yield, error)
}

// Manifest is what the worker reported after importing the strategy.
type Manifest struct {
	Name    string
	Hooks   []Hook
	Params  map[string]any // effective params (defaults with --param overrides applied)
	History int
}

// HasHook reports whether the strategy defines hook.
func (m Manifest) HasHook(hook Hook) bool {
	for _, h := range m.Hooks {
		if h == hook {
			return true
		}
	}
	return false
}

// Yield is how far a Run got.
type Yield struct {
	Executions int       // executions of the batch delivered (hooks returned)
	Bars       int       // bars of the batch whose on_data returned
	Commands   []Command // commands of the last completed hook, when it issued any
	Stopped    bool      // a stop request ended the batch early
	// Whole says that the worker did not stop early: it went on past
	// Commands, having delivered their fill itself (Setup.LocalFills), or
	// after going on past such fills it ran every bar it held (which may
	// be fewer than the batch's: it held an earlier batch's) or until its
	// time budget. The next batch may be as long as after a batch run
	// whole.
	Whole bool
	// Ahead, when not zero, is the length of the batch the worker has
	// already sent the strategy as its next (see Batch.Ahead): the
	// driver's next batch must be the Ahead events from where this yield
	// leaves the replay, without executions. Only a yield that issued no
	// commands and was not stopped has it.
	Ahead int
}

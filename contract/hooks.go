package contract

// Hook names a strategy hook, or startup (importing the strategy and the
// handshake), as the report and the job events name them.
type Hook string

// The hooks, in the order a run calls them. A strategy defines on_data (one
// call per bar) or on_bars (one call per timestamp, with every symbol's bar
// at that time), never both.
const (
	HookStartup     Hook = "startup"
	HookOnData      Hook = "on_data"
	HookOnBars      Hook = "on_bars"
	HookOnExecution Hook = "on_execution"
	HookOnFinish    Hook = "on_finish"
)

// Hooks returns the hooks a strategy may define, in call order (startup
// is not one).
func Hooks() []Hook { return []Hook{HookOnData, HookOnBars, HookOnExecution, HookOnFinish} }

// Valid reports whether h is one of the hooks above, startup included.
func (h Hook) Valid() bool {
	switch h {
	case HookStartup, HookOnData, HookOnBars, HookOnExecution, HookOnFinish:
		return true
	}
	return false
}

// Rank is h's position in call order (startup first), for sorting; a hook
// that is not Valid ranks last.
func (h Hook) Rank() int {
	switch h {
	case HookStartup:
		return 0
	case HookOnData:
		return 1
	case HookOnBars:
		return 2
	case HookOnExecution:
		return 3
	case HookOnFinish:
		return 4
	}
	return 5
}

// BarHook returns the hook that serves the bars of a strategy with hooks:
// on_bars when it defines it, else on_data.
func BarHook(hooks []Hook) Hook {
	for _, h := range hooks {
		if h == HookOnBars {
			return HookOnBars
		}
	}
	return HookOnData
}

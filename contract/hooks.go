package contract

// Hook names a strategy hook, or startup (importing the strategy and the
// handshake), as the report and the job events name them.
type Hook string

// The hooks, in the order a run calls them.
const (
	HookStartup     Hook = "startup"
	HookOnData      Hook = "on_data"
	HookOnExecution Hook = "on_execution"
	HookOnFinish    Hook = "on_finish"
)

// Hooks returns the hooks a strategy may define, in call order (startup
// is not one).
func Hooks() []Hook { return []Hook{HookOnData, HookOnExecution, HookOnFinish} }

// Valid reports whether h is one of the hooks above, startup included.
func (h Hook) Valid() bool {
	switch h {
	case HookStartup, HookOnData, HookOnExecution, HookOnFinish:
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
	case HookOnExecution:
		return 2
	case HookOnFinish:
		return 3
	}
	return 4
}

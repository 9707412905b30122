package engine

import "time"

// Limits are the runtime safeguards of DESIGN §2. Users cannot change them;
// tests construct shorter ones through the Go API.
type Limits struct {
	Startup      time.Duration
	OnData       time.Duration
	OnExecution  time.Duration
	OnFinish     time.Duration
	MemoryBytes  int64
	Processes    int
	MessageBytes int
	LogBytes     int64
}

// DefaultLimits returns the limits of DESIGN §2.
func DefaultLimits() Limits {
	return Limits{
		Startup:      30 * time.Second,
		OnData:       5 * time.Second,
		OnExecution:  5 * time.Second,
		OnFinish:     60 * time.Second,
		MemoryBytes:  2 << 30,
		Processes:    32,
		MessageBytes: 8 << 20,
		LogBytes:     64 << 20,
	}
}

// hookLimit returns the time limit of a hook.
func (l Limits) hookLimit(hook string) time.Duration {
	switch hook {
	case HookStartup:
		return l.Startup
	case HookOnData:
		return l.OnData
	case HookOnExecution:
		return l.OnExecution
	case HookOnFinish:
		return l.OnFinish
	}
	return l.OnData
}

func (l Limits) report() LimitsReport {
	return LimitsReport{
		StartupS:     l.Startup.Seconds(),
		OnDataS:      l.OnData.Seconds(),
		OnExecutionS: l.OnExecution.Seconds(),
		OnFinishS:    l.OnFinish.Seconds(),
		MemoryBytes:  l.MemoryBytes,
		Processes:    l.Processes,
		MessageBytes: l.MessageBytes,
		LogBytes:     l.LogBytes,
	}
}

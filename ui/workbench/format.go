package workbench

import (
	"fmt"
	"time"

	"stratbench/internal/units"
)

// fmtLimit formats a time limit: whole seconds stay whole.
func fmtLimit(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int(d/time.Second))
	}
	return units.Duration(d)
}

// fmtTime formats an event time as every surface writes it (the failure
// pane, --ci, status): RFC 3339 in UTC.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

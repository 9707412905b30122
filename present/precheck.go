package present

import (
	"fmt"
	"io"
	"stratbench/job"
)

// WritePrecheck writes a precheck's verdict, then the run's report, as
// text or as JSON.
func WritePrecheck(w io.Writer, res job.PrecheckResult, format string) error {
	if format == "json" {
		return WriteJSON(w, res)
	}
	switch res.Status {
	case job.PrecheckAlready:
		r := res.Record
		_, err := fmt.Fprintf(w, "already checked: this script and params passed precheck %s → %s on %s (job %s, stratbench %s)\n",
			r.From, r.To, r.PassedAt.Local().Format("2006-01-02 15:04"), r.JobID, r.Version)
		return err
	case job.PrecheckPassed:
		fmt.Fprintf(w, "precheck passed: recorded for this script, params %q and stratbench %s\n\n", res.Record.Params, res.Record.Version)
	case job.PrecheckStopped:
		fmt.Fprint(w, "precheck stopped before the end: nothing recorded\n\n")
	default:
		fmt.Fprint(w, "precheck failed\n\n")
	}
	return WriteReport(w, res.Report, "text")
}

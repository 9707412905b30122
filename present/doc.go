// Package present writes what the commands print: the text and JSON
// outputs of a job's report and status, the job list and its log lines,
// the diff of two jobs, a precheck's verdict, a sweep as it runs and its
// summary, the sweep list, check's and montecarlo's reports, data info.
// Pure functions over the data model (job, sweep, check, data's summary)
// and an io.Writer: no process, no flag, no file read (what a printer
// needs from the home, app hands it).
package present

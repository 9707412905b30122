package present

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"stratbench/internal/termtext"
	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/job"
)

// statusReport is what `status --output json` and `--ci --output json`
// print: the report, field for field as job.json holds it, the job's
// artifacts (the strategy's files) and its records (stratbench's).
type statusReport struct {
	*job.Report
	Artifacts job.Artifacts   `json:"artifacts"`
	Records   job.RecordFiles `json:"records"`
}

// WriteStatus writes a job's report and where its files are as text (the
// report, then the job's folder, its artifacts and its records) or as JSON
// (the report, "artifacts" and "records"): what status and --ci print.
func WriteStatus(w io.Writer, rep *job.Report, arts job.Artifacts, recs job.RecordFiles, format string) error {
	if format == "json" {
		return WriteJSON(w, statusReport{Report: rep, Artifacts: arts, Records: recs})
	}
	_, err := io.WriteString(w, termtext.Text(ReportText(rep)+"\n"+artifactsText(arts)+recordsText(recs)))
	return err
}

// recordsText lists a job's records with their sizes on disk (compressed);
// nothing for a job folder of an older version, whose records are among
// its artifacts.
func recordsText(r job.RecordFiles) string {
	if len(r.Files) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "records      %s\n             stratbench's records, gzip'd CSV · %s\n", termtext.Line(r.Dir), units.Bytes(r.Bytes))
	for _, f := range r.Files {
		fmt.Fprintf(&b, "             %-14s  %10s\n", termtext.Line(f.Name), units.Bytes(f.Bytes))
	}
	return b.String()
}

// artifactsText says where the job's files are: its folder, then its
// artifacts with their sizes under the artifacts folder and the caps.
// Names are the strategy's: each is made one safe line.
func artifactsText(a job.Artifacts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job folder   %s\n", termtext.Line(filepath.Dir(a.Dir)))
	fmt.Fprintf(&b, "artifacts    %s\n             %s\n", termtext.Line(a.Dir), words.ArtifactsSummary(a))
	width := 0
	for _, f := range a.Files {
		width = max(width, len([]rune(termtext.Line(f.Name))))
	}
	for _, f := range a.Files {
		name := termtext.Line(f.Name)
		fmt.Fprintf(&b, "             %s%s  %10s\n", name, strings.Repeat(" ", width-len([]rune(name))), units.Bytes(f.Bytes))
	}
	if a.Unlisted > 0 {
		fmt.Fprintf(&b, "             %s\n", words.Unlisted(a.Unlisted))
	}
	return b.String()
}

// WriteJobStatus lists the files of rep's job, in its folder dir
// (job.ListArtifacts, job.ListRecords), and writes its status
// (WriteStatus). A listing that fails is told to warn, and the status is
// written without it; with warn nil it is returned, and nothing written.
func WriteJobStatus(w io.Writer, rep *job.Report, dir, format string, warn func(error)) error {
	arts, err := job.ListArtifacts(dir)
	if err != nil && warn == nil {
		return err
	} else if err != nil {
		warn(err)
	}
	recs, err := job.ListRecords(dir)
	if err != nil && warn == nil {
		return err
	} else if err != nil {
		warn(err)
	}
	return WriteStatus(w, rep, arts, recs, format)
}

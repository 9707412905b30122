package local

import (
	"stratbench/job"
	"stratbench/sweep"
)

// RanPython is the Python version a sweep's runs ran, and how that is
// known, for a resume that must not mix versions: the version
// stratbench's own probe found when the sweep started (RunFlags.
// PythonVersion); for a document of an older version, which has none, the
// version a kept run's report records (its worker reported it: the only
// word there is), loaded by load. "" when neither says.
func RanPython(doc *sweep.Document, load func(id string) (*job.Report, error)) (version, how string) {
	if doc.RunFlags != nil && doc.RunFlags.PythonVersion != "" {
		return doc.RunFlags.PythonVersion, "when the sweep started"
	}
	for _, r := range doc.Runs {
		if r.JobID == "" {
			continue
		}
		if rep, err := load(r.JobID); err == nil && rep.Python.Version != "" {
			return rep.Python.Version, "as job " + r.JobID + " reported"
		}
	}
	return "", ""
}

package local

import (
	"os"
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

// StrategyAsRun reports whether the sweep's strategy file can be read
// (readable) and still has the content the sweep ran (same): a resume
// refuses any other. The path is the sweep document's: it is read only
// when it is a regular file no larger than maxStrategyCheck (a larger one
// is no strategy a sweep ran).
func StrategyAsRun(doc *sweep.Document) (readable, same bool) {
	if info, err := os.Stat(doc.Strategy.Path); err != nil || !info.Mode().IsRegular() || info.Size() > maxStrategyCheck {
		return false, false
	}
	_, sum, err := ReadStrategy(doc.Strategy.Path)
	return err == nil, err == nil && sum == doc.Strategy.SHA256
}

// maxStrategyCheck is the largest strategy file StrategyAsRun hashes.
const maxStrategyCheck = 64 << 20

// Package shortid resolves an id as the user typed it, shortened, into
// the job's or the sweep's id: the whole id, "latest", a unique prefix
// (for a sweep with or without its "sw-"), or the 4 characters it ends
// with. An unknown id wraps job.ErrUnknownJob or sweep.ErrUnknownSweep;
// an ambiguous one lists what it fits. Every error is the user's input
// (app makes it exit 2).
package shortid

import (
	"fmt"
	"strings"

	"stratbench/internal/units"
	"stratbench/job"
	"stratbench/sweep"
)

// maxCandidates is how many jobs an ambiguous id lists.
const maxCandidates = 10

// idKind is what an id names, for the words of resolve's errors.
type idKind struct {
	noun, plural string
	unknown      error  // the sentinel an unknown id wraps
	lister       string // the command that lists them
	prefix       string // what every id starts with and the user may leave out ("sw-")
}

var (
	jobKind   = idKind{noun: "job", plural: "jobs", unknown: job.ErrUnknownJob, lister: "stratbench jobs"}
	sweepKind = idKind{noun: "sweep", plural: "sweeps", unknown: sweep.ErrUnknownSweep, lister: "stratbench sweeps", prefix: sweep.IDPrefix}
)

// shortForms is how an id may be shortened, for the unknown-id errors.
const shortForms = "an id may be shortened to a unique prefix, its last 4 characters, or latest"

// fits reports whether typed is a short form of id: a prefix or the
// 4-character suffix the id ends with. For a sweep the "sw-" every id
// starts with may be left out of typed.
func (k idKind) fits(id, typed string) bool {
	bare, typedBare := strings.TrimPrefix(id, k.prefix), strings.TrimPrefix(typed, k.prefix)
	return strings.HasPrefix(bare, typedBare) || len(typedBare) == 4 && strings.HasSuffix(bare, "-"+typedBare)
}

// Job turns a job id as the user typed it into the job's id:
// the whole id, "latest" (the newest job), a unique prefix, or the unique
// 4-character suffix the id ends with ("a1b2" for
// 20261201-120000.000-a1b2). An id that fits several jobs is bad usage
// that lists them; one that fits none says how to list the jobs.
func Job(ids []string, typed string) (string, error) {
	return resolve(jobKind, ids, typed)
}

// Sweep is Job for sweeps, so that a sweep id is
// shortened the same way: the whole id, "latest" (the newest sweep), a
// unique prefix with or without "sw-", or the 4 characters it ends with.
func Sweep(ids []string, typed string) (string, error) {
	return resolve(sweepKind, ids, typed)
}

// resolve resolves typed among ids (newest first) of one kind.
func resolve(k idKind, ids []string, typed string) (string, error) {
	bare := strings.TrimPrefix(typed, k.prefix)
	if bare == "" {
		return "", fmt.Errorf("%w %q", k.unknown, typed)
	}
	if bare == "latest" {
		if len(ids) == 0 {
			return "", fmt.Errorf("%w: there are no %s yet", k.unknown, k.plural)
		}
		return ids[0], nil // newest first
	}
	var found []string
	for _, id := range ids {
		if id == typed {
			return id, nil
		}
		if k.fits(id, typed) {
			found = append(found, id)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w %q (%s lists them; %s)", k.unknown, typed, k.lister, shortForms)
	case 1:
		return found[0], nil
	}
	return "", ambiguous(fmt.Sprintf("%s id %q", k.noun, typed), fmt.Sprintf("%d %s", len(found), k.plural), found)
}

// ambiguous is the exit-2 error of an id that fits several: it lists at
// most maxCandidates of them.
func ambiguous(what, count string, found []string) error {
	list, more := found, ""
	if len(list) > maxCandidates {
		more = fmt.Sprintf("\n  … and %d more", len(list)-maxCandidates)
		list = list[:maxCandidates]
	}
	return fmt.Errorf("%s is ambiguous: it fits %s:\n  %s%s", what, count, strings.Join(list, "\n  "), more)
}

// Status decides what `status X` shows, a job or a sweep. X that
// starts with "sw-" names a sweep (in any short form after the "sw-":
// sw-latest is the newest sweep). Otherwise the whole id of a job and
// "latest" are jobs, as before sweeps could be shortened; any other X is
// looked up among jobs and sweeps together, so that a short form that fits
// one of each is ambiguous (exit 2, listing both) rather than silently the
// job.
func Status(jobIDs, sweepIDs []string, typed string) (id string, isSweep bool, err error) {
	if strings.HasPrefix(typed, sweep.IDPrefix) {
		id, err := Sweep(sweepIDs, typed)
		return id, true, err
	}
	if typed == "" || typed == "latest" {
		id, err := Job(jobIDs, typed)
		return id, false, err
	}
	var jobs, sweeps []string
	for _, id := range jobIDs {
		if id == typed {
			return id, false, nil
		}
		if jobKind.fits(id, typed) {
			jobs = append(jobs, id)
		}
	}
	for _, id := range sweepIDs {
		if sweepKind.fits(id, typed) {
			sweeps = append(sweeps, id)
		}
	}
	switch {
	case len(jobs) == 1 && len(sweeps) == 0:
		return jobs[0], false, nil
	case len(jobs) == 0 && len(sweeps) == 1:
		return sweeps[0], true, nil
	case len(jobs) == 0 && len(sweeps) == 0:
		return "", false, fmt.Errorf("%w or sweep %q (stratbench jobs and stratbench sweeps list them; %s, and sw-latest is the newest sweep)",
			job.ErrUnknownJob, typed, shortForms)
	case len(sweeps) == 0:
		return "", false, ambiguous(fmt.Sprintf("job id %q", typed), fmt.Sprintf("%d jobs", len(jobs)), jobs)
	case len(jobs) == 0:
		return "", true, ambiguous(fmt.Sprintf("sweep id %q", typed), fmt.Sprintf("%d sweeps", len(sweeps)), sweeps)
	}
	return "", false, ambiguous(fmt.Sprintf("id %q", typed), fmt.Sprintf("%s and %s (start it with sw- for a sweep)",
		counted(len(jobs), "job", "jobs"), counted(len(sweeps), "sweep", "sweeps")), append(jobs, sweeps...))
}

// counted is n with its noun, singular for 1: "1 job", "1,024 jobs".
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return units.Count(n) + " " + many
}

package app

import (
	"fmt"
	"strings"

	"stratbench/engine"
)

// maxCandidates is how many jobs an ambiguous id lists.
const maxCandidates = 10

// resolveJobID turns a job id as the user typed it into the job's id:
// the whole id, "latest" (the newest job), a unique prefix, or the unique
// 4-character suffix the id ends with ("a1b2" for
// 20261201-120000.000-a1b2). An id that fits several jobs is bad usage
// that lists them; one that fits none says how to list the jobs.
func resolveJobID(ids []string, typed string) (string, error) {
	if typed == "" {
		return "", usage(fmt.Errorf("%w \"\"", engine.ErrUnknownJob))
	}
	if typed == "latest" {
		if len(ids) == 0 {
			return "", usage(fmt.Errorf("%w: there are no jobs yet", engine.ErrUnknownJob))
		}
		return ids[0], nil // newest first
	}
	var fits []string
	for _, id := range ids {
		if id == typed {
			return id, nil
		}
		if strings.HasPrefix(id, typed) || len(typed) == 4 && strings.HasSuffix(id, "-"+typed) {
			fits = append(fits, id)
		}
	}
	switch len(fits) {
	case 0:
		return "", usage(fmt.Errorf("%w %q (stratbench jobs lists them; an id may be shortened to a unique prefix, its last 4 characters, or latest)",
			engine.ErrUnknownJob, typed))
	case 1:
		return fits[0], nil
	}
	list := fits
	more := ""
	if len(list) > maxCandidates {
		more = fmt.Sprintf("\n  … and %d more", len(list)-maxCandidates)
		list = list[:maxCandidates]
	}
	return "", usage(fmt.Errorf("job id %q is ambiguous: it fits %d jobs:\n  %s%s", typed, len(fits), strings.Join(list, "\n  "), more))
}

// storeJobID resolves typed among the store's jobs.
func storeJobID(store *engine.Store, typed string) (string, error) {
	ids, err := store.IDs()
	if err != nil {
		return "", err
	}
	return resolveJobID(ids, typed)
}

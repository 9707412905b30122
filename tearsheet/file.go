package tearsheet

import (
	"bytes"
	"context"
	"path/filepath"

	"stratbench/internal/atomicfile"
	"stratbench/job"
	"stratbench/sweep"
)

// FileName is the HTML report's name in a job's or a sweep's folder.
const FileName = "report.html"

// RenderJob loads job id of store and returns its page.
func RenderJob(ctx context.Context, store *job.Store, id string, o Options) ([]byte, error) {
	j, err := LoadJob(ctx, store, id)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := WriteJob(&buf, j, o); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// RenderSweep loads sweep id of sweeps (its runs' jobs in jobs) and
// returns its page: a sweep's or a walk-forward's.
func RenderSweep(ctx context.Context, sweeps *sweep.Store, jobs *job.Store, id string, o Options) ([]byte, error) {
	s, err := LoadSweep(ctx, sweeps, jobs, id)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := WriteSweep(&buf, s, o); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Save puts a page in place whole, durably: at a path the user named
// (named) only over a regular file or a new name (atomicfile.WriteRegular,
// which refuses a link, a FIFO, a device or a folder: the rename would
// replace it), in a folder of the home (FileName in the job's or sweep's
// folder) whatever is there.
func Save(path string, named bool, page []byte) error {
	if named {
		return atomicfile.WriteRegular(path, page, 0o644, atomicfile.Durable)
	}
	return atomicfile.WriteFile(path, page, 0o644, atomicfile.Durable)
}

// SaveJob writes job id's report to path, a path the user named, or with
// path "" to FileName in the job's folder, and returns where.
func SaveJob(ctx context.Context, store *job.Store, id, path string, o Options) (string, error) {
	page, err := RenderJob(ctx, store, id, o)
	if err != nil {
		return "", err
	}
	named := path != ""
	if !named {
		path = filepath.Join(store.JobDir(id), FileName)
	}
	return path, Save(path, named, page)
}

// SaveSweep writes sweep id's report to FileName in its folder and
// returns where.
func SaveSweep(ctx context.Context, sweeps *sweep.Store, jobs *job.Store, id string, o Options) (string, error) {
	page, err := RenderSweep(ctx, sweeps, jobs, id, o)
	if err != nil {
		return "", err
	}
	path := filepath.Join(sweeps.Dir(id), FileName)
	return path, Save(path, false, page)
}

package tearsheet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"stratbench/internal/atomicfile"
	"stratbench/internal/nofollow"
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

// SaveAt puts a page at a path the user named, whole and durably, only over
// a regular file or a new name (atomicfile.WriteRegular, which refuses a
// link, a FIFO, a device or a folder: the rename would replace it).
func SaveAt(path string, page []byte) error {
	return atomicfile.WriteRegular(path, page, 0o644, atomicfile.Durable)
}

// SaveJob writes job id's report to path, a path the user named (SaveAt),
// or with path "" to FileName in the job's folder, and returns where. In
// the folder, the report is written through the folder's descriptor,
// opened (never through a link) before the job is read, and the folder is
// held as the command that ran the job holds it (a shared lock, job.Hold):
// prune and retention, which remove a folder only under an exclusive lock,
// leave it while the report goes in, a folder they are removing gets no
// report, and a link that replaced the folder meanwhile is not followed
// (as root, into any folder it names). What is at report.html, a link
// included, is replaced, as any file of the home.
func SaveJob(ctx context.Context, store *job.Store, id, path string, o Options) (string, error) {
	if path != "" {
		page, err := RenderJob(ctx, store, id, o)
		if err != nil {
			return "", err
		}
		return path, SaveAt(path, page)
	}
	hold, err := store.HoldJob(id)
	if errors.Is(err, nofollow.ErrLocked) {
		return "", fmt.Errorf("report of job %s: the job is being removed (prune, or the home's retention)", id)
	}
	if err != nil {
		return "", err
	}
	defer hold.Release()
	page, err := RenderJob(ctx, store, id, o)
	if err != nil {
		return "", err
	}
	dir := hold.Dir()
	return dir.Join(FileName), dir.WriteFile(FileName, page, 0o644)
}

// SaveSweep writes sweep id's report to FileName in its folder, through
// the folder's descriptor (as SaveJob), and returns where.
func SaveSweep(ctx context.Context, sweeps *sweep.Store, jobs *job.Store, id string, o Options) (string, error) {
	dir, err := sweeps.OpenSweep(id)
	if err != nil {
		return "", err
	}
	defer dir.Close()
	page, err := RenderSweep(ctx, sweeps, jobs, id, o)
	if err != nil {
		return "", err
	}
	return dir.Join(FileName), dir.WriteFile(FileName, page, 0o644)
}

// Target is the job or the sweep whose report Write writes.
type Target struct {
	Jobs   *job.Store   // the home's jobs (a sweep's runs)
	Sweeps *sweep.Store // the home's sweeps, when Sweep
	ID     string
	Sweep  bool // ID is a sweep's
}

// Write writes t's report: to w when w is not nil, else to path (SaveAt)
// or, with path "", to FileName in its folder (SaveJob, SaveSweep). It
// returns the path written ("" for w).
func Write(ctx context.Context, t Target, path string, w io.Writer, o Options) (string, error) {
	if path == "" && w == nil {
		if t.Sweep {
			return SaveSweep(ctx, t.Sweeps, t.Jobs, t.ID, o)
		}
		return SaveJob(ctx, t.Jobs, t.ID, "", o)
	}
	var page []byte
	var err error
	if t.Sweep {
		page, err = RenderSweep(ctx, t.Sweeps, t.Jobs, t.ID, o)
	} else {
		page, err = RenderJob(ctx, t.Jobs, t.ID, o)
	}
	if err != nil {
		return "", err
	}
	if w != nil {
		_, err = w.Write(page)
		return "", err
	}
	return path, SaveAt(path, page)
}

package engine

import (
	"context"
	"errors"
)

// ErrUnknownJob is returned for a job id that has no job folder.
var ErrUnknownJob = errors.New("unknown job")

// Store is the jobs folder of $STRATBENCH_HOME.
type Store struct{ home string }

// OpenStore opens (and creates) the store under home.
func OpenStore(home string) (*Store, error) { return nil, errors.New("engine: not implemented") }

// List returns every job's report, newest first.
func (s *Store) List() ([]*Report, error) { return nil, errors.New("engine: not implemented") }

// Load returns one job's report.
func (s *Store) Load(id string) (*Report, error) { return nil, errors.New("engine: not implemented") }

// JobDir returns the folder of job id.
func (s *Store) JobDir(id string) string { return "" }

// Logs calls fn for every line of job id's log. With follow, it keeps reading
// while the job runs and returns when the job has ended or ctx is done.
func (s *Store) Logs(ctx context.Context, id string, follow bool, fn func(LogLine) error) error {
	return errors.New("engine: not implemented")
}

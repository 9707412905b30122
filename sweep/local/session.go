package local

import (
	"context"

	"stratbench/backtest"
	"stratbench/engine"
	"stratbench/session"
)

// Opened is a sweep's session, what it started ahead of the interpreter's
// probe (Ahead) and the data its runs share, taken from the session.
type Opened struct {
	Session *session.Session
	Ahead   *Ahead
	Data    *Data
}

// Close closes the data, what was started ahead and the session.
func (o *Opened) Close() {
	o.Data.Close()
	o.Ahead.Close()
	o.Session.Close()
}

// OpenSession opens a sweep's session with open (which hands beforeProbe
// to session.Open), starting while the interpreter is probed what the
// sweep needs (Ahead): the templates of its jobs local runs (none unless
// localRuns: Ahead.Starter is nil then) and the MANIFEST read; then it
// takes the session's data (opened and checked by session.Open) for the
// whole sweep, from the files at paths, with market. The caller closes
// it; the sweep's runner closes the starter first when it is done.
func OpenSession(ctx context.Context, open func(beforeProbe func(context.Context, *session.Session, *engine.Interpreter)) (*session.Session, error),
	jobs int, localRuns bool, paths []string, market backtest.Options) (*Opened, error) {
	early := NewAhead(jobs, localRuns)
	s, err := open(func(ctx context.Context, s *session.Session, py *engine.Interpreter) {
		early.Start(ctx, s.RunConfig(py))
	})
	if err != nil {
		early.Close()
		return nil, err
	}
	early.Settle(s.RunConfig(s.Python()))
	set, err := s.DataSet(ctx)
	if err != nil {
		early.Close()
		s.Close()
		return nil, err
	}
	return &Opened{Session: s, Ahead: early, Data: NewData(set, paths, s.DataOptions(), market)}, nil
}

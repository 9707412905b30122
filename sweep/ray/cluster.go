package ray

import (
	"context"
	"os"
)

// Cluster is the cluster a sweep runs on: its client, stratbench's own
// binary (checked for the nodes), and the sweep's executor once Use has
// made it.
type Cluster struct {
	client *Client
	binary string
	exec   *Executor
}

// BinaryError is stratbench's own binary that could not be found.
type BinaryError struct{ Err error }

func (e *BinaryError) Error() string { return "stratbench's own binary: " + e.Err.Error() }
func (e *BinaryError) Unwrap() error { return e.Err }

// Dial reaches the cluster at address with stratbench's own binary
// (Connect: before anything is read, packaged or uploaded, the binary
// checked for the nodes, the cluster's token found, the address checked to
// be a Ray dashboard with a job API this build can use). The caller closes
// the cluster.
func Dial(ctx context.Context, address string) (*Cluster, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, &BinaryError{err}
	}
	client, err := Connect(ctx, address, exe, os.Getenv, os.Getenv("HOME"))
	if err != nil {
		return nil, err
	}
	return &Cluster{client: client, binary: exe}, nil
}

// Use makes the sweep's executor on the cluster (NewExecutor, with st's
// Client and Binary the cluster's: the package built and uploaded,
// nothing submitted yet). Close closes it.
func (c *Cluster) Use(ctx context.Context, st Setup) (*Executor, error) {
	st.Client, st.Binary = c.client, c.binary
	e, err := NewExecutor(ctx, st)
	if err != nil {
		return nil, err
	}
	c.exec = e
	return e, nil
}

// Close releases the client and removes the built packages.
func (c *Cluster) Close() {
	c.client.Close()
	if c.exec != nil {
		c.exec.Close()
	}
}

package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"stratbench/session"
	"stratbench/sweep/local"
	"stratbench/sweep/ray"
)

// A sweep on a Ray cluster (docs/ray.md): the command's side. The
// executor and the node's shard are sweep/ray's.

// RayAddressEnv gives the cluster's address when --ray-address does not.
const RayAddressEnv = "STRATBENCH_RAY_ADDRESS"

// RayPlaceFile, in the job folder of a run that ran on a Ray cluster, says
// where it ran.
const RayPlaceFile = ray.PlaceFile

// openRay reaches the cluster (ray.Dial). Each refusal is exit 2 and
// names which.
func openRay(ctx context.Context, o SweepOptions) (*ray.Cluster, error) {
	address := o.RayAddress
	if address == "" {
		address = os.Getenv(RayAddressEnv)
	}
	if address == "" {
		return nil, usage(fmt.Errorf("--executor ray: no cluster address: give --ray-address http://HOST:8265 (the head node's dashboard) or set $%s", RayAddressEnv))
	}
	c, err := ray.Dial(ctx, address)
	var be *ray.BinaryError
	var ae *ray.AddressError
	switch {
	case errors.As(err, &be):
		return nil, fmt.Errorf("--executor ray: %w", err)
	case errors.As(err, &ae):
		return nil, usage(fmt.Errorf("--ray-address: %w", ae.Err))
	case err != nil:
		return nil, usage(fmt.Errorf("--executor ray: %w", err))
	}
	return c, nil
}

// useRay makes sr, of session s, run on the cluster (ray.Cluster.Use).
// The runs use the node's Python unless python (--python of a new sweep)
// names one, which must then exist on every node.
func useRay(ctx context.Context, o SweepOptions, sr *local.Sweep, s *session.Session, c *ray.Cluster, jobs int, python string) error {
	if python != "" {
		python = s.Python().Executable // --python: a path on every node
	}
	e, err := c.Use(ctx, ray.Setup{Strategy: s.Strategy(), Python: python,
		Slots: jobs, Doc: sr.Doc, Store: sr.Store, Jobs: s.Store(), Notices: notices(o), Stderr: o.Stderr})
	var be *ray.BuildError
	switch {
	case errors.As(err, &be):
		return usage(fmt.Errorf("--executor ray: %w", err))
	case err != nil:
		return fmt.Errorf("--executor ray: %w", err)
	}
	sr.Executor = e
	return nil
}

// notices is where the executor says what the cluster did to runs.
func notices(o SweepOptions) io.Writer {
	if !o.CI {
		return io.Discard // the sweep view owns the terminal
	}
	return o.Stderr
}

// RayShardOptions are the options of `stratbench ray-shard`.
type RayShardOptions struct {
	// Config is the shard's configuration, JSON (ray.ShardConfig), written
	// by the local stratbench into the Ray job's work.
	Config string
	Stdin  io.Reader
	Streams
}

// RayShard runs `stratbench ray-shard` (ray.Shard) on a node of the
// cluster, under the node's own policies: the sandbox when the node
// requires it, its data budget.
func RayShard(ctx context.Context, o RayShardOptions) error {
	err := ray.Shard(ctx, ray.ShardOptions{Config: o.Config, Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, Version: Version})
	var pe *session.PolicyError
	var ce *ray.ConfigError
	var ie *local.InputError
	switch {
	case errors.As(err, &pe):
		return usage(pe.Err)
	case errors.As(err, &ce):
		return usage(fmt.Errorf("ray-shard: --config: %w", ce.Err))
	case errors.As(err, &ie):
		return dataError(err)
	}
	return err
}

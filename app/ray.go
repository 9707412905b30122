package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

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

// rayCluster is the cluster a sweep runs on: its client, stratbench's
// own binary (checked for the nodes), and the sweep's executor on it once
// useRay has made it.
type rayCluster struct {
	client *ray.Client
	exe    string
	exec   *ray.Executor
}

// close releases the client and removes the built packages.
func (c *rayCluster) close() {
	c.client.Close()
	if c.exec != nil {
		c.exec.Close()
	}
}

// openRay reaches the cluster (ray.Connect: before anything is read,
// packaged or uploaded, stratbench's own binary checked for the nodes, the
// cluster's token found, the address checked to be a Ray dashboard with a
// job API this build can use). Each refusal is exit 2 and names which.
func openRay(ctx context.Context, o SweepOptions) (*rayCluster, error) {
	address := o.RayAddress
	if address == "" {
		address = os.Getenv(RayAddressEnv)
	}
	if address == "" {
		return nil, usage(fmt.Errorf("--executor ray: no cluster address: give --ray-address http://HOST:8265 (the head node's dashboard) or set $%s", RayAddressEnv))
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--executor ray: stratbench's own binary: %w", err)
	}
	client, err := ray.Connect(ctx, address, exe, os.Getenv, os.Getenv("HOME"))
	var ae *ray.AddressError
	switch {
	case errors.As(err, &ae):
		return nil, usage(fmt.Errorf("--ray-address: %w", ae.Err))
	case err != nil:
		return nil, usage(fmt.Errorf("--executor ray: %w", err))
	}
	return &rayCluster{client: client, exe: exe}, nil
}

// useRay makes sr run on the cluster (ray.NewExecutor: the package built
// and uploaded, the sweep's executor set; nothing submitted yet). The
// runs use the node's Python unless python (--python of a new sweep)
// names one, which must then exist on every node.
func useRay(ctx context.Context, o SweepOptions, sr *sweepRun, c *rayCluster, jobs int, python string) error {
	if python != "" {
		python = sr.sess.Python().Executable // --python: a path on every node
	}
	e, err := ray.NewExecutor(ctx, ray.Setup{Client: c.client, Binary: c.exe, Strategy: sr.sess.Strategy(), Python: python,
		Slots: jobs, Doc: sr.Doc, Store: sr.Store, Jobs: sr.sess.Store(), Notices: notices(o), Stderr: o.Stderr})
	var be *ray.BuildError
	switch {
	case errors.As(err, &be):
		return usage(fmt.Errorf("--executor ray: %w", err))
	case err != nil:
		return fmt.Errorf("--executor ray: %w", err)
	}
	c.exec = e
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
	budget, err := dataBudget()
	if err != nil {
		return usage(err)
	}
	spill, err := spillBudget()
	if err != nil {
		return usage(err)
	}
	required, err := sandboxRequired()
	if err != nil {
		return usage(err)
	}
	err = ray.Shard(ctx, ray.ShardOptions{Config: o.Config, Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr,
		Version: Version, Sandbox: required, Budget: budget, SpillBudget: spill})
	var ce *ray.ConfigError
	var ie *local.InputError
	switch {
	case errors.As(err, &ce):
		return usage(fmt.Errorf("ray-shard: --config: %w", ce.Err))
	case errors.As(err, &ie):
		return dataError(err)
	}
	return err
}

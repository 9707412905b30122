package ray

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"time"
)

// JobStatus is a Ray job's status.
type JobStatus string

// Ray's job statuses. STOPPED, SUCCEEDED and FAILED are terminal.
const (
	JobPending   JobStatus = "PENDING"   // waiting for resources or its runtime_env
	JobRunning   JobStatus = "RUNNING"   // the entrypoint runs
	JobStopped   JobStatus = "STOPPED"   // stopped on request (POST …/stop)
	JobSucceeded JobStatus = "SUCCEEDED" // the entrypoint exited 0
	JobFailed    JobStatus = "FAILED"    // non-zero exit, or Ray could not run it (Message says why)
)

// Terminal says whether the job will not change any more.
func (s JobStatus) Terminal() bool {
	return s == JobStopped || s == JobSucceeded || s == JobFailed
}

// RuntimeEnv is the part of Ray's runtime_env this client sends. A
// sweep's jobs use EnvVars only: a package given as WorkingDir or PyModules
// is put on the Python path of Ray's own processes for the job, which
// import from it before the entrypoint could check it (see CoordinatorJob).
type RuntimeEnv struct {
	// WorkingDir is a package uploaded with EnsurePackage: Ray unpacks it
	// on the node and runs the entrypoint (and the job's tasks and
	// actors) in it.
	WorkingDir PackageURI `json:"working_dir,omitempty"`
	// PyModules are packages unpacked on the node and put on PYTHONPATH.
	PyModules []PackageURI `json:"py_modules,omitempty"`
	// EnvVars are set for the entrypoint, the job's tasks and actors, and
	// Ray's job supervisor of this job (so RAY_JOB_STOP_WAIT_TIME_S here
	// sets this job's stop grace, see StopGraceEnv).
	EnvVars map[string]string `json:"env_vars,omitempty"`
}

// StopGraceEnv is the variable that sets how long Ray's job supervisor
// waits, after sending SIGTERM to the entrypoint's process tree on a stop,
// before SIGKILL. Ray's default is 3 s; set in RuntimeEnv.EnvVars it
// applies to that job only (measured: see the package tests).
const StopGraceEnv = "RAY_JOB_STOP_WAIT_TIME_S"

// JobRequest is a job to submit.
//
// Placement: Ray runs an entrypoint that reserves no resources on the head
// node (ray-project/ray#42436). So a request must either reserve CPUs
// (EntrypointNumCPUs, optionally EntrypointResources), which Ray places
// where they are free, or say OnHead: it reserves nothing and runs on the
// head on purpose (a light coordinator whose loss is the cluster's loss
// anyway). Submit refuses a request that does neither, so no work lands on
// the head by accident.
type JobRequest struct {
	Entrypoint string // a shell command, run by /bin/sh in the working directory
	// SubmissionID names the job. Ray refuses an id that already exists,
	// so a submission retried with the same id never runs twice. Empty:
	// Ray makes one ("raysubmit_…"). Letters, digits, '_', '-', '.'.
	SubmissionID        string
	RuntimeEnv          RuntimeEnv
	Metadata            map[string]string
	EntrypointNumCPUs   float64
	EntrypointResources map[string]float64 // custom resources, e.g. {"node2": 1}
	OnHead              bool
}

// jobSubmitBody is the JSON of POST /api/jobs/.
type jobSubmitBody struct {
	Entrypoint          string             `json:"entrypoint"`
	SubmissionID        string             `json:"submission_id,omitempty"`
	RuntimeEnv          *RuntimeEnv        `json:"runtime_env,omitempty"`
	Metadata            map[string]string  `json:"metadata,omitempty"`
	EntrypointNumCPUs   float64            `json:"entrypoint_num_cpus"`
	EntrypointResources map[string]float64 `json:"entrypoint_resources,omitempty"`
}

// submissionIDPattern is checked with the length apart: a bounded
// repetition ({1,128}) compiles to a program of that many copies, at every
// start of stratbench's executable (the runs' inits included): 0.5 ms each.
var submissionIDPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

func (r JobRequest) validate() error {
	switch {
	case r.Entrypoint == "":
		return errors.New("ray: job request: empty entrypoint")
	case r.SubmissionID != "" && (len(r.SubmissionID) > 128 || !submissionIDPattern.MatchString(r.SubmissionID)):
		return fmt.Errorf("ray: job request: submission id %q: want 1 to 128 letters, digits, '_', '-' or '.'", r.SubmissionID)
	case r.EntrypointNumCPUs < 0 || math.IsNaN(r.EntrypointNumCPUs) || math.IsInf(r.EntrypointNumCPUs, 0):
		return fmt.Errorf("ray: job request: entrypoint_num_cpus %v", r.EntrypointNumCPUs)
	}
	for name, n := range r.EntrypointResources {
		if name == "" || n <= 0 || math.IsNaN(n) || math.IsInf(n, 0) {
			return fmt.Errorf("ray: job request: entrypoint resource %q = %v: want a name and a positive amount", name, n)
		}
	}
	reserves := r.EntrypointNumCPUs > 0 || len(r.EntrypointResources) > 0
	if r.OnHead && reserves {
		return errors.New("ray: job request: OnHead with reserved resources: Ray places a job that reserves resources wherever they are free")
	}
	if !r.OnHead && !reserves {
		return errors.New("ray: job request reserves no CPU, so Ray would run it on the head node: set EntrypointNumCPUs, or OnHead for a job meant to run there")
	}
	return nil
}

// Submit submits a job and returns its submission id.
func (c *Client) Submit(ctx context.Context, r JobRequest) (string, error) {
	if err := r.validate(); err != nil {
		return "", err
	}
	body := jobSubmitBody{
		Entrypoint:          r.Entrypoint,
		SubmissionID:        r.SubmissionID,
		Metadata:            r.Metadata,
		EntrypointNumCPUs:   r.EntrypointNumCPUs,
		EntrypointResources: r.EntrypointResources,
	}
	if r.RuntimeEnv.WorkingDir != "" || len(r.RuntimeEnv.PyModules) > 0 || len(r.RuntimeEnv.EnvVars) > 0 {
		env := r.RuntimeEnv
		body.RuntimeEnv = &env
	}
	data, err := json.Marshal(body)
	if err != nil {
		return "", fmt.Errorf("ray: job request: %w", err)
	}
	req := newRequest(http.MethodPost, "/api/jobs/")
	req.body, req.length, req.ctype = bytes.NewReader(data), int64(len(data)), "application/json"
	var out struct {
		SubmissionID string `json:"submission_id"`
		JobID        string `json:"job_id"`
	}
	if err := c.call(ctx, req, &out, maxErrorBody); err != nil {
		return "", err
	}
	if out.SubmissionID == "" {
		return "", &ProtocolError{Endpoint: req.endpoint, Detail: "no submission_id in the answer"}
	}
	return out.SubmissionID, nil
}

// JobInfo is Ray's account of a job (GET /api/jobs/{id}).
type JobInfo struct {
	Type         string    `json:"type"` // SUBMISSION (through this API) or DRIVER
	SubmissionID string    `json:"submission_id"`
	JobID        string    `json:"job_id"` // Ray's core job id, once the entrypoint runs a driver
	Status       JobStatus `json:"status"`
	Entrypoint   string    `json:"entrypoint"`
	// Message says why, for FAILED and STOPPED: "Job supervisor actor
	// died: … its node has died", "Job entrypoint command failed with exit
	// code 1, last available logs …".
	Message   string            `json:"message"`
	ErrorType string            `json:"error_type"`
	StartMS   int64             `json:"start_time"` // Unix ms
	EndMS     int64             `json:"end_time"`   // Unix ms, once terminal
	Metadata  map[string]string `json:"metadata"`
	// RuntimeEnv as Ray holds it (it may add keys of its own).
	RuntimeEnv json.RawMessage `json:"runtime_env"`
	// DriverNodeID is the node whose job supervisor runs the entrypoint;
	// DriverAgentAddress that node's agent (which serves the logs).
	DriverNodeID       string `json:"driver_node_id"`
	DriverAgentAddress string `json:"driver_agent_http_address"`
	DriverExitCode     *int   `json:"driver_exit_code"`
}

// Start and End are the job's times (zero when Ray has none).
func (j JobInfo) Start() time.Time { return msTime(j.StartMS) }

// End is when the job became terminal (zero before).
func (j JobInfo) End() time.Time { return msTime(j.EndMS) }

func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// Job returns a job's details. A job that does not exist is an error that
// matches ErrNotFound.
func (c *Client) Job(ctx context.Context, id string) (JobInfo, error) {
	var j JobInfo
	err := c.call(ctx, newRequest(http.MethodGet, "/api/jobs/"+pathSegment(id)), &j, maxSmallJSON)
	return j, err
}

// Jobs lists the cluster's jobs: those submitted through this API and, with
// Type DRIVER, scripts that connected to the cluster themselves.
func (c *Client) Jobs(ctx context.Context) ([]JobInfo, error) {
	var js []JobInfo
	err := c.call(ctx, newRequest(http.MethodGet, "/api/jobs/"), &js, maxSmallJSON)
	return js, err
}

// Stop asks Ray to stop a job: Ray's job supervisor sends SIGTERM to the
// entrypoint's process tree, then SIGKILL after the job's stop grace (3 s
// unless StopGraceEnv says otherwise). It returns whether the job was still
// running. It does not wait; Wait does.
func (c *Client) Stop(ctx context.Context, id string) (bool, error) {
	var out struct {
		Stopped bool `json:"stopped"`
	}
	err := c.call(ctx, newRequest(http.MethodPost, "/api/jobs/"+pathSegment(id)+"/stop"), &out, maxErrorBody)
	return out.Stopped, err
}

// Delete removes a terminal job's record from the cluster (Ray refuses to
// delete a job that is not terminal). Right after a stop, the record may
// come back: Ray's job manager watches the job's supervisor actor until it
// reads a terminal status, reads none once the record is deleted, and
// writes the job FAILED when the actor has exited by then; a caller that
// needs the record gone deletes again while it reads one.
func (c *Client) Delete(ctx context.Context, id string) (bool, error) {
	var out struct {
		Deleted bool `json:"deleted"`
	}
	err := c.call(ctx, newRequest(http.MethodDelete, "/api/jobs/"+pathSegment(id)), &out, maxErrorBody)
	return out.Deleted, err
}

// Wait polls a job's status every interval until it is terminal, and
// returns its details then.
func (c *Client) Wait(ctx context.Context, id string, interval time.Duration) (JobInfo, error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		j, err := c.Job(ctx, id)
		if err != nil || j.Status.Terminal() {
			return j, err
		}
		select {
		case <-ctx.Done():
			return j, fmt.Errorf("ray: waiting for job %s (%s): %w", id, j.Status, ctx.Err())
		case <-t.C:
		}
	}
}

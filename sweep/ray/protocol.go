package ray

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// The coordinator (coordinator.py) is sent to the cluster in the work
// package, so it always matches the binary that sends it.
//
//go:embed coordinator.py
var coordinatorScript []byte

// EventMarker starts each line the coordinator prints for the local side;
// the rest of the line is one JSON object (an Event). Lines without it are
// Ray's own ("Runtime env is setting up.", the entrypoint it runs) or
// Python's warnings, and are not events. The "/1" is the protocol's version.
const EventMarker = "@stratbench/1 "

// WorkFormat is the version of WorkSpec.
const WorkFormat = 1

// CoordinatorStopGrace is the stop grace of a coordinator job, in seconds
// (StopGraceEnv): above the 60 s on_finish limit, with room for the
// coordinator to collect the stopped runs' results and close its slots,
// so that Ray's SIGKILL never comes first.
const CoordinatorStopGrace = 90

// RunKey identifies a run of a sweep: (fold, phase, index), unique in the
// sweep. Fold and Phase are null outside walk-forward.
type RunKey struct {
	Fold  *int    `json:"fold"`
	Phase *string `json:"phase"`
	Index int     `json:"index"`
}

func (k RunKey) String() string {
	var b strings.Builder
	if k.Fold != nil {
		fmt.Fprintf(&b, "fold %d ", *k.Fold)
	}
	if k.Phase != nil {
		fmt.Fprintf(&b, "%s ", *k.Phase)
	}
	fmt.Fprintf(&b, "index %d", k.Index)
	return b.String()
}

// WorkItem is one run to do: its key and what the shard needs to run it
// (params, window: the shard's business, passed through).
type WorkItem struct {
	Key     RunKey          `json:"key"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// ShardCommand is how a slot starts its shard process on its node, in the
// job's working directory (where "./stratbench" is).
type ShardCommand struct {
	Argv []string          `json:"argv"`
	Env  map[string]string `json:"env,omitempty"`
}

// WorkSpec is the work of one coordinator job (spec.json).
type WorkSpec struct {
	Format  int          `json:"format"`
	SweepID string       `json:"sweep_id"`
	Shard   ShardCommand `json:"shard"`
	// Slots is how many shard processes to run at once; 0 means one per
	// CPU of the cluster (never more than the items).
	Slots int `json:"slots,omitempty"`
	// MaxLineBytes bounds one line from a shard (a result); 0 means 16
	// MiB.
	MaxLineBytes int `json:"max_line_bytes,omitempty"`
	// SlotTimeoutSeconds: the job fails when no slot has started by then
	// (0: 300 s).
	SlotTimeoutSeconds float64 `json:"slot_timeout_s,omitempty"`
	// CloseTimeoutSeconds: how long a shard has to exit once its input
	// is closed, before it is killed (0: 10 s).
	CloseTimeoutSeconds float64    `json:"close_timeout_s,omitempty"`
	Items               []WorkItem `json:"items"`
}

func (s WorkSpec) validate() error {
	if s.Format != WorkFormat {
		return fmt.Errorf("ray: work spec: format %d, want %d", s.Format, WorkFormat)
	}
	if len(s.Shard.Argv) == 0 || s.Shard.Argv[0] == "" {
		return errors.New("ray: work spec: no shard command")
	}
	seen := make(map[string]bool, len(s.Items))
	for i, it := range s.Items {
		if it.Key.Index < 0 {
			return fmt.Errorf("ray: work spec: item %d: negative index", i)
		}
		k := it.Key.String()
		if seen[k] {
			return fmt.Errorf("ray: work spec: item %d: %s twice", i, k)
		}
		seen[k] = true
	}
	return nil
}

// The work package: a Python package that Ray unpacks on the head and puts
// on PYTHONPATH (runtime_env py_modules), holding the coordinator and its
// spec. It changes with every sweep; the working-directory package (the
// binary, the strategy, the data) does not, and is not sent again.
const (
	workModule = "stratbench_work"
	workSpec   = workModule + "/spec.json"
)

// BuildWorkPackage writes the work package of spec in dir.
func BuildWorkPackage(spec WorkSpec, dir string) (*Package, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("ray: work spec: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("ray: package folder: %w", err)
	}
	pw, err := newPackageWriter(abs, MaxPackageBytes)
	if err != nil {
		return nil, err
	}
	defer pw.abort()
	for _, f := range []struct {
		name string
		data []byte
	}{
		{workModule + "/__init__.py", nil},
		{workModule + "/__main__.py", coordinatorScript},
		{workSpec, data},
	} {
		if err := pw.add(f.name, f.data, false); err != nil {
			if errors.Is(err, errOverLimit) {
				return nil, &TooLargeError{Limit: MaxPackageBytes, Size: pw.counted.n}
			}
			return nil, err
		}
	}
	pkg, err := pw.finish()
	if errors.Is(err, errOverLimit) {
		return nil, &TooLargeError{Limit: MaxPackageBytes, Size: pw.counted.n}
	}
	return pkg, err
}

// coordinatorEntrypoint runs the coordinator with the head's Python that
// has Ray: `python` on the head's PATH, else `python3`.
const coordinatorEntrypoint = `for py in python python3; do if command -v "$py" >/dev/null 2>&1 && "$py" -c "import ray" >/dev/null 2>&1; then exec "$py" -u -m ` +
	workModule + `; fi; done; echo "stratbench: no python with ray on the head node's PATH" >&2; exit 127`

// CoordinatorJob is the job request of a coordinator: on the head on
// purpose (it reserves nothing, and its node's loss is the cluster's), in
// the working directory code, with the work package on its PYTHONPATH, and
// with a stop grace above the on_finish limit.
func CoordinatorJob(submissionID string, code, work *Package, metadata map[string]string) JobRequest {
	return JobRequest{
		Entrypoint:   coordinatorEntrypoint,
		SubmissionID: submissionID,
		RuntimeEnv: RuntimeEnv{
			WorkingDir: code.URI,
			PyModules:  []PackageURI{work.URI},
			EnvVars:    map[string]string{StopGraceEnv: strconv.Itoa(CoordinatorStopGrace)},
		},
		Metadata: metadata,
		OnHead:   true,
	}
}

// EventType names a coordinator event.
type EventType string

// The coordinator's events, in the order a sweep meets them.
const (
	EventHello     EventType = "hello"     // started: Items, Slots, Ray, NodeID (the head)
	EventSlot      EventType = "slot"      // a slot is up (State "up", NodeID) or lost (State "lost", Reason)
	EventStarted   EventType = "started"   // Key handed to Slot on NodeID, Attempt (1, 2, …)
	EventResult    EventType = "result"    // Key's Result, from Slot on NodeID: printed once per key
	EventRequeued  EventType = "requeued"  // Key's slot was lost mid-run; it runs again (Reason)
	EventAbandoned EventType = "abandoned" // Key lost its slot MAX_ATTEMPTS times: no result will come
	EventDropped   EventType = "dropped"   // Key's slot was lost while stopping: no result, runs on resume
	EventStopping  EventType = "stopping"  // a stop was received: runs in flight are stopping
	EventDone      EventType = "done"      // the end: Status "finished" or "stopped", Results
	EventError     EventType = "error"     // the coordinator failed: Message (the job then fails)
)

// SlotState is the state a slot event reports.
type SlotState string

// Slot states.
const (
	SlotUp   SlotState = "up"   // the slot's shard is ready on NodeID
	SlotLost SlotState = "lost" // the slot is gone (Reason): its node lost, its process killed, its shard broken
)

// DoneStatus is how a coordinator ended.
type DoneStatus string

// Done statuses.
const (
	DoneFinished DoneStatus = "finished" // every item has a result (or was abandoned)
	DoneStopped  DoneStatus = "stopped"  // stopped: the runs in flight have their (stopped) results, the rest none
)

// Event is one line of the coordinator.
type Event struct {
	Type      EventType       `json:"type"`
	Key       *RunKey         `json:"key,omitempty"`
	Slot      *int            `json:"slot,omitempty"`
	NodeID    string          `json:"node_id,omitempty"`
	Attempt   int             `json:"attempt,omitempty"`
	State     SlotState       `json:"state,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	Status    DoneStatus      `json:"status,omitempty"`
	Message   string          `json:"message,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Items     int             `json:"items,omitempty"`
	Slots     int             `json:"slots,omitempty"`
	Results   int             `json:"results,omitempty"`
	InFlight  int             `json:"in_flight,omitempty"`
	Ray       string          `json:"ray,omitempty"`
	Attempts  int             `json:"attempts,omitempty"`
	PID       int             `json:"pid,omitempty"`
	Traceback string          `json:"traceback,omitempty"`
}

// ParseEvent reads a line of a coordinator job's log. A line without
// EventMarker is not an event (ok false). A marked line that is not a
// well-formed event is an error: the coordinator and this client disagree.
func ParseEvent(line string) (ev Event, ok bool, err error) {
	body, marked := strings.CutPrefix(line, EventMarker)
	if !marked {
		return Event{}, false, nil
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		return Event{}, true, fmt.Errorf("ray: coordinator event %s: %w", snippet([]byte(body)), err)
	}
	if dec.More() {
		return Event{}, true, fmt.Errorf("ray: coordinator event %s: more than one JSON value", snippet([]byte(body)))
	}
	if err := ev.validate(); err != nil {
		return Event{}, true, fmt.Errorf("ray: coordinator event %s: %w", snippet([]byte(body)), err)
	}
	return ev, true, nil
}

func (ev Event) validate() error {
	needKey := func() error {
		if ev.Key == nil {
			return errors.New("no key")
		}
		if ev.Key.Index < 0 {
			return errors.New("negative index")
		}
		return nil
	}
	switch ev.Type {
	case EventHello, EventStopping:
		return nil
	case EventSlot:
		if ev.Slot == nil || (ev.State != SlotUp && ev.State != SlotLost) {
			return errors.New("a slot event needs a slot and a state up or lost")
		}
		return nil
	case EventStarted, EventRequeued, EventAbandoned, EventDropped:
		return needKey()
	case EventResult:
		if err := needKey(); err != nil {
			return err
		}
		if len(ev.Result) == 0 || string(ev.Result) == "null" {
			return errors.New("a result event without a result")
		}
		return nil
	case EventDone:
		if ev.Status != DoneFinished && ev.Status != DoneStopped {
			return fmt.Errorf("done with status %q", ev.Status)
		}
		return nil
	case EventError:
		if ev.Message == "" {
			return errors.New("an error event without a message")
		}
		return nil
	}
	return fmt.Errorf("unknown event type %q", ev.Type)
}

package ray

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The coordinator (coordinator.py) is sent to the cluster in the work
// package, so it always matches the binary that sends it. The bootstrap
// (bootstrap.py) travels in the coordinator job's entrypoint: it fetches
// the work package and runs the coordinator only when the package's sha256
// is the one the entrypoint names.
var (
	//go:embed coordinator.py
	coordinatorScript []byte
	//go:embed bootstrap.py
	bootstrapScript string
)

// EventMarker starts each line the coordinator prints for the local side;
// the rest of the line is one JSON object (an Event). Lines without it are
// Ray's own ("Runtime env is setting up.", the entrypoint it runs) or
// Python's warnings, and are not events. The "/1" is the protocol's version.
const EventMarker = "@stratbench/1 "

// WorkFormat is the version of WorkSpec. 2: the code package is no
// longer the job's working directory; the spec names it (Code) and the
// slots unpack and check it themselves.
const WorkFormat = 2

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
// folder where the slot unpacked the code package (where "./stratbench"
// is).
type ShardCommand struct {
	Argv []string          `json:"argv"`
	Env  map[string]string `json:"env,omitempty"`
}

// PackageCheck is what the node side checks a package against: its name,
// the sha256 of its zip, and every file in it (the package's own manifest
// included) with its size and sha256.
type PackageCheck struct {
	URI    PackageURI `json:"uri"`
	SHA256 string     `json:"sha256"`
	Files  []Entry    `json:"files"`
}

// Check is what the node side checks p against.
func (p *Package) Check() PackageCheck {
	return PackageCheck{URI: p.URI, SHA256: p.SHA256, Files: p.Files}
}

// WorkSpec is the work of one coordinator job (spec.json).
type WorkSpec struct {
	Format  int          `json:"format"`
	SweepID string       `json:"sweep_id"`
	Shard   ShardCommand `json:"shard"`
	// Code is the code package (BuildPackage): the coordinator fetches it
	// from the cluster's store and runs nothing of it unless its sha256 is
	// Code.SHA256; each slot unpacks it on its node and checks every file
	// against Code.Files before it starts the shard there.
	Code PackageCheck `json:"code"`
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
	if _, _, err := s.Code.URI.split(); err != nil {
		return fmt.Errorf("ray: work spec: the code package: %w", err)
	}
	if !sha256Hex.MatchString(s.Code.SHA256) || len(s.Code.Files) == 0 {
		return errors.New("ray: work spec: the code package: want its sha256 and its files")
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

// The work package: a zip of the coordinator and its spec, which the
// coordinator job's entrypoint fetches from the cluster's store and checks
// (it is never unpacked, nor put on a Python path). It changes with every
// sweep; the code package (the binary, the strategy, the data) does not,
// and is not sent again.
const (
	workCoordinator = "coordinator.py"
	workSpec        = "spec.json"
)

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

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
		{workCoordinator, coordinatorScript},
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

// coordinatorEntrypoint runs the bootstrap, with the work package's name
// and sha256, with the head's Python that has Ray: `python` on the head's
// PATH, else `python3`.
func coordinatorEntrypoint(work *Package) string {
	return `for py in python python3; do if command -v "$py" >/dev/null 2>&1 && "$py" -c "import ray" >/dev/null 2>&1; then exec "$py" -u -c ` +
		shellQuote(bootstrapScript) + " " + shellQuote(string(work.URI)) + " " + shellQuote(work.SHA256) +
		`; fi; done; echo "stratbench: no python with ray on the head node's PATH" >&2; exit 127`
}

// shellQuote quotes s as one word for /bin/sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// CoordinatorJob is the job request of a coordinator: on the head on
// purpose (it reserves nothing, and its node's loss is the cluster's), with
// a stop grace above the on_finish limit. Its entrypoint names the work
// package and its sha256; the job has no working directory and no
// py_modules: Ray would put a package given there on the Python path of its
// own processes for the job (its job supervisor imports from it before the
// entrypoint starts), so a package uploaded by someone else under that name
// would run before any check could.
func CoordinatorJob(submissionID string, work *Package, metadata map[string]string) JobRequest {
	return JobRequest{
		Entrypoint:   coordinatorEntrypoint(work),
		SubmissionID: submissionID,
		RuntimeEnv: RuntimeEnv{
			EnvVars: map[string]string{StopGraceEnv: strconv.Itoa(CoordinatorStopGrace)},
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
	// EventPackage: a package is not the one stratbench built (Message
	// names what differs, NodeID where); nothing of it ran there, and the
	// job fails.
	EventPackage EventType = "package"
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
	case EventError, EventPackage:
		if ev.Message == "" {
			return fmt.Errorf("%s event without a message", ev.Type)
		}
		return nil
	}
	return fmt.Errorf("unknown event type %q", ev.Type)
}

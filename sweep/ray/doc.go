// Package ray runs a sweep's runs on a Ray cluster, driven from Go through
// the Ray Jobs REST API (the dashboard's HTTP server on the head node, port
// 8265 by default). The local stratbench schedules, collects and stores;
// the runs happen on the cluster's nodes, each supervised there by
// stratbench's own binary with every limit of a local run.
//
// Executor (NewExecutor) is the sweep's sweep.RunExecutor on a cluster:
// it builds and uploads the packages, submits one coordinator job per
// phase and brings each run's job folder home (executor.go). Shard is
// `stratbench ray-shard`, the node's side: it runs the items it is handed
// through sweep/local's Starter, as a local sweep does (shard.go). Neither
// names a command-line flag: the command names them.
//
// # The client
//
// Client speaks the REST API, with the cluster's token when it uses Ray's
// token authentication (FindToken finds it where Ray's own tools do; a
// Token prints its source, never itself): Version and Preflight (GET /api/version),
// packages (GET and PUT /api/packages/gcs/NAME), jobs (Submit, Job, Jobs,
// Stop, Delete, Wait) and logs (Logs, ReadLogs, TailLogs over the
// WebSocket, Follow). Preflight comes first, before anything is uploaded:
// its error is an *UnreachableError (nothing answers HTTP at the address),
// a *NoJobAPIError (something answers, but not a Ray dashboard with the job
// API: a Ray without "ray[default]", or not Ray), an *AuthError (the
// cluster wants a token: none was found, or it refused the one sent, named
// by its source) or a *VersionError (a Ray or job API this package
// cannot use); the command line turns each into exit 2, its message naming
// which. Every other error names the endpoint and carries Ray's message
// (*APIError, the last exception line of the traceback Ray answers with).
//
// JobRequest makes placement explicit: Ray runs an entrypoint that
// reserves nothing on the head node, so a request either reserves CPUs
// (EntrypointNumCPUs) or says OnHead; Submit refuses one that does
// neither.
//
// # Packages
//
// What a run needs reaches the nodes through Ray itself, as two
// content-addressed packages ("gcs://_ray_pkg_<sha256>.zip"), each uploaded
// only when the cluster does not hold it yet (EnsurePackage):
//
//   - the code package (BuildPackage): stratbench's binary (a linux/amd64
//     ELF: CheckExecutable), the strategy's folder and the data, with a
//     manifest of every file's size and checksum. It is deterministic
//     (sorted entries, fixed times and modes), so it changes only when one
//     of them does. Ray's dashboard takes at most MaxPackageBytes (100 MiB)
//     in one upload; over it the build stops with a *TooLargeError before
//     anything is sent, and the data must be read by the nodes from a path
//     they share (NodeData).
//   - the work package (BuildWorkPackage): the coordinator and the work of
//     this job, including the code package's PackageCheck. It is small and
//     changes with every sweep, so the code package is not sent again for
//     a new sweep or a resume.
//
// A name proves nothing: whoever reaches the dashboard can upload a package
// under any name (before stratbench, or over its upload). So neither
// package is a Ray working_dir or py_modules (Ray would put it on the
// Python path of its own processes, which import from it before anything
// of ours runs), and each is checked before anything of it is used, in a
// chain that starts in the job's entrypoint (CoordinatorJob), which only
// the submitting stratbench writes: the entrypoint holds the bootstrap
// (bootstrap.py) and the work package's sha256; the bootstrap reads the
// work package from Ray's store and runs the coordinator only when the
// sha256 matches; the coordinator does the same for the code package
// against the spec, and every slot checks the folder it unpacked it into,
// file by file, before it starts the shard. A failed check is an
// EventPackage naming what differs, and the job fails.
//
// # The node side
//
// A sweep (or each phase of a walk-forward) is one Ray job, the
// coordinator (coordinator.py, CoordinatorJob), not one job per
// combination: each Ray job costs a supervisor actor of about 85 MB on the
// cluster (82 MiB of PSS measured per running job), Ray becomes unstable
// with some tens of running jobs, and each job pays a few seconds of
// set-up. The coordinator runs on the head, on purpose: it reserves
// nothing, and the head's loss is the cluster's loss anyway, so the
// coordinator is never what a lost worker node takes with it.
//
// The coordinator starts one Slot actor per CPU it may use (num_cpus=1
// each, spread over the nodes by Ray), and each slot starts one long-lived
// shard process on its node: stratbench's binary in the folder where the
// node unpacked the code package (TMPDIR/stratbench-ray/packages/SHA256,
// read-only, shared by the node's slots and removed when the last one
// closes), which loads the data once and runs items one after another as
// ordinary supervised jobs. Work is pulled: the coordinator holds the queue
// and hands the next item to a slot only when the slot is idle, one item in
// flight per slot, so a slow run holds back nothing but its own slot, and
// slots that Ray can only start later (busy CPUs, nodes joining) take work
// when they come up.
//
// Actors rather than shard jobs, for four reasons. Ray stops a job by
// sending SIGTERM to every process of its entrypoint's tree, then SIGKILL
// after the job's stop grace (3 s by default): for shard jobs, that tree
// holds the strategies' Python workers, which would die before on_finish.
// Actors are not in the coordinator's tree, so a stop reaches the
// coordinator alone, which stops the runs through the shards' input. Ray
// places actors by CPU wherever CPUs are, and reports a lost one to its
// owner within seconds (about 4 s measured, for a node that vanished). An
// actor knows the Python that runs Ray on its node (sys.executable), which
// is the strategies' Python there unless the sweep names another present on
// every node. And the number of Ray jobs stays one.
//
// The slot protocol, one JSON object per line on the shard's stdin and
// stdout (its stderr goes to the slot's log on the node):
//
//	shard → slot   {"type":"ready", …}                       once, when the data is loaded
//	slot → shard   {"type":"run","key":KEY,"payload":{…}}     one item (params, window)
//	shard → slot   {"type":"result","key":KEY,"result":{…}}   its outcome (the report, the log)
//	slot → shard   {"type":"stop"}                            stop the run in flight: on_finish runs,
//	                                                          its result (stopped) follows
//	slot → shard   EOF                                        stop and exit (also when the slot's
//	                                                          process dies: the pipe closes)
//
// The shard gets the node's Python in STRATBENCH_RAY_PYTHON and Ray's node
// id in STRATBENCH_RAY_NODE_ID.
//
// # Results, exactly once
//
// The coordinator prints its events (Event: hello, slot, started, result,
// requeued, abandoned, dropped, stopping, done, error) to stdout, which
// Ray keeps as the job's log, each line EventMarker then one JSON object;
// the local side reads them with Follow (the WebSocket tail, resumed at a
// LogCursor's byte offset after a dropped connection, then the whole log
// once at the end; polling GET …/logs alone would fetch the whole log
// each time) and ParseEvent. A result line carries the run's report and its
// log, which the local side writes into a local job folder and appends to
// the sweep's results, so status, logs and the sweep view work as for
// local runs.
//
// No key ever gets two results. The coordinator is the only writer of
// results and holds at most one run in flight per key; it prints a key's
// result once. When a slot's actor dies mid-run (its node lost, its process
// killed: Ray raises RayActorError for the run), the coordinator prints
// "requeued", puts the item back at the front of the queue and starts a
// replacement slot; a key is tried at most three times ("abandoned" then).
// On the local side, a key already in the sweep's results is never
// appended again, and a new coordinator job (after one failed, or on
// resume) only gets the keys without a result.
//
// # Stopping
//
// A stop (SIGINT or SIGTERM to the local stratbench) is Ray's job stop
// (Client.Stop): Ray sends SIGTERM to the coordinator only; it stops
// dispatching, sends "stop" to every busy shard, prints the stopped runs'
// results as they come (on_finish ran), closes the slots, prints "done"
// (stopped) and exits, and Ray marks the job STOPPED. The coordinator job
// carries a stop grace of CoordinatorStopGrace seconds (StopGraceEnv in
// its runtime_env; Ray reads it per job) above the 60 s on_finish limit,
// so that Ray's SIGKILL never comes first: with Ray's default grace, an
// entrypoint that needs 6 s after SIGTERM is killed at 3 s (measured).
package ray

"""stratbench's sweep coordinator, run by Ray as the entrypoint of one job.

It runs on the cluster's head node (the local stratbench submits it with no
resources on purpose: the head's loss is the cluster's, so a coordinator
there is never the one thing a lost worker node takes with it). It reads the
work (spec.json, next to this file), starts one Slot actor per CPU it may
use (num_cpus=1 each, so Ray spreads them over the nodes with CPUs), and
hands each idle slot the next item of a queue. Each slot owns one
long-lived shard process (stratbench's binary, from the job's working
directory, on the slot's node) that it talks to by JSON lines on stdin and
stdout; the shard loads the data once and runs items one after the other
under all of stratbench's limits.

Everything the local stratbench learns comes from this process's stdout,
which Ray keeps as the job's log: one line per event, MARK then compact
ASCII JSON (see protocol.go on the Go side for the events). Nothing else
this process prints starts with MARK; the shards' own output stays in the
slots' logs on their nodes (log_to_driver=False).

Exactly once: the coordinator is the only writer of results; an item has at
most one run in flight; a result is printed once per key. A slot whose actor
dies (its node lost, its process killed) has its item put back at the front
of the queue and run again elsewhere, at most MAX_ATTEMPTS times in all.

Stopping: Ray's job stop sends SIGTERM to this process (and only to it: the
actors are not its children). On SIGTERM or SIGINT the coordinator stops
dispatching, asks every busy shard to stop its run (the run ends as a
stopped run: on_finish runs), prints those results, closes the slots and
exits 0. The local stratbench submits the job with a stop grace
(RAY_JOB_STOP_WAIT_TIME_S) above the on_finish limit so that Ray does not
SIGKILL it first.
"""

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time
import traceback

MARK = "@stratbench/1 "
FORMAT = 1
MAX_ATTEMPTS = 3


def emit(event):
    sys.stdout.write(MARK + json.dumps(event, separators=(",", ":"), sort_keys=True) + "\n")
    sys.stdout.flush()


def key_id(key):
    return json.dumps(key, separators=(",", ":"), sort_keys=True)


def load_spec():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spec.json")
    with open(path, "rb") as f:
        spec = json.load(f)
    if spec.get("format") != FORMAT:
        raise ValueError("spec.json: format %r, want %d" % (spec.get("format"), FORMAT))
    argv = spec.get("shard", {}).get("argv")
    if not argv or not all(isinstance(a, str) for a in argv):
        raise ValueError("spec.json: shard.argv: want a list of strings")
    items = spec.get("items")
    if not isinstance(items, list):
        raise ValueError("spec.json: items: want a list")
    seen = set()
    for i, item in enumerate(items):
        if not isinstance(item, dict) or "key" not in item:
            raise ValueError("spec.json: items[%d]: want an object with a key" % i)
        k = key_id(item["key"])
        if k in seen:
            raise ValueError("spec.json: items[%d]: key %s twice" % (i, k))
        seen.add(k)
    return spec


def make_slot_class(ray):
    @ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0, max_concurrency=2)
    class Slot:
        """One CPU of the cluster: a shard process and the pipes to it.

        max_concurrency=2 lets stop() reach the shard while run() waits
        for its result.
        """

        def __init__(self, argv, env, max_line):
            self.node_id = ray.get_runtime_context().get_node_id()
            self.max_line = max_line
            child_env = dict(os.environ)
            child_env.update(env)
            # The interpreter that runs Ray on this node: the strategy's
            # Python, unless the sweep names one present on every node.
            child_env["STRATBENCH_RAY_PYTHON"] = sys.executable
            child_env["STRATBENCH_RAY_NODE_ID"] = self.node_id
            self.lock = threading.Lock()
            # The shard reads stdin until EOF: when this actor's process
            # dies, the pipe closes and the shard stops.
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=child_env)

        def _send(self, msg):
            data = (json.dumps(msg, separators=(",", ":")) + "\n").encode()
            with self.lock:
                self.proc.stdin.write(data)
                self.proc.stdin.flush()

        def _receive(self):
            line = self.proc.stdout.readline(self.max_line + 1)
            if not line:
                try:
                    code = self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    code = None
                raise RuntimeError("the shard closed its output (exit status %r)" % (code,))
            if len(line) > self.max_line:
                raise RuntimeError("the shard wrote a line over %d bytes" % self.max_line)
            msg = json.loads(line)
            if not isinstance(msg, dict):
                raise RuntimeError("the shard wrote %r, not an object" % (line[:200],))
            return msg

        def ready(self):
            msg = self._receive()
            if msg.get("type") != "ready":
                raise RuntimeError("the shard said %r before being ready" % (msg,))
            return {"node_id": self.node_id, "pid": self.proc.pid, "shard": msg}

        def run(self, key, payload):
            self._send({"type": "run", "key": key, "payload": payload})
            msg = self._receive()
            if msg.get("type") != "result" or key_id(msg.get("key")) != key_id(key):
                raise RuntimeError("the shard answered %r to the run of %s" % (msg, key_id(key)))
            return msg.get("result")

        def stop(self):
            try:
                self._send({"type": "stop"})
            except (BrokenPipeError, OSError):
                pass

        def close(self, timeout):
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                return self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                return self.proc.wait()

    return Slot


class Coordinator:
    def __init__(self, ray, spec):
        self.ray = ray
        self.spec = spec
        self.Slot = make_slot_class(ray)
        self.queue = collections.deque(spec["items"])
        self.total = len(self.queue)
        self.done = set()
        self.attempts = collections.Counter()
        self.slots = {}  # number -> {"actor", "state": starting|idle|busy|lost, "node_id"}
        self.pending = {}  # ObjectRef -> ("ready", slot) or ("run", slot, item, attempt)
        self.next_slot = 0
        self.stopping = False
        self.stop_sent = False
        shard = spec["shard"]
        self.argv = shard["argv"]
        self.env = {str(k): str(v) for k, v in (shard.get("env") or {}).items()}
        self.max_line = int(spec.get("max_line_bytes", 16 << 20))
        self.slot_timeout = float(spec.get("slot_timeout_s", 300))
        self.close_timeout = float(spec.get("close_timeout_s", 10))

    def request_stop(self, signum, frame):
        self.stopping = True

    def slot_count(self):
        cpus = int(self.ray.cluster_resources().get("CPU", 0))
        want = int(self.spec.get("slots") or 0) or cpus
        return max(1, min(want, self.total)) if self.total else 0

    def start_slot(self):
        n = self.next_slot
        self.next_slot += 1
        actor = self.Slot.options(scheduling_strategy="SPREAD").remote(self.argv, self.env, self.max_line)
        self.slots[n] = {"actor": actor, "state": "starting", "node_id": None}
        self.pending[actor.ready.remote()] = ("ready", n)

    def lose_slot(self, n, reason):
        slot = self.slots[n]
        slot["state"] = "lost"
        emit({"type": "slot", "slot": n, "state": "lost", "node_id": slot["node_id"], "reason": reason})
        try:
            self.ray.kill(slot["actor"])
        except Exception:
            pass

    def runs_in_flight(self):
        return sum(1 for v in self.pending.values() if v[0] == "run")

    def dispatch(self):
        for n, slot in self.slots.items():
            if not self.queue:
                return
            if slot["state"] != "idle":
                continue
            item = self.queue.popleft()
            k = key_id(item["key"])
            self.attempts[k] += 1
            attempt = self.attempts[k]
            ref = slot["actor"].run.remote(item["key"], item.get("payload"))
            self.pending[ref] = ("run", n, item, attempt)
            slot["state"] = "busy"
            emit({"type": "started", "key": item["key"], "slot": n, "node_id": slot["node_id"], "attempt": attempt})

    def on_ready(self, ref, n):
        slot = self.slots[n]
        try:
            info = self.ray.get(ref)
        except Exception as e:  # the shard could not start there
            self.lose_slot(n, first_line(e))
            self.replace_slot()
            return
        slot["node_id"] = info["node_id"]
        slot["state"] = "idle"
        self.ever_up = True
        emit({"type": "slot", "slot": n, "state": "up", "node_id": info["node_id"], "pid": info["pid"]})

    def on_run(self, ref, n, item, attempt):
        slot = self.slots[n]
        k = key_id(item["key"])
        try:
            result = self.ray.get(ref)
        except self.ray.exceptions.RayActorError as e:
            # The slot's process is gone: its node was lost, or it was
            # killed. The item goes back to the front of the queue.
            reason = first_line(e)
            self.lose_slot(n, reason)
            self.retry(item, attempt, "slot %d on node %s lost: %s" % (n, slot["node_id"], reason))
            self.replace_slot()
            return
        except Exception as e:
            # The shard broke its protocol or died mid-run: the run is
            # tried again elsewhere, the slot is not trusted again.
            reason = first_line(e)
            self.lose_slot(n, reason)
            self.retry(item, attempt, "slot %d on node %s failed: %s" % (n, slot["node_id"], reason))
            self.replace_slot()
            return
        slot["state"] = "idle"
        if k in self.done:
            return  # never twice
        self.done.add(k)
        emit({"type": "result", "key": item["key"], "slot": n, "node_id": slot["node_id"], "attempt": attempt, "result": result})

    def retry(self, item, attempt, reason):
        k = key_id(item["key"])
        if self.stopping:
            emit({"type": "dropped", "key": item["key"], "reason": reason + "; not run again: stopping"})
            return
        if attempt >= MAX_ATTEMPTS:
            self.done.add(k)
            emit({"type": "abandoned", "key": item["key"], "attempts": attempt, "reason": reason})
            return
        self.queue.appendleft(item)
        emit({"type": "requeued", "key": item["key"], "attempt": attempt, "reason": reason})

    def replace_slot(self):
        if self.stopping or not self.queue and not self.runs_in_flight():
            return
        if self.next_slot >= self.max_slots_started:
            return
        self.start_slot()

    def run(self):
        k = self.slot_count()
        self.max_slots_started = max(2 * k, k + 4)
        emit({"type": "hello", "items": self.total, "slots": k, "ray": self.ray.__version__,
              "node_id": self.ray.get_runtime_context().get_node_id()})
        self.ever_up = False
        began = time.monotonic()
        for _ in range(k):
            self.start_slot()
        while True:
            if self.stopping and not self.stop_sent:
                self.stop_sent = True
                emit({"type": "stopping", "in_flight": self.runs_in_flight()})
                for slot in self.slots.values():
                    if slot["state"] == "busy":
                        slot["actor"].stop.remote()
            if not self.stopping:
                self.dispatch()
            if self.runs_in_flight() == 0 and (self.stopping or not self.queue):
                break
            if not self.pending:
                raise RuntimeError("no slot left to run %d items (every slot was lost, %d started)" % (len(self.queue), self.next_slot))
            if not self.ever_up and time.monotonic() - began > self.slot_timeout:
                raise RuntimeError("no slot started within %.0f s: does the cluster have free CPUs?" % self.slot_timeout)
            ready, _ = self.ray.wait(list(self.pending), num_returns=1, timeout=0.5)
            for ref in ready:
                what = self.pending.pop(ref)
                if what[0] == "ready":
                    self.on_ready(ref, what[1])
                else:
                    self.on_run(ref, *what[1:])
        self.close()
        status = "stopped" if self.stopping else "finished"
        emit({"type": "done", "status": status, "results": len(self.done), "items": self.total})

    def close(self):
        closing = []
        for slot in self.slots.values():
            if slot["state"] in ("idle", "busy"):
                closing.append(slot["actor"].close.remote(self.close_timeout))
        if closing:
            self.ray.wait(closing, num_returns=len(closing), timeout=self.close_timeout + 5)
        for slot in self.slots.values():
            try:
                self.ray.kill(slot["actor"])
            except Exception:
                pass


def first_line(e):
    text = str(e).strip() or type(e).__name__
    lines = [l for l in text.splitlines() if l.strip()]
    # Ray's own messages put the cause on the last lines.
    return " ".join(l.strip() for l in lines[-3:])[:1000]


def main():
    try:
        spec = load_spec()
    except Exception as e:
        emit({"type": "error", "message": "reading the work: %s" % e})
        return 1
    import ray  # after the spec: an error there is ours, not Ray's

    coord = Coordinator(ray, spec)
    try:
        ray.init(log_to_driver=False)
        # After ray.init, which installs its own SIGTERM handler (exit at
        # once): a stop must reach ours, which lets the runs in flight
        # finish as stopped runs. A stop during ray.init ends the job
        # before any run started, which loses nothing.
        signal.signal(signal.SIGTERM, coord.request_stop)
        signal.signal(signal.SIGINT, coord.request_stop)
        coord.run()
    except Exception as e:
        emit({"type": "error", "message": first_line(e), "traceback": traceback.format_exc()[-4000:]})
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

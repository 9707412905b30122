"""stratbench's sweep coordinator, run by Ray as the driver of one job.

It runs on the cluster's head node (the local stratbench submits it with no
resources on purpose: the head's loss is the cluster's, so a coordinator
there is never the one thing a lost worker node takes with it). The job's
entrypoint (bootstrap.py, written by the local stratbench) fetched this file
and its spec from the cluster's store and checked their sha256 before
running it; main() is called with the spec.

It fetches the code package (stratbench's binary, the strategy's folder, the
data) the same way and checks its sha256 against the spec before anything
else: a package someone else uploaded under its name fails the job (a
"package" event naming what differs) before a slot starts. It starts one
Slot actor per CPU it may use (num_cpus=1 each, so Ray spreads them over
the nodes with CPUs) and hands each idle slot the next item of a queue.
Each slot unpacks the code package on its node (once per node, shared by
the node's slots, read-only), checks every file of it against the spec
before it runs anything of it, and owns one long-lived shard process
(stratbench's binary, in that folder) that it talks to by JSON lines on
stdin and stdout; the shard loads the data once and runs items one after
the other under all of stratbench's limits. No package of ours is ever a
Ray working_dir or py_module: Ray would put it on the Python path of its
own processes, which import from it before any check could run.

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
import fcntl
import hashlib
import io
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import zipfile

MARK = "@stratbench/1 "
FORMAT = 2
MAX_ATTEMPTS = 3


def emit(event):
    sys.stdout.write(MARK + json.dumps(event, separators=(",", ":"), sort_keys=True) + "\n")
    sys.stdout.flush()


def key_id(key):
    return json.dumps(key, separators=(",", ":"), sort_keys=True)


def load_spec(raw):
    spec = json.loads(raw)
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
    code = spec.get("code")
    if not isinstance(code, dict) or not isinstance(code.get("uri"), str) or not isinstance(code.get("sha256"), str):
        raise ValueError("spec.json: code: want the package's uri and sha256")
    files = code.get("files")
    if not isinstance(files, list) or not files:
        raise ValueError("spec.json: code.files: want the package's files")
    for f in files:
        if not isinstance(f, dict) or not isinstance(f.get("path"), str) or not isinstance(f.get("sha256"), str) \
                or not isinstance(f.get("size"), int) or not safe_name(f["path"]):
            raise ValueError("spec.json: code.files: %r" % (f,))
    return spec


# The code package: checked, unpacked and checked again on each node.


class PackageError(Exception):
    """What a node holds is not the package stratbench built."""


class PackageRefused(Exception):
    """A package check failed: the job ends, naming where."""

    def __init__(self, node_id, message):
        Exception.__init__(self, message)
        self.node_id = node_id
        self.message = message


def sha256_hex(data):
    return hashlib.sha256(data).hexdigest()


def safe_name(name):
    """A relative path of the package: no empty, '.' or '..' part."""
    return bool(name) and "\\" not in name and all(p not in ("", ".", "..") for p in name.split("/"))


def fetch_code(ray, code):
    """The code package's bytes from the cluster's store, checked against
    the spec's sha256 (run on the head, before any slot starts)."""
    from ray.experimental.internal_kv import _internal_kv_get

    data = _internal_kv_get(code["uri"])
    if data is None:
        raise PackageError("the package %s is not on the cluster (Ray collected it, or it was never uploaded)" % code["uri"])
    got = sha256_hex(data)
    if got != code["sha256"]:
        raise PackageError(
            "the package %s on the cluster is not the one stratbench built (its sha256 is %s, not %s): %s; "
            "someone who can reach the cluster's dashboard uploaded another package under its name. Nothing of it was run"
            % (code["uri"], got, code["sha256"], zip_differences(data, code["files"])))
    return data


def zip_differences(data, files):
    """What differs between a zip that is not the package and the package's
    files (at most three things): read to name them, never unpacked or
    run, and never read past the size stratbench expects of a file."""
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        infos = {i.filename: i for i in z.infolist() if not i.is_dir()}
    except Exception as e:  # noqa: BLE001 - anything: it is not a zip we can read
        return "it is not a readable zip (%s)" % first_line(e)
    want = {f["path"]: f for f in files}
    problems = []
    for path in sorted(want):
        f, info = want[path], infos.get(path)
        if info is None:
            problems.append("%s is missing" % path)
            continue
        if info.file_size != f["size"]:
            problems.append("%s differs (%d bytes, want %d)" % (path, info.file_size, f["size"]))
            continue
        h, n = hashlib.sha256(), 0
        try:
            with z.open(info) as r:
                while n <= f["size"]:
                    b = r.read(1 << 20)
                    if not b:
                        break
                    n += len(b)
                    h.update(b)
        except Exception as e:  # noqa: BLE001
            problems.append("%s cannot be read (%s)" % (path, first_line(e)))
            continue
        if n != f["size"] or h.hexdigest() != f["sha256"]:
            problems.append("%s differs (sha256 %s…, want %s…)" % (path, h.hexdigest()[:16], f["sha256"][:16]))
    problems += ["%s is not part of it" % name for name in sorted(infos) if name not in want]
    if not problems:
        return "its files are those stratbench built, not the zip around them"
    more = len(problems) - 3
    return "; ".join(problems[:3]) + ("; and %d more" % more if more > 0 else "")


def package_root():
    """The node's folder of unpacked packages: TMPDIR/stratbench-ray/packages,
    a folder of this user that nobody else can write to."""
    base = os.path.join(tempfile.gettempdir(), "stratbench-ray")
    root = os.path.join(base, "packages")
    for d in (base, root):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass
        st = os.lstat(d)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
            raise RuntimeError("%s is not a folder of this user that only it can write to" % d)
    return root


def open_lock(path):
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)


def acquire_package(root, code, fetch):
    """The package's folder on this node, unpacked if no slot has it yet,
    and a file descriptor holding a shared lock on it: while any slot holds
    one, no slot removes the folder. Everything happens under the node's
    lock of the packages' folder (root/.lock), which also collects the
    folders no slot uses (left by slots that died)."""
    rfd = open_lock(os.path.join(root, ".lock"))
    try:
        fcntl.flock(rfd, fcntl.LOCK_EX)
        name = code["sha256"]
        collect(root, keep=name)
        pfd = open_lock(os.path.join(root, name + ".lock"))
        try:
            fcntl.flock(pfd, fcntl.LOCK_SH)
            dest = os.path.join(root, name)
            if not os.path.lexists(dest):
                unpack(fetch(), root, dest)
        except BaseException:
            os.close(pfd)
            raise
    finally:
        os.close(rfd)
    return dest, pfd


def release_package(root, pfd):
    """Drops a slot's hold on its package and removes the folders no slot
    uses any more."""
    os.close(pfd)
    rfd = open_lock(os.path.join(root, ".lock"))
    try:
        fcntl.flock(rfd, fcntl.LOCK_EX)
        collect(root)
    finally:
        os.close(rfd)


def collect(root, keep=None):
    """Removes every package folder of root that no slot holds (its lock
    can be taken exclusively), and unfinished unpacks. Called with root's
    lock held."""
    for entry in sorted(os.listdir(root)):
        path = os.path.join(root, entry)
        if entry == ".lock":
            continue
        if entry.endswith(".lock"):
            name = entry[: -len(".lock")]
            if name == keep:
                continue
            fd = open_lock(path)
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # in use
                if remove_tree(os.path.join(root, name)):
                    os.unlink(path)
            finally:
                os.close(fd)
        elif entry != keep and not os.path.exists(path + ".lock"):
            remove_tree(path)  # an unfinished unpack, or a folder without its lock


def remove_tree(path):
    """Removes a package folder (read-only) or whatever is at path, and says
    whether it is gone: what cannot be removed stays, for a later try,
    rather than failing the slot that collects it."""
    try:
        if not os.path.lexists(path):
            return True
        if os.path.islink(path) or not os.path.isdir(path):
            os.unlink(path)
            return True
        for d, _, _ in os.walk(path):  # top down: each folder made writable before its entries go
            os.chmod(d, 0o700)
        shutil.rmtree(path)
        return True
    except OSError:
        return False


def unpack(data, root, dest):
    """Writes the zip's files under dest (made in one rename), read-only:
    folders 0555, files 0444, or 0555 for the executables."""
    tmp = tempfile.mkdtemp(prefix=".unpack-", dir=root)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            for info in z.infolist():
                if info.is_dir():
                    continue
                if not safe_name(info.filename):
                    raise PackageError("the package holds an unsafe name %r" % info.filename)
                path = os.path.join(tmp, *info.filename.split("/"))
                os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
                with os.fdopen(fd, "wb") as out, z.open(info) as src:
                    shutil.copyfileobj(src, out, 1 << 20)
                os.chmod(path, 0o555 if (info.external_attr >> 16) & 0o111 else 0o444)
        for d, _, _ in os.walk(tmp, topdown=False):
            if d != tmp:
                os.chmod(d, 0o555)
        os.rename(tmp, dest)
        os.chmod(dest, 0o555)
    except BaseException:
        remove_tree(tmp)
        raise


def check_tree(root, files):
    """Checks that the folder holds exactly the package's files, each with
    the size and sha256 stratbench built it with, and nothing else (no
    other file, folder, link or special file). Raises PackageError naming
    the first difference."""
    if not stat.S_ISDIR(os.lstat(root).st_mode):
        raise PackageError("%s is not a folder (a symbolic link?)" % root)
    want = {f["path"]: f for f in files}
    dirs = {""}
    for p in want:
        parts = p.split("/")
        for i in range(1, len(parts)):
            dirs.add("/".join(parts[:i]))
    seen = set()

    def walk(rel):
        with os.scandir(os.path.join(root, rel) if rel else root) as it:
            entries = sorted(it, key=lambda e: e.name)
        for e in entries:
            p = rel + "/" + e.name if rel else e.name
            mode = e.stat(follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                if p not in dirs:
                    raise PackageError("%s/ is not part of it" % p)
                walk(p)
            elif stat.S_ISREG(mode):
                if p not in want:
                    raise PackageError("%s is not part of it" % p)
                seen.add(p)
            elif stat.S_ISLNK(mode):
                raise PackageError("%s is a symbolic link, not a file of it" % p)
            else:
                raise PackageError("%s is a special file, not a file of it" % p)

    walk("")
    for p in sorted(want):
        f = want[p]
        if p not in seen:
            raise PackageError("%s is missing" % p)
        fd = os.open(os.path.join(root, *p.split("/")), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as r:
            size = os.fstat(r.fileno()).st_size
            if size != f["size"]:
                raise PackageError("%s differs from the file stratbench built (%d bytes, want %d)" % (p, size, f["size"]))
            h = hashlib.sha256()
            for b in iter(lambda: r.read(1 << 20), b""):
                h.update(b)
            if h.hexdigest() != f["sha256"]:
                raise PackageError("%s differs from the file stratbench built (sha256 %s…, want %s…)" % (p, h.hexdigest()[:16], f["sha256"][:16]))


def make_slot_class(ray):
    @ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0, max_concurrency=2)
    class Slot:
        """One CPU of the cluster: a shard process and the pipes to it.

        max_concurrency=2 lets stop() reach the shard while run() waits
        for its result.
        """

        def __init__(self, argv, env, max_line, code, refs):
            self.node_id = ray.get_runtime_context().get_node_id()
            self.max_line = max_line
            self.proc = None
            self.lock = threading.Lock()
            self.package_error = None
            self.root = package_root()

            def fetch():
                # refs holds the package's bytes, which the coordinator
                # checked on the head and put in the object store: fetched
                # only by the slot that unpacks it on this node.
                data = ray.get(refs[0])
                if sha256_hex(data) != code["sha256"]:
                    raise PackageError("the package reached this node changed (sha256 %s, not %s)" % (sha256_hex(data), code["sha256"]))
                return data

            self.pfd = None
            try:
                self.dir, self.pfd = acquire_package(self.root, code, fetch)
                check_tree(self.dir, code["files"])
            except PackageError as e:
                self.package_error = (
                    "the folder %s where node %s unpacks the package %s does not hold the package stratbench built: %s "
                    "(written there since it was unpacked, or put there before); nothing of it was run on that node"
                    % (os.path.join(self.root, code["sha256"]), os.uname().nodename, code["uri"], e))
                self._release()
                return
            child_env = dict(os.environ)
            child_env.update(env)
            # The interpreter that runs Ray on this node: the strategy's
            # Python, unless the sweep names one present on every node.
            child_env["STRATBENCH_RAY_PYTHON"] = sys.executable
            child_env["STRATBENCH_RAY_NODE_ID"] = self.node_id
            # The shard reads stdin until EOF: when this actor's process
            # dies, the pipe closes and the shard stops.
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=child_env, cwd=self.dir)

        def _release(self):
            if self.pfd is not None:
                pfd, self.pfd = self.pfd, None
                release_package(self.root, pfd)

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
            if self.package_error is not None:
                return {"node_id": self.node_id, "package_error": self.package_error}
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
            if self.proc is None:
                return None
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                code = self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                code = self.proc.wait()
            self._release()
            return code

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
        self.code = spec["code"]
        self.code_ref = None

    def request_stop(self, signum, frame):
        self.stopping = True

    def slot_count(self):
        cpus = int(self.ray.cluster_resources().get("CPU", 0))
        want = int(self.spec.get("slots") or 0) or cpus
        return max(1, min(want, self.total)) if self.total else 0

    def start_slot(self):
        n = self.next_slot
        self.next_slot += 1
        actor = self.Slot.options(scheduling_strategy="SPREAD").remote(self.argv, self.env, self.max_line, self.code, [self.code_ref])
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
        if info.get("package_error"):
            raise PackageRefused(info["node_id"], info["package_error"])
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
        head = self.ray.get_runtime_context().get_node_id()
        try:
            data = fetch_code(self.ray, self.code)
        except PackageError as e:
            raise PackageRefused(head, str(e))
        # In the object store, owned by this process: every node's first
        # slot fetches it from there, however long the sweep lasts.
        self.code_ref = self.ray.put(data)
        del data
        k = self.slot_count()
        self.max_slots_started = max(2 * k, k + 4)
        emit({"type": "hello", "items": self.total, "slots": k, "ray": self.ray.__version__, "node_id": head})
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
            if slot["state"] in ("starting", "idle", "busy"):
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


def main(ray, raw_spec):
    """Runs the coordinator; ray is initialised (by the bootstrap)."""
    try:
        spec = load_spec(raw_spec)
    except Exception as e:
        emit({"type": "error", "message": "reading the work: %s" % e})
        return 1
    coord = Coordinator(ray, spec)
    try:
        # After ray.init, which installs its own SIGTERM handler (exit at
        # once): a stop must reach ours, which lets the runs in flight
        # finish as stopped runs. A stop during ray.init ends the job
        # before any run started, which loses nothing.
        signal.signal(signal.SIGTERM, coord.request_stop)
        signal.signal(signal.SIGINT, coord.request_stop)
        coord.run()
    except PackageRefused as e:
        emit({"type": "package", "node_id": e.node_id, "message": e.message})
        coord.close()
        return 1
    except Exception as e:
        emit({"type": "error", "message": first_line(e), "traceback": traceback.format_exc()[-4000:]})
        return 1
    return 0

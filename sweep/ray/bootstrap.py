import hashlib, io, json, sys, zipfile
# stratbench's coordinator job starts here: this code travels in the job's
# entrypoint, which the submitting stratbench wrote, so it is the one part of
# the job that no package on the cluster can change. It fetches the work
# package (the coordinator and its spec) from the cluster's store by name and
# runs it only when its sha256 is the one given after it on the command line:
# a package uploaded by someone else under that name is refused before any
# byte of it is used.
MARK = "@stratbench/1 "
uri, want = sys.argv[1], sys.argv[2]
import ray
from ray.experimental.internal_kv import _internal_kv_get
ray.init(log_to_driver=False)
data = _internal_kv_get(uri)
got = None if data is None else hashlib.sha256(data).hexdigest()
if got != want:
    if got is None:
        why = "it is not on the cluster (collected, or never uploaded)"
    else:
        why = "its sha256 is %s, not %s: someone uploaded another package under its name" % (got, want)
    sys.stdout.write(MARK + json.dumps({"type": "package", "node_id": ray.get_runtime_context().get_node_id(),
                                        "message": "the work package %s: %s; nothing of it was used" % (uri, why)},
                                       sort_keys=True) + "\n")
    sys.stdout.flush()
    sys.exit(1)
with zipfile.ZipFile(io.BytesIO(data)) as z:
    source, spec = z.read("coordinator.py"), z.read("spec.json")
del data
# A module of its own, in no sys.modules: Ray sends the classes and
# functions it defines (the slots) to the nodes by value, never imports them
# there.
coordinator = {"__name__": "stratbench_coordinator", "__builtins__": __builtins__}
exec(compile(source, "coordinator.py", "exec"), coordinator)
sys.exit(coordinator["main"](ray, spec))

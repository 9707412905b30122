package ray

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"stratbench/internal/testenv"
)

// The node side of package integrity, coordinator.py's own functions run
// by a real Python without a cluster: a slot unpacks the code package
// read-only, checks the folder file by file against the spec before it
// runs anything of it, and removes the folders no slot holds.

// nodeScript runs coordinator.py's functions on a package: each case of
// the script prints one JSON line {"case": …, "error": …}.
const nodeScript = `
import fcntl, json, os, stat, sys
sys.path.insert(0, sys.argv[1])
import coordinator as c
pkg, spec, root = sys.argv[2], json.load(open(sys.argv[3])), sys.argv[4]
data = open(pkg, "rb").read()
code = spec["code"]
def report(case, f):
    try:
        f()
        err = None
    except c.PackageError as e:
        err = str(e)
    print(json.dumps({"case": case, "error": err}), flush=True)
def fresh():
    d, fd = c.acquire_package(root, code, lambda: data)
    c.check_tree(d, code["files"])
    modes = {}
    for dirpath, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(dirpath, n)
            modes[os.path.relpath(p, d)] = oct(stat.S_IMODE(os.lstat(p).st_mode))
    print(json.dumps({"case": "modes", "modes": modes, "root": oct(stat.S_IMODE(os.lstat(d).st_mode))}), flush=True)
    return d, fd
def tampered(case, change):
    d, fd = fresh()
    for x in [d] + [os.path.join(p, n) for p, ds, _ in os.walk(d) for n in ds]:
        os.chmod(x, 0o700)
    change(d)
    report(case, lambda: c.check_tree(d, code["files"]))
    c.release_package(root, fd)
    print(json.dumps({"case": case + ": collected", "error": None if not os.path.exists(d) else "still there"}), flush=True)
report("fresh", lambda: c.release_package(root, fresh()[1]))
def rewrite(d):
    p = os.path.join(d, "strategy", "strategy.py")
    b = bytearray(open(p, "rb").read()); b[0] ^= 1
    os.chmod(p, 0o644); open(p, "wb").write(bytes(b))
tampered("changed", rewrite)
tampered("missing", lambda d: os.unlink(os.path.join(d, "data", "bars.csv")))
tampered("added", lambda d: open(os.path.join(d, "strategy", "numpy.py"), "w").write("x"))
tampered("folder added", lambda d: os.mkdir(os.path.join(d, "strategy", "numpy")))
tampered("symlink", lambda d: os.symlink("/etc/passwd", os.path.join(d, "strategy", "os.py")))
tampered("fifo", lambda d: os.mkfifo(os.path.join(d, "fifo")))
def swap(d):
    os.chmod(os.path.join(d, "stratbench"), 0o755)
    os.unlink(os.path.join(d, "stratbench"))
    os.symlink("/bin/true", os.path.join(d, "stratbench"))
tampered("binary a symlink", swap)
# A folder that is a symbolic link to a copy of the package.
d, fd = fresh()
os.rename(d, d + ".real")
os.symlink(d + ".real", d)
report("root a symlink", lambda: c.check_tree(d, code["files"]))
os.unlink(d); os.rename(d + ".real", d)
c.release_package(root, fd)
# Held by another process (a shared lock): not collected; then released.
d, fd = fresh()
c.release_package(root, os.dup(fd))
print(json.dumps({"case": "held", "error": None if os.path.exists(d) else "collected while held"}), flush=True)
os.close(fd)
c.release_package(root, os.open(os.devnull, os.O_RDONLY))
print(json.dumps({"case": "released", "left": sorted(os.listdir(root))}), flush=True)
`

func TestNodePackageChecks(t *testing.T) {
	py := testenv.Python(t)
	pkg, err := BuildPackage(context.Background(), PackageSpec{Binary: amd64Binary(t), Strategy: strategyFolder(t), Data: []string{dataFile(t)}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srcDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(srcDir, "coordinator.py"), coordinatorScript, 0o644); err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(WorkSpec{Code: pkg.Check()})
	specPath := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(specPath, spec, 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "packages")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { makeWritable(root) })
	cmd := exec.Command(py, "-B", "-c", nodeScript, srcDir, pkg.Path, specPath, root)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr.String())
	}
	got := map[string]string{}
	var modes map[string]string
	var left []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			Case  string            `json:"case"`
			Error *string           `json:"error"`
			Modes map[string]string `json:"modes"`
			Root  string            `json:"root"`
			Left  []string          `json:"left"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		switch {
		case r.Case == "modes":
			modes = r.Modes
			modes["."] = r.Root
		case r.Case == "released":
			left = r.Left
		case r.Error != nil:
			got[r.Case] = *r.Error
		default:
			got[r.Case] = ""
		}
	}
	for c, want := range map[string]string{
		"fresh":            "",
		"changed":          "strategy/strategy.py differs from the file stratbench built (sha256 ",
		"missing":          "data/bars.csv is missing",
		"added":            "strategy/numpy.py is not part of it",
		"folder added":     "strategy/numpy/ is not part of it",
		"symlink":          "strategy/os.py is a symbolic link, not a file of it",
		"fifo":             "fifo is a special file, not a file of it",
		"binary a symlink": "stratbench is a symbolic link",
		"root a symlink":   "is not a folder (a symbolic link?)",
		"held":             "",
	} {
		g, ok := got[c]
		if !ok || want == "" && g != "" || want != "" && !strings.Contains(g, want) {
			t.Errorf("%s: %q (seen %v), want %q", c, g, ok, want)
		}
	}
	for c := range got {
		if strings.HasSuffix(c, ": collected") && got[c] != "" {
			t.Errorf("%s: %s", c, got[c])
		}
	}
	// Unpacked read-only: folders 0555, files 0444, the binary 0555.
	for p, want := range map[string]string{".": "0o555", "strategy": "0o555", "stratbench": "0o555", "strategy/strategy.py": "0o444",
		"strategy/tools/prep.sh": "0o555", "data/bars.csv": "0o444", PackageManifest: "0o444"} {
		if modes[p] != want {
			t.Errorf("%s: mode %s, want %s (all: %v)", p, modes[p], want, modes)
		}
	}
	// Once no slot holds it, nothing is left but the folder's lock.
	if strings.Join(left, " ") != ".lock" {
		t.Errorf("left in the packages' folder: %v", left)
	}
}

// makeWritable lets the test's cleanup remove a folder with read-only
// folders in it when the tests do not run as root.
func makeWritable(root string) {
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			syscall.Chmod(p, 0o700)
		}
		return nil
	})
}

package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"stratbench/engine"
)

// A sweep checks its spec against the strategy's MANIFEST before any run,
// so that a bad spec creates no job. It reads the MANIFEST without running
// the strategy: the interpreter parses the file (ast) and evaluates the
// MANIFEST's literal (ast.literal_eval, which runs no code), with -I and
// -S so that nothing of the user's environment, the strategy's folder or
// site-packages is imported. The run itself checks the params again,
// against the MANIFEST the strategy really defines.

// manifestScript prints {"params": {...}} or {"error": "..."} for the
// file named by its argument. It mirrors the bridge's checks of the params.
const manifestScript = `
import ast, json, math, sys
path = sys.argv[1]
def out(obj):
    sys.stdout.write(json.dumps(obj))
    sys.exit(0)
try:
    with open(path, "rb") as f:
        tree = ast.parse(f.read(), path)
except SyntaxError as e:
    out({"error": "%s line %s: %s: %s" % (path, e.lineno, type(e).__name__, e.msg)})
except (OSError, ValueError, RecursionError, MemoryError) as e:
    out({"error": "%s: %s" % (path, e)})
node = None
for stmt in tree.body:
    if isinstance(stmt, ast.Assign):
        targets, value = stmt.targets, stmt.value
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        targets, value = [stmt.target], stmt.value
    else:
        continue
    if any(isinstance(t, ast.Name) and t.id == "MANIFEST" for t in targets):
        node = value
if node is None:
    out({"params": {}})
try:
    manifest = ast.literal_eval(node)
except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
    out({"error": "%s line %d: MANIFEST is not a literal dict: a sweep reads its params without running the strategy" % (path, node.lineno)})
if not isinstance(manifest, dict):
    out({"error": "MANIFEST must be a dict, got %s" % type(manifest).__name__})
params = manifest.get("params", {})
if not isinstance(params, dict):
    out({"error": "MANIFEST['params'] must be a dict, got %s" % type(params).__name__})
for key, value in params.items():
    if not isinstance(key, str) or not isinstance(value, (bool, int, float, str)):
        out({"error": "MANIFEST['params'][%r] must be an int, float, bool or str default, got %s" % (key, type(value).__name__)})
    if isinstance(value, float) and not math.isfinite(value):
        out({"error": "MANIFEST['params'][%r] must be finite" % key})
    if isinstance(value, int) and not isinstance(value, bool) and not -(1 << 63) <= value < 1 << 63:
        out({"error": "MANIFEST['params'][%r] = %d does not fit in a 64-bit integer" % (key, value)})
out({"params": params})
`

// manifestTimeout bounds reading the MANIFEST: the startup limit of a run.
const manifestTimeout = 30 * time.Second

// ManifestReader returns the MANIFEST's param defaults of the strategy
// file, whose content hashes to sum (ReadStrategy), read with py:
// ReadManifestNow, or a read started ahead (Ahead.Params).
type ManifestReader func(ctx context.Context, py *engine.Interpreter, strategy, sum string) (map[string]any, error)

// ReadManifestNow is a ManifestReader that reads now.
func ReadManifestNow(ctx context.Context, py *engine.Interpreter, strategy, _ string) (map[string]any, error) {
	return ReadManifest(ctx, py, strategy)
}

// ReadManifest returns the MANIFEST's param defaults of the strategy
// file: int64, float64, bool or string each; empty when it declares none.
// A file the interpreter cannot parse, or a MANIFEST that is not a
// literal, is an *InputError.
func ReadManifest(ctx context.Context, py *engine.Interpreter, strategy string) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(ctx, manifestTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, py.Executable, "-I", "-S", "-c", manifestScript, strategy)
	cmd.Env = []string{"PYTHONIOENCODING=utf-8", "PYTHONDONTWRITEBYTECODE=1"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("read the MANIFEST of %s with %s: %w: %s", strategy, py.Executable, err, lastLineOf(stderr.String()))
	}
	var got struct {
		Params json.RawMessage `json:"params"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(stdout, &got); err != nil {
		return nil, fmt.Errorf("read the MANIFEST of %s: %w", strategy, err)
	}
	if got.Error != "" {
		return nil, &InputError{errors.New(got.Error)}
	}
	return decodeManifestParams(got.Params)
}

// decodeManifestParams decodes the params as the bridge's manifest frame
// is decoded: 10 is an int, 10.0 a float (Python's json writes them so).
func decodeManifestParams(raw json.RawMessage) (map[string]any, error) {
	out := map[string]any{}
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("MANIFEST params: %w", err)
	}
	for k, v := range m {
		switch v := v.(type) {
		case bool, string:
			out[k] = v
		case json.Number:
			s := v.String()
			if strings.ContainsAny(s, ".eE") {
				f, err := strconv.ParseFloat(s, 64)
				if err != nil || math.IsInf(f, 0) {
					return nil, &InputError{fmt.Errorf("MANIFEST['params'][%q]: %s does not fit in a 64-bit float", k, s)}
				}
				out[k] = f
			} else {
				i, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return nil, &InputError{fmt.Errorf("MANIFEST['params'][%q]: %s does not fit in a 64-bit integer", k, s)}
				}
				out[k] = i
			}
		default:
			return nil, &InputError{fmt.Errorf("MANIFEST['params'][%q]: the default must be an int, float, bool or str", k)}
		}
	}
	return out, nil
}

// lastLineOf returns the last non-empty line of s.
func lastLineOf(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

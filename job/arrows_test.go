package job_test

import (
	"os/exec"
	"strings"
	"testing"

	"stratbench/internal/testenv"
)

// goList runs go list with args at the repository's root.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = testenv.Root(t)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.Fields(string(out))
}

// TestArrows: the data model and its readers import no process code.
// `go list -deps` of job, of internal/words, of the ui programs and of
// tearsheet names no engine, supervisor, sandbox or python package (nor
// app), and no package imports app but main (docs/ARCHITECTURE.md, "The
// rooms"). internal/words imports of stratbench only the data model (job,
// contract) and internal/units: what the sweep alone says (why a
// walk-forward has no efficiency) is sweep's.
func TestArrows(t *testing.T) {
	forbidden := []string{"stratbench/engine", "stratbench/supervisor", "stratbench/sandbox", "stratbench/python", "stratbench/app"}
	for _, pkg := range []string{"stratbench/job", "stratbench/internal/words", "stratbench/ui/...", "stratbench/tearsheet"} {
		for _, dep := range goList(t, "-deps", pkg) {
			for _, f := range forbidden {
				if dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("go list -deps %s names %s", pkg, dep)
				}
			}
		}
	}
	for _, line := range goList(t, "-f", "{{.ImportPath}}:{{range .Imports}}{{if eq . \"stratbench/app\"}}app{{end}}{{end}}", "stratbench/...") {
		if pkg, ok := strings.CutSuffix(line, ":app"); ok && pkg != "stratbench" {
			t.Errorf("%s imports stratbench/app: only main may", pkg)
		}
	}
	allowed := map[string]bool{"stratbench/job": true, "stratbench/contract": true, "stratbench/internal/units": true}
	for _, imp := range goList(t, "-f", "{{join .Imports \"\\n\"}}", "stratbench/internal/words") {
		if strings.HasPrefix(imp, "stratbench/") && !allowed[imp] {
			t.Errorf("internal/words imports %s: it may import job, contract and internal/units of stratbench", imp)
		}
	}
}

package e2e

// The usage and output cases of the binary as testscript scripts
// (testdata/script/*.txtar, github.com/rogpeppe/go-internal/testscript):
// a command line, its exit code, and what it prints.

import (
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"stratbench/internal/e2etest"
	"stratbench/internal/testenv"
)

var updateScripts = flag.Bool("update", false, "rewrite the expected files of the scripts' cmp commands (testdata/script) with what the binary printed")

// scriptEnv are the variables of the test's own environment a script's
// stratbench sees too (testscript starts each script with PATH alone):
// where Python is and how it starts (pyenv's shims need HOME or
// PYENV_ROOT), and an interpreter chosen for the tests.
var scriptEnv = []string{"HOME", "LANG", "LC_ALL", "PYENV_ROOT", "PYENV_VERSION", "STRATBENCH_PYTHON"}

// TestScripts runs every script of testdata/script, in parallel, each in a
// folder of its own ($WORK) with its own home (STRATBENCH_HOME is
// $WORK/home), NO_COLOR set, the repository's testdata/ linked as
// $WORK/testdata, and these commands beside testscript's own:
//
//	stratbench ARGS...   run the binary (it is on PATH too, for exec); its
//	                     exit code must be 0, or not 0 with ! in front
//	exitcode N           the exit code of the last stratbench was N
//	entries DIR N        DIR holds N entries (a DIR that is not there, 0)
//	newest VAR jobs|sweeps
//	                     set VAR to the id of the home's newest job or sweep
//	http404 VAR          serve 404 to every request at the URL set in VAR
//	                     until the script ends
//
// -update rewrites the expected files of failing cmp commands in the
// scripts (go test ./e2e -run TestScripts -update).
func TestScripts(t *testing.T) {
	e2etest.SkipShort(t)
	root := testenv.Root(t)
	testscript.Run(t, testscript.Params{
		Dir:                filepath.Join(root, "e2e", "testdata", "script"),
		Setup:              func(env *testscript.Env) error { return setupScript(env, root) },
		UpdateScripts:      *updateScripts,
		RequireUniqueNames: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"stratbench": cmdStratbench,
			"exitcode":   cmdExitcode,
			"entries":    cmdEntries,
			"newest":     cmdNewest,
			"http404":    cmdHTTP404,
		},
	})
}

// lastExit is the exit code of a script's last stratbench command.
type lastExit struct {
	ran  bool
	code int
}

type lastExitKey struct{}

func setupScript(env *testscript.Env, root string) error {
	env.Setenv("STRATBENCH_HOME", filepath.Join(env.WorkDir, "home"))
	env.Setenv("NO_COLOR", "1")
	env.Setenv("PATH", filepath.Dir(e2etest.Binary())+string(os.PathListSeparator)+env.Getenv("PATH"))
	for _, k := range scriptEnv {
		if v, ok := os.LookupEnv(k); ok {
			env.Setenv(k, v)
		}
	}
	env.Values[lastExitKey{}] = &lastExit{}
	return os.Symlink(filepath.Join(root, "testdata"), filepath.Join(env.WorkDir, "testdata"))
}

func cmdStratbench(ts *testscript.TestScript, neg bool, args []string) {
	err := ts.Exec(e2etest.Binary(), args...)
	last := ts.Value(lastExitKey{}).(*lastExit)
	last.ran, last.code = true, 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		last.code = ee.ExitCode()
	case err != nil:
		ts.Fatalf("stratbench: %v", err)
	}
	if neg && last.code == 0 {
		ts.Fatalf("stratbench succeeded, want it to fail")
	}
	if !neg && last.code != 0 {
		ts.Fatalf("stratbench: exit %d, want 0", last.code)
	}
}

func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: exitcode N")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	last := ts.Value(lastExitKey{}).(*lastExit)
	if !last.ran {
		ts.Fatalf("exitcode: no stratbench has run")
	}
	if last.code != want {
		ts.Fatalf("stratbench exited %d, want %d", last.code, want)
	}
}

func cmdEntries(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: entries DIR N")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	entries, err := os.ReadDir(ts.MkAbs(args[0]))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		ts.Fatalf("entries: %v", err)
	}
	if len(entries) != want {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		ts.Fatalf("%s holds %d entries %v, want %d", args[0], len(entries), names, want)
	}
}

func cmdNewest(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 || args[1] != "jobs" && args[1] != "sweeps" {
		ts.Fatalf("usage: newest VAR jobs|sweeps")
	}
	entries, err := os.ReadDir(filepath.Join(ts.Getenv("STRATBENCH_HOME"), args[1]))
	ts.Check(err)
	var ids []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			ids = append(ids, e.Name())
		}
	}
	if len(ids) == 0 {
		ts.Fatalf("newest: no %s in the home", args[1])
	}
	// An id begins with its start time: the newest sorts last.
	slices.Sort(ids)
	ts.Setenv(args[0], ids[len(ids)-1])
}

func cmdHTTP404(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: http404 VAR")
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	ts.Defer(srv.Close)
	ts.Setenv(args[0], srv.URL)
}

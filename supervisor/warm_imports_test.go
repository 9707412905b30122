package supervisor

// What a template's imports leave in it is what a cold start's would have
// made, or the template refuses: to serve (it could not tell) or to fork
// (what they read has changed since).

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	pyb "stratbench/python"
)

// watchFolder copies testdata/warm/watch (strategies, and a module of
// their folder) into a new folder, where the test may change files.
func watchFolder(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(script(t, "warm/watch"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := copyFile(filepath.Join(script(t, "warm/watch"), e.Name()), filepath.Join(dir, e.Name()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestTemplateRefusesImportsItCannotRepeat: a template whose imports did
// what a run forked from it would not inherit as a cold start makes it
// refuses to serve, saying why, so that its runs start cold: an import
// that writes in the strategy's folder, or changes the working folder; a
// leading import that fails (a cold start's one attempt leaves what it
// did, a run would make a second); a third-party module that imports a
// module of the strategy's folder when it can (the template would cache
// its fallback: a cold start has the folder first on sys.path); an import
// that starts a process (what it reads is not seen).
func TestTemplateRefusesImportsItCannotRepeat(t *testing.T) {
	for _, tc := range []struct{ strategy, want string }{
		{"writes.py", "importing writesfolder wrote in the strategy's folder"},
		{"chdir.py", "importing chdirs changed the working folder"},
		{"fails.py", "importing failing failed (ImportError: failing: cannot be imported)"},
		{"guarded.py", "importing usesfolder imports folder_cfg, which the strategy's folder holds"},
		{"spawn.py", "importing spawns started a process"},
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			h := newHost(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c := newCollector()
			strategy := filepath.Join(watchFolder(t), tc.strategy)
			tp, err := h.StartTemplate(ctx, templateSpec(t, python(t), strategy, c, warmEnv(t)))
			if err == nil {
				tp.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("the template started: %v, want a refusal saying %q; output %v", err, tc.want, c.snapshot())
			}
		})
	}
}

// TestTemplateRefusesForksAfterChanges: a template whose imports read a
// file, or looked a module up and did not find it, refuses to fork once
// that changed (a cold start would see the change), and lives on: a module
// of the name the imports looked up appears in the strategy's folder, or
// in a folder of sys.path; the file an import read is rewritten (its size
// unchanged). A fork before the change is served.
func TestTemplateRefusesForksAfterChanges(t *testing.T) {
	for _, tc := range []struct {
		name, strategy string
		change         func(folder, site, conf string) error
		want           string
	}{
		{"in the folder", "optional.py", func(folder, _, _ string) error {
			return os.WriteFile(filepath.Join(folder, "optional_extra.py"), nil, 0o644)
		}, "the strategy's folder shadows optional_extra"},
		{"on sys.path", "optional.py", func(_, site, _ string) error {
			return os.WriteFile(filepath.Join(site, "optional_extra.py"), nil, 0o644)
		}, "changed since the template's imports read it"},
		{"a file read", "conf.py", func(_, _, conf string) error {
			return os.WriteFile(conf, []byte("bbbb"), 0o644)
		}, "changed since the template's imports read it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t)
			folder, site := watchFolder(t), t.TempDir()
			conf := filepath.Join(t.TempDir(), "conf")
			if err := os.WriteFile(conf, []byte("aaaa"), 0o644); err != nil {
				t.Fatal(err)
			}
			env := warmEnv(t, "WARM_CONF="+conf)
			env[2] = "PYTHONPATH=" + site + ":" + script(t, "warm/site")
			strategy := filepath.Join(folder, tc.strategy)
			tp := startTemplate(t, h, python(t), strategy, newCollector(), env)
			w := forkWorker(t, tp, strategy, env, Limits{})
			w.manifest(t)
			if res := w.quit(t); res.ExitCode != 0 {
				t.Fatalf("the run before the change: %+v; output %v", res, w.c.snapshot())
			}
			if err := tc.change(folder, site, conf); err != nil {
				t.Fatal(err)
			}
			w = newWorker(t)
			_, err := tp.Fork(context.Background(), w.runSpec(strategy, env, Limits{}))
			w.started()
			var refused *ForkRefusedError
			if !errors.As(err, &refused) || !strings.Contains(refused.Reason, tc.want) {
				t.Errorf("a fork after the change: %v, want a refusal saying %q", err, tc.want)
			}
			checkTemplateAlive(t, tp, "after a refusal")
		})
	}
}

// TestWarmRunSeesWhatAColdStartSees: what a module the template imported
// saw of its process at import (the command line, sys.path with the
// strategy's folder first and not the bridge's, the working folder, a
// variable another module set in the environment), and what the strategy
// sees when it is imported (also which modules are imported already: not
// those the template imported for itself), are what they are in a cold
// start of the same bridge.
func TestWarmRunSeesWhatAColdStartSees(t *testing.T) {
	h := newHost(t)
	py := python(t)
	strategy := filepath.Join(watchFolder(t), "state.py")
	bridge, err := pyb.InstallBridge(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := warmEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tc := newCollector()
	tp, err := h.StartTemplate(ctx, Spec{Path: py, Args: pyb.TemplateArgs(bridge, strategy, TemplateSocketFD), Env: env,
		Dir: filepath.Dir(strategy), Output: tc.output, Limits: templateLimits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tp.Close)
	if got := tp.Preloaded(); !slices.Contains(got, "stateprobe") {
		t.Fatalf("the template preloaded %q, want stateprobe", got)
	}
	seen := func(w *worker) []string {
		t.Helper()
		w.manifest(t)
		if res := w.quit(t); res.ExitCode != 0 {
			t.Fatalf("%+v; output %v", res, w.c.snapshot())
		}
		lines := w.c.snapshot()
		return append(linesWith(lines, "state "), linesWith(lines, "strategy ")...)
	}
	cold := seen(startWorker(t, h, py, bridge, strategy, env, Limits{}))
	warm := seen(forkWorker(t, tp, strategy, env, Limits{}))
	if len(cold) != 2 || !strings.Contains(cold[0], `"env": "yes"`) || !strings.HasPrefix(cold[1], "strategy yes ") {
		t.Fatalf("the cold start printed %q", cold)
	}
	if !slices.Equal(cold, warm) {
		t.Errorf("a warm run saw\n%q\na cold start\n%q", warm, cold)
	}
}

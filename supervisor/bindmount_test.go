package supervisor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bindFiles makes a target file and the file a tree sees in its place.
func bindFiles(t *testing.T) (source, target string) {
	t.Helper()
	dir := t.TempDir()
	source, target = filepath.Join(dir, "cut.csv"), filepath.Join(dir, "bars.csv")
	if err := os.WriteFile(target, []byte("the whole file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(source, []byte("the cut file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return source, target
}

// TestBindMounts: a tree started with a bind mount reads the source at the
// target's path; nothing changes outside it. Without a mount namespace it
// is refused; a target that does not exist fails the start, and nothing is
// created for it.
func TestBindMounts(t *testing.T) {
	source, target := bindFiles(t)
	src := "import sys; print('read', open(sys.argv[1]).read().strip(), flush=True)"
	t.Run("seen in the tree", func(t *testing.T) {
		h := newHost(t)
		c := newCollector()
		p := startIn(t, h, Spec{Path: python(t), Args: []string{"-c", src, target}, Env: []string{},
			BindMounts: []BindMount{{Source: source, Target: target}}, Output: c.output}, TrackingPIDNamespace)
		if res := waitDone(t, p, 30*time.Second); res.ExitCode != 0 {
			t.Fatalf("exit %d: %v", res.ExitCode, c.snapshot())
		}
		if l := c.waitFor(t, "read"); l.Text != "read the cut file" {
			t.Errorf("the tree read %q", l.Text)
		}
		if b, _ := os.ReadFile(target); string(b) != "the whole file\n" {
			t.Errorf("outside the tree the target holds %q", b)
		}
	})
	t.Run("a missing target", func(t *testing.T) {
		h := newHost(t)
		missing := filepath.Join(t.TempDir(), "none.csv")
		p, err := h.Start(context.Background(), Spec{Path: "/bin/true", BindMounts: []BindMount{{Source: source, Target: missing}}})
		if err == nil {
			p.Kill()
			t.Fatal("started without its target")
		}
		if !strings.Contains(err.Error(), "move_mount") && !errors.Is(err, ErrBindMountsUnavailable) {
			t.Errorf("error %q", err)
		}
		if _, serr := os.Stat(missing); serr == nil {
			t.Error("the missing target was created")
		}
	})
	t.Run("bad paths", func(t *testing.T) {
		h := newHost(t)
		for _, m := range []BindMount{{Source: "cut.csv", Target: target}, {Source: source, Target: target + "/../x"}, {Source: source, Target: "/"}} {
			if p, err := h.Start(context.Background(), Spec{Path: "/bin/true", BindMounts: []BindMount{m}}); err == nil {
				p.Kill()
				t.Errorf("%+v: started", m)
			}
		}
	})
	t.Run("refused in the fallback", func(t *testing.T) {
		t.Setenv(TrackingEnv, "fallback")
		h := newHost(t)
		if p, err := h.Start(context.Background(), Spec{Path: "/bin/true", BindMounts: []BindMount{{Source: source, Target: target}}}); err == nil {
			p.Kill()
			t.Fatal("bind mounts started in the fallback")
		} else if !errors.Is(err, ErrBindMountsUnavailable) {
			t.Errorf("error %q", err)
		}
	})
}

// TestBindMountsWarm: a run forked from a template sees its bind mounts
// from its first line (the strategy reads the file at import), and the
// next run, without them, sees the file itself.
func TestBindMountsWarm(t *testing.T) {
	source, target := bindFiles(t)
	dir := t.TempDir()
	strategy := filepath.Join(dir, "strategy.py")
	code := "print('read', open(" + `"` + target + `"` + ").read().strip(), flush=True)\n\ndef on_data(ctx, history):\n    pass\n"
	if err := os.WriteFile(strategy, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHost(t)
	tp := startTemplate(t, h, python(t), strategy, newCollector(), warmEnv(t))
	for _, tc := range []struct {
		binds []BindMount
		want  string
	}{{[]BindMount{{Source: source, Target: target}}, "read the cut file"}, {nil, "read the whole file"}} {
		w := newWorker(t)
		spec := w.runSpec(strategy, warmEnv(t), Limits{})
		spec.BindMounts = tc.binds
		p, err := tp.Fork(context.Background(), spec)
		w.started()
		if err != nil {
			t.Fatal(err)
		}
		w.p = p
		w.manifest(t)
		if l := w.c.waitFor(t, "read"); l.Text != tc.want {
			t.Errorf("binds %v: the run read %q, want %q", tc.binds, l.Text, tc.want)
		}
		if res := w.quit(t); res.ExitCode != 0 {
			t.Fatalf("%+v; output %v", res, w.c.snapshot())
		}
	}
}

package ray

// A sweep on a cluster that uses Ray's token authentication
// (RAY_AUTH_MODE=token): stratbench finds the token where Ray's own tools
// do ($RAY_AUTH_TOKEN, the file $RAY_AUTH_TOKEN_PATH names,
// ~/.ray/auth_token) and the sweep runs; without a token, or with another,
// it is refused with exit 2 before anything is sent, naming where the token
// came from. The token appears nowhere: not in stratbench's output, the
// sweep's folder, the job folders, Ray's record of the job, or any
// process's command line while the sweep runs.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"stratbench/internal/e2etest"
	"stratbench/internal/raytest"
	"stratbench/sweep"
	"stratbench/sweep/ray"
)

func randomToken(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// tokenEnv is the environment of a stratbench run: the env's, without any
// Ray token variable of the test's own environment, with HOME (where Ray's
// default token file is) and the given variables.
func tokenEnv(cmd *exec.Cmd, home string, vars ...string) {
	var env []string
	for _, kv := range cmd.Env {
		if k, _, _ := strings.Cut(kv, "="); k != ray.TokenEnv && k != ray.TokenPathEnv && k != "HOME" {
			env = append(env, kv)
		}
	}
	cmd.Env = append(append(env, "HOME="+home), vars...)
}

func TestRayTokenAuth(t *testing.T) {
	e2etest.SkipShort(t)
	token := randomToken(t)
	nodeTmp := t.TempDir()
	c := raytest.Start(t, raytest.Options{
		HeadCPUs: 0,
		Workers:  []raytest.WorkerOptions{{Name: "node2", CPUs: 1}},
		Env:      []string{"TMPDIR=" + nodeTmp},
		Token:    token,
	})
	args := []string{"sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--grid", "fast=3,5", "--grid", "slow=10",
		"--from", "2026-01-05", "--to", "2026-01-05 04:00:00", "--executor", "ray", "--ray-address", c.Dashboard}

	wrong := randomToken(t)
	wrongFile, wrongHome := tokenPlaces(t, wrong)
	for _, tc := range []struct {
		name string
		home string
		vars []string
		says string
	}{
		{"no token", t.TempDir(), nil, "uses token authentication and stratbench found no token"},
		{"wrong token in the environment", t.TempDir(), []string{ray.TokenEnv + "=" + wrong}, "refused the token from $RAY_AUTH_TOKEN (GET /api/version: 403"},
		{"wrong token in a named file", t.TempDir(), []string{ray.TokenPathEnv + "=" + wrongFile},
			"refused the token from the file " + wrongFile + " (named by $RAY_AUTH_TOKEN_PATH)"},
		{"wrong token in the default file", wrongHome, nil, "refused the token from Ray's default token file " + ray.DefaultTokenFile(wrongHome)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := e2etest.NewEnv(t)
			cmd := e.Command(args...)
			tokenEnv(cmd, tc.home, tc.vars...)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			code := e.ExitCode(cmd.Run())
			if code != 2 || !strings.Contains(errb.String(), tc.says) {
				t.Fatalf("exit %d, want 2 saying %q\n%s", code, tc.says, errb.String())
			}
			if strings.Contains(out.String()+errb.String(), wrong) || strings.Contains(out.String()+errb.String(), token) {
				t.Fatalf("the output carries a token:\n%s%s", out.String(), errb.String())
			}
			if n := e.FolderEntries("sweeps"); n != 0 {
				t.Errorf("%d sweeps exist after the refusal", n)
			}
		})
	}

	rightFile, rightHome := tokenPlaces(t, token)
	for _, tc := range []struct {
		name string
		home string
		vars []string
	}{
		{"token in the environment", t.TempDir(), []string{ray.TokenEnv + "=" + token}},
		{"token in a named file", t.TempDir(), []string{ray.TokenPathEnv + "=" + rightFile}},
		{"token in the default file", rightHome, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := e2etest.NewEnv(t)
			cmd := e.Command(args...)
			tokenEnv(cmd, tc.home, tc.vars...)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			// Every process's command line, read over and over while the
			// sweep runs (its own, the cluster's, the jobs' on the nodes).
			stopWatching := watchCmdlines(token)
			defer stopWatching()
			e.Launch(cmd)
			code := e.ExitCode(cmd.Wait())
			seenIn, sawShard := stopWatching()
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errb.String())
			}
			if doc := e2etest.DecodeSweep(t, out.String()); doc.Status != sweep.StatusPassed || len(doc.Runs) != 2 {
				t.Fatalf("sweep %s with %d runs, want passed with 2", doc.Status, len(doc.Runs))
			}
			if len(seenIn) > 0 {
				t.Errorf("the token was in the command line of %v", seenIn)
			}
			if !sawShard {
				t.Errorf("no shard seen among the processes while the sweep ran: the command lines were not read while it mattered")
			}
			if strings.Contains(out.String()+errb.String(), token) {
				t.Errorf("stratbench's output carries the token")
			}
			for _, dir := range []string{e.Home, nodeTmp} {
				if f := fileHolding(t, dir, token); f != "" {
					t.Errorf("%s holds the token", f)
				}
			}
			rayHoldsNoToken(t, c, token)
		})
	}
}

// tokenPlaces writes token to a file of its own (for
// $RAY_AUTH_TOKEN_PATH) and to Ray's default token file under a home of
// its own, and returns the file and the home.
func tokenPlaces(t *testing.T, token string) (file, home string) {
	t.Helper()
	file, home = filepath.Join(t.TempDir(), "token"), t.TempDir()
	writeTokenFile(t, file, token)
	writeTokenFile(t, ray.DefaultTokenFile(home), token)
	return file, home
}

func writeTokenFile(t *testing.T, path, token string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// watchCmdlines reads every process's command line, over and over (it
// samples: nothing says when a process starts), until the returned
// function is called; that function returns the pids whose command line
// held the token, and whether a shard (`stratbench ray-shard`, on a node)
// was among the processes seen.
func watchCmdlines(token string) (stop func() ([]int, bool)) {
	done := make(chan struct{})
	found := make(chan []int, 1)
	shard := false
	// The watcher's owner is the caller of stop, which waits for it.
	go func() {
		seen := map[int]bool{}
		for {
			entries, _ := os.ReadDir("/proc")
			for _, d := range entries {
				raw, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
				if pid, perr := strconv.Atoi(d.Name()); perr == nil && err == nil && bytes.Contains(raw, []byte(token)) {
					seen[pid] = true
				}
				shard = shard || bytes.Contains(raw, []byte("ray-shard\x00--config"))
			}
			select {
			case <-done:
				pids := []int{}
				for pid := range seen {
					pids = append(pids, pid)
				}
				found <- pids
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	var once sync.Once
	var pids []int
	return func() ([]int, bool) {
		once.Do(func() {
			close(done)
			pids = <-found
		})
		return pids, shard
	}
}

// fileHolding returns a file under dir whose content holds s, or "".
func fileHolding(t *testing.T, dir, s string) string {
	t.Helper()
	var hit string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || hit != "" || !d.Type().IsRegular() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(s)) {
			hit = p
		}
		return nil
	})
	return hit
}

// rayHoldsNoToken checks Ray's record of every job (entrypoint, runtime
// environment, metadata) and each job's log.
func rayHoldsNoToken(t *testing.T, c *raytest.Cluster, token string) {
	t.Helper()
	tok, err := ray.NewToken(token, ray.TokenSource{Kind: ray.TokenFromEnv})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := ray.New(c.Dashboard, ray.Options{Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	jobs, err := cl.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		raw, _ := json.Marshal(j)
		logs, err := cl.Logs(ctx, j.SubmissionID)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(token)) || strings.Contains(logs, token) {
			t.Errorf("Ray's record or log of job %s holds the token", j.SubmissionID)
		}
	}
}

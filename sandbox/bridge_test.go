//go:build linux && amd64

package sandbox

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pybridge "stratbench/python"
)

// TestBridgeFailsClosedOnExecFilter starts the real bridge with values of
// ExecFilterEnv it cannot put in force: it must exit with ExitCode and say
// why before it imports the strategy. With no value (outside the sandbox)
// and with the launcher's value, the strategy is imported. The bridge runs
// under no_new_privs, as in the sandbox, so that loading a filter needs no
// privilege.
func TestBridgeFailsClosedOnExecFilter(t *testing.T) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv is missing")
	}
	py, _ := python(t)
	bridge, err := pybridge.InstallBridge(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	launcherValue, err := execFilterValue()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		set   bool
		value string
		want  string // the refusal; "" when the strategy must be imported
	}{
		{"unset", false, "", ""},
		{"the launcher's filter", true, launcherValue, ""},
		{"empty", true, "", "exec filter: 0 bytes is not a seccomp program"},
		{"not hexadecimal", true, "zz", "exec filter: ValueError: non-hexadecimal"},
		{"not whole records", true, "0600000000", "exec filter: 5 bytes is not a seccomp program"},
		// One load and no return: the kernel refuses the program.
		{"refused by the kernel", true, "2000000000000000", "exec filter: prctl(PR_SET_SECCOMP): Invalid argument"},
		// A valid program that allows everything: loaded, but the check finds
		// execve still reaching the kernel.
		{"allows exec", true, "060000000000ff7f", "exec filter: installed, but execve is not refused (No such file or directory)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			marker := filepath.Join(dir, "imported")
			strategy := writeScript(t, dir, "strategy.py", "open("+pyQuote(marker)+", 'w').close()\ndef on_data(ctx, history):\n    pass")
			env := []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
			if c.set {
				env = append(env, ExecFilterEnv+"="+c.value)
			}
			code, stderr := runBridge(t, exec.Command(setpriv, "--no-new-privs", "--", py, "-I", "-B", bridge, strategy), env)
			_, statErr := os.Stat(marker)
			imported := statErr == nil
			if c.want == "" {
				if !imported || code == ExitCode {
					t.Errorf("exit %d, strategy imported %v; want it imported; stderr:\n%s", code, imported, stderr)
				}
				return
			}
			if code != ExitCode || !strings.HasPrefix(stderr, "stratbench sandbox: "+c.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, ExitCode, "stratbench sandbox: "+c.want)
			}
			if imported {
				t.Errorf("the strategy was imported")
			}
		})
	}
}

// runBridge runs a bridge with the protocol descriptors a host gives it: the
// host's end of fd 3 is closed at once, so a bridge that got as far as
// serving ends at its first read.
func runBridge(t *testing.T, cmd *exec.Cmd, env []string) (code int, stderr string) {
	t.Helper()
	toWorker, hostEnd := pipe(t)
	fromWorker, workerEnd := pipe(t)
	page, err := os.CreateTemp(t.TempDir(), "page")
	if err != nil {
		t.Fatal(err)
	}
	defer page.Close()
	if err := page.Truncate(4096); err != nil {
		t.Fatal(err)
	}
	hostEnd.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(io.Discard, fromWorker)
	}()
	commands, commandsEnd := pipe(t)
	defer commands.Close()
	_, stderr, code = run(t, cmd, env, []*os.File{toWorker, workerEnd, page, commandsEnd})
	workerEnd.Close()
	commandsEnd.Close()
	<-done
	return code, stderr
}

// pyQuote returns s as a Python string literal.
func pyQuote(s string) string {
	var b bytes.Buffer
	b.WriteByte('\'')
	for _, r := range s {
		if r == '\'' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('\'')
	return b.String()
}

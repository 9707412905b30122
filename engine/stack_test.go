package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStackDumpParse: of faulthandler's dump the current thread's frames
// are kept, most recent call last, the bridge's left out, the strategy's
// marked with their source; lines written before the ask are ignored.
func TestStackDumpParse(t *testing.T) {
	dir := t.TempDir()
	strategy := filepath.Join(dir, "strategy.py")
	helper := filepath.Join(dir, "helpers.py")
	if err := os.WriteFile(strategy, []byte("import helpers\n\ndef on_data(ctx, history):\n    helpers.spin()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(helper, []byte("def spin():\n    while True:\n        pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bridge := "/home/ana/.cache/stratbench/bridge-1/stratbench_bridge.py"
	s := &stackDump{}
	s.line(`  File "` + strategy + `", line 1 in forged_before_the_ask`)
	s.asked = true
	for _, l := range []string{
		"Fatal Python error: Aborted",
		"",
		"Thread 0x00007f0000000001 (most recent call first):",
		`  File "/usr/lib/python3.11/threading.py", line 320 in wait`,
		"",
		"Current thread 0x00007f0000000002 (most recent call first):",
		`  File "` + helper + `", line 3 in spin`,
		`  File "` + strategy + `", line 4 in on_data`,
		`  File "/usr/lib/python3/dist-packages/lib.py", line 9 in call`,
		`  File "` + bridge + `", line 810 in _run_bars`,
		"",
		"Extension modules: numpy.core._multiarray_umath (total: 1)",
	} {
		s.line(l)
	}
	tb, frames := s.stack(strategy, bridge)
	var got []string
	for _, fr := range frames {
		mark := " "
		if fr.User {
			mark = "▶"
		}
		got = append(got, mark+filepath.Base(fr.File)+":"+fr.Function+":"+fr.Source)
	}
	want := []string{" lib.py:call:", "▶strategy.py:on_data:helpers.spin()", "▶helpers.py:spin:pass"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("frames %q, want %q", got, want)
	}
	if !strings.HasSuffix(tb, "line 3, in spin\n    pass\n") || strings.Contains(tb, "forged") || strings.Contains(tb, "bridge") {
		t.Fatalf("traceback:\n%s", tb)
	}
	if !s.complete(s.last) {
		t.Fatal("a dump whose current thread block ended is not complete")
	}
	if tb, frames := (&stackDump{asked: true}).stack(strategy, bridge); tb != "" || frames != nil {
		t.Fatalf("no dump gave %q %v", tb, frames)
	}
}

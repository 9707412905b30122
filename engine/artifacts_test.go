package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"stratbench/internal/units"
	"stratbench/sandbox"
)

// TestArtifactCaps: a strategy that writes past the per-file cap gets
// EFBIG at the cap; once its files in the job folder take more than their
// cap, one notice says so and no file may grow any more: its next write, a
// single byte, fails with EFBIG; no write fails before the folder passed its
// cap. The run goes on and passes. With and without the sandbox.
func TestArtifactCaps(t *testing.T) {
	for _, sandboxed := range []bool{false, true} {
		name := "unsandboxed"
		if sandboxed {
			name = "sandboxed"
		}
		t.Run(name, func(t *testing.T) {
			if sandboxed {
				if err := sandbox.Check(); err != nil {
					t.Skip(err)
				}
			}
			l := roomyLimits()
			l.ArtifactFileBytes = 1 << 20
			l.ArtifactsBytes = 4 << 20
			l.ArtifactsCheck = 100 * time.Millisecond
			r := runStrategyWith(t, "artifact_hog.py", l, newReplay(10, 1), func(c *Config) {
				c.Sandbox = sandboxed
				c.Params = []string{fmt.Sprintf("folder_cap=%d", l.ArtifactsBytes)}
			})
			if r.report.Status != StatusPassed {
				t.Fatalf("status %s failure %+v", r.report.Status, r.report.Failure)
			}
			var got struct {
				Big   [2]*int64 `json:"big"`   // bytes written, errno
				Parts [3]*int64 `json:"parts"` // files written, errno, bytes of all files
				Probe [2]*int64 `json:"probe"` // one-byte writes, errno
			}
			if err := json.Unmarshal(r.report.Metadata, &got); err != nil || got.Big[0] == nil || got.Parts[0] == nil || got.Probe[0] == nil {
				t.Fatalf("metadata %s: %v", r.report.Metadata, err)
			}
			efbig := int64(syscall.EFBIG)
			if *got.Big[0] != l.ArtifactFileBytes || got.Big[1] == nil || *got.Big[1] != efbig {
				t.Errorf("the file past the per-file cap: %s, want %d bytes then EFBIG", r.report.Metadata, l.ArtifactFileBytes)
			}
			// The folder is counted a block at least per file and for
			// itself: the host may stop the part during which it passed the
			// cap, never one before.
			if errno := got.Parts[1]; errno != nil {
				counted := *got.Parts[2] + 4096*(*got.Parts[0]+2)
				if *errno != efbig || counted <= l.ArtifactsBytes {
					t.Fatalf("a write failed before the folder's cap (%d bytes as counted): %s", counted, r.report.Metadata)
				}
			}
			if got.Probe[1] == nil || *got.Probe[1] != efbig {
				t.Fatalf("after the folder's cap: %s, want a one-byte write to fail with EFBIG", r.report.Metadata)
			}
			// The strategy stopped at the first part that crossed the cap; a
			// probe file adds a block.
			used, _ := diskUsage([]string{filepath.Join(r.dir, "artifacts")}, 1<<40)
			if used > l.ArtifactsBytes+256<<10+2*4096 {
				t.Errorf("the artifacts take %s", units.Bytes(used))
			}
			notices := 0
			for _, ll := range readLogs(t, r.dir) {
				if ll.Stream == "system" && strings.Contains(ll.Line, "over their 4.00 MiB cap") {
					notices++
				}
			}
			if notices != 1 {
				t.Errorf("%d notices about the artifacts' cap", notices)
			}
			t.Logf("%d files, then %d one-byte writes until EFBIG; the artifacts take %s", *got.Parts[0], *got.Probe[0], units.Bytes(used))
		})
	}
}

// TestDiskUsageCountsFilesAndStops: every file and folder counts at least a
// block, a sparse file only what it holds, and the walk stops over the
// limit.
func TestDiskUsageCountsFilesAndStops(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 10; i++ {
		os.WriteFile(filepath.Join(dir, "empty"+string(rune('0'+i))), nil, 0o644)
	}
	sparse, _ := os.Create(filepath.Join(dir, "sparse"))
	sparse.Truncate(1 << 30)
	sparse.Close()
	used, over := diskUsage([]string{dir}, 1<<30)
	if over || used < 12*4096 || used > 1<<20 {
		t.Errorf("used %d bytes (over %v): want 12 blocks or a little more", used, over)
	}
	if _, over := diskUsage([]string{dir}, 5*4096); !over {
		t.Error("not over a 5-block limit")
	}
}

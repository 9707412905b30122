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
	"stratbench/job"
	"stratbench/sandbox"
)

// TestArtifactCaps: a strategy that writes past the per-file cap gets
// EFBIG at the cap, with and without the sandbox. Past the folder's cap:
// without the sandbox, once its files in the job folder take more than
// their cap, one notice says so and no file may grow any more: its next
// write, a single byte, fails with EFBIG; no write fails before the folder
// passed its cap. In the sandbox the folder is a tmpfs of the cap's size:
// writes fail with ENOSPC at the cap, one notice says so, and the files are
// in the job folder once the run has ended. The run goes on and passes.
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
			folderCap := l.ArtifactsBytes
			if sandboxed {
				folderCap *= 4 // the strategy writes on until the kernel stops it
			}
			r := runStrategyWith(t, "artifact_hog.py", l, newReplay(10, 1), func(c *Config) {
				c.Sandbox = sandboxed
				c.Params = []string{fmt.Sprintf("folder_cap=%d", folderCap)}
			})
			if r.report.Status != job.StatusPassed {
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
			efbig, full := int64(syscall.EFBIG), int64(syscall.EFBIG)
			if sandboxed {
				full = int64(syscall.ENOSPC)
			}
			if *got.Big[0] != l.ArtifactFileBytes || got.Big[1] == nil || *got.Big[1] != efbig {
				t.Errorf("the file past the per-file cap: %s, want %d bytes then EFBIG", r.report.Metadata, l.ArtifactFileBytes)
			}
			switch errno := got.Parts[1]; {
			case sandboxed && (errno == nil || *errno != full || *got.Parts[2] > l.ArtifactsBytes):
				t.Fatalf("sandboxed: %s, want ENOSPC within the folder's %d bytes", r.report.Metadata, l.ArtifactsBytes)
			case !sandboxed && errno != nil:
				// The folder is counted a block at least per file and for
				// itself: the host may stop the part during which it passed
				// the cap, never one before.
				counted := *got.Parts[2] + 4096*(*got.Parts[0]+2)
				if *errno != efbig || counted <= l.ArtifactsBytes {
					t.Fatalf("a write failed before the folder's cap (%d bytes as counted): %s", counted, r.report.Metadata)
				}
			}
			if got.Probe[1] == nil || *got.Probe[1] != full {
				t.Fatalf("after the folder's cap: %s, want a one-byte write to fail with %s", r.report.Metadata, syscall.Errno(full))
			}
			// The strategy stopped at the first part that crossed the cap; a
			// probe file adds a block.
			used, _ := diskUsage([]string{filepath.Join(r.dir, "artifacts")}, 1<<40)
			if used > l.ArtifactsBytes+256<<10+2*4096 {
				t.Errorf("the artifacts take %s", units.Bytes(used))
			}
			if sandboxed {
				if fi, err := os.Stat(filepath.Join(r.dir, "artifacts", "big.bin")); err != nil || fi.Size() != l.ArtifactFileBytes {
					t.Errorf("big.bin in the job folder after the run: %v, %v", fi, err)
				}
			}
			notice := "over their 4.00 MiB cap"
			if sandboxed {
				notice = "reached their cap of 4.00 MiB"
			}
			notices := 0
			for _, ll := range readLogs(t, r.dir) {
				if ll.Stream == "system" && strings.Contains(ll.Line, notice) {
					notices++
				}
			}
			if notices != 1 {
				t.Errorf("%d notices %q about the artifacts' cap", notices, notice)
			}
			t.Logf("%d files, then %d one-byte writes until %s; the artifacts take %s", *got.Parts[0], *got.Probe[0], syscall.Errno(full), units.Bytes(used))
		})
	}
}

// TestArtifactsFinalCheck: a run too short for a periodic check is checked
// when its worker has ended; the notice states what the files take, all of
// it: allocated blocks past a file's end (fallocate, which RLIMIT_FSIZE lets
// through with FALLOC_FL_KEEP_SIZE), a file of several names once.
func TestArtifactsFinalCheck(t *testing.T) {
	l := roomyLimits()
	l.ArtifactsBytes = 4 << 20
	l.ArtifactsCheck = time.Hour
	r := runStrategyWith(t, "artifact_fallocate.py", l, newReplay(3, 1), func(c *Config) {
		c.Params = []string{"mib=7"}
	})
	if r.report.Status != job.StatusPassed {
		t.Fatalf("status %s failure %+v", r.report.Status, r.report.Failure)
	}
	var notes []string
	for _, ll := range readLogs(t, r.dir) {
		if ll.Stream == "system" && strings.Contains(ll.Line, "cap") {
			notes = append(notes, ll.Line)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "take 7.0") || !strings.Contains(notes[0], "over their 4.00 MiB cap (found when the worker had ended)") {
		t.Errorf("notices %q, want one saying the files take 7 MiB", notes)
	}
	a, err := job.ListArtifacts(r.dir)
	if err != nil || a.DiskBytes < 7<<20 || a.Bytes > 1<<20 {
		t.Errorf("listing: %d bytes, %d on disk, %v; want 7 MiB on disk in files of no size", a.Bytes, a.DiskBytes, err)
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
	// A file of many names counts once.
	big := filepath.Join(dir, "big")
	os.WriteFile(big, make([]byte, 1<<20), 0o644)
	for i := 0; i < 20; i++ {
		os.Link(big, filepath.Join(dir, "name"+string(rune('a'+i))))
	}
	if used, _ := diskUsage([]string{dir}, 1<<40); used > 2<<20 {
		t.Errorf("a 1 MiB file of 21 names counted as %d bytes", used)
	}
}

package app

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/internal/nofollow"
	"stratbench/job"
	"stratbench/tearsheet"
)

// reportTestJob makes an ended job of its own in a new home and returns
// its store, its id and its folder.
func reportTestJob(t *testing.T) (*job.Store, string, string) {
	t.Helper()
	home := t.TempDir()
	store, err := job.OpenStore(home)
	if err != nil {
		t.Fatal(err)
	}
	id := "20261201-120000.000-ab12"
	dir := store.JobDir(id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	end := time.Date(2026, 12, 1, 12, 0, 1, 0, time.UTC)
	data, err := json.Marshal(&job.Report{JobID: id, Status: job.StatusPassed, StartedAt: end.Add(-time.Second), FinishedAt: &end})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "job.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return store, id, dir
}

// TestJobReportHoldsItsFolder: the report written into a job's folder (the
// workbench's o, stratbench report ID) holds the folder as the command
// that ran the job does, so that prune and retention, which remove a
// folder only under an exclusive lock (job.Store.RemoveEnded), never
// remove it while the report goes in: that left a folder with a report
// and no job.json, which no listing shows and prune never removes. A
// folder under that lock (being removed) gets no report.
func TestJobReportHoldsItsFolder(t *testing.T) {
	store, id, dir := reportTestJob(t)
	removing, err := nofollow.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer removing.Close()
	if err := removing.TryLock(true); err != nil {
		t.Fatal(err)
	}
	path, err := writeJobReport(context.Background(), store, id, "")
	if err == nil || !strings.Contains(err.Error(), id) {
		t.Errorf("report of a job folder being removed: %q, %v; want an error naming the job", path, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, tearsheet.FileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a report was written into a folder being removed (%v)", err)
	}
	removing.Close()
	path, err = writeJobReport(context.Background(), store, id, "")
	if err != nil || path != filepath.Join(dir, tearsheet.FileName) {
		t.Fatalf("report once the folder is free: %q, %v", path, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// TestJobReportFollowsNoSwappedFolder: the report goes into the job folder
// the job was read from, through its descriptor, never through a link
// that replaces the folder meanwhile (as root, into any folder a link
// names). The folder is swapped for a link to an outside folder the
// moment its equity record is opened (inotify), while the record of
// 100,000 points is read and the report drawn.
func TestJobReportFollowsNoSwappedFolder(t *testing.T) {
	store, id, dir := reportTestJob(t)
	outside := t.TempDir()
	records := filepath.Join(dir, job.RecordsDir)
	if err := os.Mkdir(records, 0o755); err != nil {
		t.Fatal(err)
	}
	var equity strings.Builder
	equity.WriteString("event,time,equity\n")
	t0 := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	for i := range 100_000 {
		fmt.Fprintf(&equity, "%d,%s,%d\n", i, t0.Add(time.Duration(i)*time.Minute).Format(time.RFC3339), 100_000+i%977)
	}
	if err := os.WriteFile(filepath.Join(records, "equity.csv"), []byte(equity.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	f := os.NewFile(uintptr(in), "inotify")
	defer f.Close()
	if _, err := unix.InotifyAddWatch(in, records, unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	swapped := make(chan error, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			if err != nil {
				swapped <- err
				return
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				// struct inotify_event: wd, mask, cookie, len, then the name.
				l := int(binary.NativeEndian.Uint32(buf[off+12:]))
				name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+l]), "\x00")
				off += unix.SizeofInotifyEvent + l
				if name != "equity.csv" {
					continue
				}
				err := os.Rename(dir, dir+".moved")
				if err == nil {
					err = os.Symlink(outside, dir)
				}
				swapped <- err
				return
			}
		}
	}()
	path, err := writeJobReport(context.Background(), store, id, "")
	if err := <-swapped; err != nil {
		t.Fatalf("swap the folder: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(outside, tearsheet.FileName)); err == nil {
		t.Fatalf("the report was written through the link that replaced the job folder, to %s", outside)
	}
	if err != nil {
		return // refused: fine, as long as nothing went outside
	}
	if _, err := os.Stat(filepath.Join(dir+".moved", tearsheet.FileName)); err != nil {
		t.Errorf("the report (%s) is not in the folder the job was read from: %v", path, err)
	}
}

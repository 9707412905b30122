package sweep

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// helperEnv makes the test binary a helper process (as os/exec's tests
// re-execute themselves): its value names the helper, see runHelper.
const helperEnv = "SWEEP_TEST_HELPER"

// runHelper runs a helper in this process and returns its exit code.
//
//	append HOME ID      appends results forever, printing each index once
//	                    it is synced, until killed
//	create HOME         creates sweeps forever, printing each id once
//	                    Create returned, until killed
//	fsize HOME ID       appends one long line under a file size limit
//	                    that cuts it part-way, and prints what Append said
func runHelper(helper string) int {
	args := strings.Fields(helper)
	store, err := OpenStore(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if args[0] == "create" {
		for {
			res, err := store.Create(&Document{Status: StatusRunning})
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			res.Close()
			fmt.Println(res.path)
		}
	}
	res, rb, err := store.OpenResults(args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer res.Close()
	next := int64(len(rb.Results))
	switch args[0] {
	case "append":
		out := bufio.NewWriter(os.Stdout)
		for i := next; ; i++ {
			r := passed(i, float64(i))
			// Lines of varying length, some longer than a page, so a kill
			// can land in the middle of a write.
			r.Fingerprint = strings.Repeat("f", int(i%7)*1500)
			if err := res.Append(r); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			fmt.Fprintln(out, i)
			out.Flush()
		}
	case "fsize":
		info, err := os.Stat(filepath.Join(store.Dir(args[2]), ResultsFile))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		// The kernel cuts a write at RLIMIT_FSIZE: the first part of the
		// line is written, the rest fails with EFBIG (and SIGXFSZ, which
		// would kill us otherwise).
		signal.Ignore(syscall.SIGXFSZ)
		limit := uint64(info.Size()) + 100
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: limit, Max: limit}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		r := passed(next, 1)
		r.Fingerprint = strings.Repeat("f", 1000)
		err = res.Append(r)
		fmt.Println(err)
		return 0
	}
	return 2
}

// helper starts the test binary as the helper named by args.
func helper(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+strings.Join(args, " "))
	cmd.Stderr = os.Stderr
	return cmd
}

func newSweep(t *testing.T) (*Store, *Document) {
	t.Helper()
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	doc := &Document{Status: StatusRunning, StartedAt: time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC),
		Spec: mustSpec(t, Flags{Grid: []string{"fast=1,2"}}, manifest).Doc()}
	res, err := store.Create(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
	return store, doc
}

func TestSweepIDs(t *testing.T) {
	at := time.Date(2026, 1, 5, 9, 30, 0, 123e6, time.FixedZone("CET", 3600))
	id := NewID(at)
	if !strings.HasPrefix(id, "sw-20260105-083000.123-") || len(id) != len("sw-20260105-083000.123-1a2b") || !IsID(id) {
		t.Fatalf("id %q", id)
	}
	later := NewID(at.Add(time.Millisecond))
	if later <= id {
		t.Fatalf("%s sorts before %s", later, id)
	}
	for _, s := range []string{"20260105-083000.123-1a2b", "latest", "1a2b", "sw", "sw-../x", "sw-a/b", "sw-a b", ""} {
		if IsID(s) {
			t.Fatalf("IsID(%q)", s)
		}
	}
}

func TestStoreDocuments(t *testing.T) {
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 3 {
		doc := &Document{Status: StatusRunning, StartedAt: time.Date(2026, 1, 5+i, 0, 0, 0, 0, time.UTC), Spec: SpecDoc{Metric: "sharpe"}}
		res, err := store.Create(doc)
		if err != nil {
			t.Fatal(err)
		}
		res.Close()
		ids = append(ids, doc.SweepID)
	}
	// A folder without sweep.json (being created) and a job-like folder
	// are not sweeps; a sweep.json cut short, or another sweep's, is an
	// unreadable sweep, listed as such.
	os.Mkdir(store.Dir("sw-20990101-000000.000-ffff"), 0o755)
	os.Mkdir(store.Dir("20260105-000000.000-abcd"), 0o755)
	for id, body := range map[string]string{"sw-20250101-000000.000-0001": `{"sweep_id": "sw-2025`, "sw-20250101-000000.000-0002": `{}`} {
		if err := os.Mkdir(store.Dir(id), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(store.Dir(id), DocumentFile), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	docs, unreadable, err := store.List()
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, de := range unreadable {
		bad = append(bad, de.Error())
	}
	if want := []string{
		"sweep sw-20250101-000000.000-0002: " + filepath.Join(store.Dir("sw-20250101-000000.000-0002"), DocumentFile) +
			` is not a readable sweep document (its sweep_id is "", not its folder's name)`,
		"sweep sw-20250101-000000.000-0001: " + filepath.Join(store.Dir("sw-20250101-000000.000-0001"), DocumentFile) +
			" is not a readable sweep document (unexpected end of JSON input)",
	}; !slices.Equal(bad, want) {
		t.Fatalf("unreadable %q, want %q", bad, want)
	}
	for _, id := range []string{"sw-20250101-000000.000-0001", "sw-20250101-000000.000-0002"} {
		if _, err := store.Load(id); !errors.As(err, new(*DocumentError)) {
			t.Fatalf("load %s: %v, want a *DocumentError", id, err)
		}
		os.RemoveAll(store.Dir(id))
	}
	var got []string
	for _, d := range docs {
		got = append(got, d.SweepID)
	}
	if want := []string{ids[2], ids[1], ids[0]}; !slices.Equal(got, want) {
		t.Fatalf("list %v, want newest first %v", got, want)
	}
	// Save replaces the document atomically: no temporary file is left,
	// and the file is readable by others whatever the umask.
	doc, err := store.Load(ids[1])
	if err != nil {
		t.Fatal(err)
	}
	doc.Finish(false, doc.StartedAt.Add(time.Second))
	if err := store.Save(doc); err != nil {
		t.Fatal(err)
	}
	if back, err := store.Load(ids[1]); err != nil || back.Status != StatusPassed || back.DurationMS != 1000 {
		t.Fatalf("load %+v, %v", back, err)
	}
	entries, _ := os.ReadDir(store.Dir(ids[1]))
	if len(entries) != 2 || entries[0].Name() != ResultsFile || entries[1].Name() != DocumentFile {
		t.Fatalf("sweep folder holds %v", entries)
	}
	if info, _ := os.Stat(filepath.Join(store.Dir(ids[1]), DocumentFile)); info.Mode().Perm() != 0o644 {
		t.Fatalf("sweep.json mode %v", info.Mode())
	}
	// Resolve: the id, a unique prefix, not an ambiguous one, not a job id.
	if id, err := store.Resolve(ids[0]); err != nil || id != ids[0] {
		t.Fatalf("resolve %s: %s, %v", ids[0], id, err)
	}
	if id, err := store.Resolve("sw-20260106"); err != nil || id != ids[1] {
		t.Fatalf("resolve a prefix: %s, %v", id, err)
	}
	_, err = store.Resolve("sw-2026010")
	assertUsage(t, err, "sweep id sw-2026010: ambiguous: it starts "+ids[2]+", "+ids[1]+", "+ids[0])
	for _, ref := range []string{"20260105-000000.000-abcd", "sw-2027", "latest"} {
		if _, err := store.Resolve(ref); !errors.Is(err, ErrUnknownSweep) {
			t.Fatalf("resolve %s: %v", ref, err)
		}
	}
	if _, err := store.Load("sw-2027"); !errors.Is(err, ErrUnknownSweep) {
		t.Fatalf("load unknown: %v", err)
	}
}

func TestResultsAppendAndReadBack(t *testing.T) {
	store, doc := newSweep(t)
	res, rb, err := store.OpenResults(doc.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rb.Results) != 0 || rb.Note != "" {
		t.Fatalf("new sweep read back %+v", rb)
	}
	wfTrain := wfResult(0, PhaseTrain, 1, RunPassed, 1, 0.1)
	for _, r := range []Result{passed(1, 0.5), failed(0), wfTrain, wfResult(0, PhaseTest, 1, RunPassed, 1, 0.1), wfResult(1, PhaseTrain, 1, RunPassed, 1, 0.1)} {
		if err := res.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(store.Dir(doc.SweepID), ResultsFile)
	before, _ := os.ReadFile(path)
	// (fold, phase, index) is unique: a duplicate is refused and nothing written.
	for _, dup := range []Result{passed(1, 0.9), wfTrain} {
		if err := res.Append(dup); !errors.Is(err, ErrDuplicateResult) {
			t.Fatalf("duplicate %v: %v", dup, err)
		}
	}
	// A stopped run has no result.
	stopped := passed(5, 1)
	stopped.Status = "stopped"
	if err := res.Append(stopped); err == nil || !strings.Contains(err.Error(), "a stopped run has no result") {
		t.Fatalf("stopped run appended: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Fatalf("refused appends changed the file:\n%s", after)
	}
	// The sweep is running while its results are open: a second open is
	// refused, here as in another process.
	if running, err := store.Running(doc.SweepID); err != nil || !running {
		t.Fatalf("running %v, %v", running, err)
	}
	if _, _, err := store.OpenResults(doc.SweepID); !errors.Is(err, ErrBusy) {
		t.Fatalf("second open: %v", err)
	}
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
	if err := res.Append(passed(9, 1)); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	if running, err := store.Running(doc.SweepID); err != nil || running {
		t.Fatalf("running after close %v, %v", running, err)
	}
	rb, err = ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := indices(rb.Results); !slices.Equal(got, []int64{1, 0, 1, 1, 1}) || rb.Dropped != 0 {
		t.Fatalf("read back %v, dropped %d", got, rb.Dropped)
	}
	done := rb.Done()
	for _, tc := range []struct {
		fold  *int
		phase Phase
		index int64
		want  bool
	}{
		{nil, PhaseNone, 1, true}, {nil, PhaseNone, 0, true}, {nil, PhaseNone, 2, false},
		{ptr(0), PhaseTrain, 1, true}, {ptr(0), PhaseTest, 1, true}, {ptr(1), PhaseTest, 1, false}, {ptr(0), PhaseTrain, 0, false},
	} {
		if got := done.Contains(tc.fold, tc.phase, tc.index); got != tc.want {
			t.Fatalf("done %v %q %d: %v", tc.fold, tc.phase, tc.index, got)
		}
	}
	// Reopened, the duplicates are still refused.
	res, _, err = store.OpenResults(doc.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if err := res.Append(failed(0)); !errors.Is(err, ErrDuplicateResult) {
		t.Fatalf("duplicate after reopening: %v", err)
	}
	if err := res.Append(passed(2, 1)); err != nil {
		t.Fatal(err)
	}
}

func TestResultsTruncatedLastLine(t *testing.T) {
	store, doc := newSweep(t)
	path := filepath.Join(store.Dir(doc.SweepID), ResultsFile)
	whole := line(passed(0, 1)) + "\n" + line(failed(1)) + "\n"
	cut := line(passed(2, 1))[:40]
	if err := os.WriteFile(path, []byte(whole+cut), 0o644); err != nil {
		t.Fatal(err)
	}
	rb, err := ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := indices(rb.Results); !slices.Equal(got, []int64{0, 1}) || rb.Dropped != 40 ||
		rb.Note != path+": left out an incomplete last line (40 bytes): a run cut short by a crash, which runs again" {
		t.Fatalf("read back %v, dropped %d, note %q", got, rb.Dropped, rb.Note)
	}
	// Opening for appending cuts it off, so the next line is a line.
	res, rb, err := store.OpenResults(doc.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	if rb.Dropped != 40 {
		t.Fatalf("open: dropped %d", rb.Dropped)
	}
	if err := res.Append(passed(2, 1)); err != nil {
		t.Fatal(err)
	}
	res.Close()
	data, _ := os.ReadFile(path)
	if string(data) != whole+line(passed(2, 1))+"\n" {
		t.Fatalf("file\n%s", data)
	}
	// A bad line that is not the last is not a crash's: an error naming
	// the file and line.
	for _, tc := range []struct{ content, want string }{
		{cut + "\n" + whole, path + ` line 1: unexpected end of JSON input`},
		{whole + "{}\n", path + ` line 3: status "": a result is "passed" or "failed" (a stopped run has no result)`},
		{whole + line(passed(0, 2)) + "\n", path + ` line 3: index 0 already has a result on line 1`},
		{"\n", path + ` line 1: unexpected end of JSON input`},
	} {
		os.WriteFile(path, []byte(tc.content), 0o644)
		if _, err := ReadResults(path); err == nil || err.Error() != tc.want {
			t.Fatalf("read %q: %v, want %q", tc.content, err, tc.want)
		}
		if _, _, err := store.OpenResults(doc.SweepID); err == nil || err.Error() != tc.want {
			t.Fatalf("open %q: %v, want %q", tc.content, err, tc.want)
		}
	}
	// No file yet: no results.
	if rb, err := ReadResults(filepath.Join(t.TempDir(), ResultsFile)); err != nil || len(rb.Results) != 0 {
		t.Fatalf("missing file: %+v, %v", rb, err)
	}
}

func TestResultsSurviveKill(t *testing.T) {
	// A helper process appends as fast as it can and is killed (SIGKILL,
	// no chance to clean up) after a growing number of lines: every line
	// it reported synced is in the file, the file reads back, and a
	// resumed sweep goes on appending after it.
	store, doc := newSweep(t)
	path := filepath.Join(store.Dir(doc.SweepID), ResultsFile)
	synced := int64(0)
	for round := range 5 {
		cmd := helper(t, "append", filepath.Dir(filepath.Dir(store.Dir(doc.SweepID))), doc.SweepID)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		target := synced + int64(20*(round+1))
		for sc.Scan() {
			i, err := strconv.ParseInt(sc.Text(), 10, 64)
			if err != nil {
				t.Fatalf("helper printed %q", sc.Text())
			}
			synced = i + 1
			if synced >= target {
				break
			}
		}
		// While the helper appends, the sweep is running, to this process
		// too; once the kernel has reaped it, it is not.
		if running, err := store.Running(doc.SweepID); err != nil || !running {
			t.Fatalf("round %d: running %v, %v while the helper appends", round, running, err)
		}
		if _, _, err := store.OpenResults(doc.SweepID); !errors.Is(err, ErrBusy) {
			t.Fatalf("round %d: open while the helper appends: %v", round, err)
		}
		cmd.Process.Kill()
		cmd.Wait()
		if synced < target {
			t.Fatalf("round %d: the helper stopped after %d lines", round, synced)
		}
		if running, err := store.Running(doc.SweepID); err != nil || running {
			t.Fatalf("round %d: running %v, %v after the helper was killed", round, running, err)
		}
		rb, err := ReadResults(path)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		n := int64(len(rb.Results))
		if n < synced {
			t.Fatalf("round %d: %d lines read back, %d were synced", round, n, synced)
		}
		for k, r := range rb.Results {
			if r.Index != int64(k) {
				t.Fatalf("round %d: line %d holds index %d", round, k+1, r.Index)
			}
		}
		synced = n // the helper may have appended more before it died
		if rb.Dropped > 0 {
			t.Logf("round %d: the kill cut a line after %d bytes", round, rb.Dropped)
		}
	}
}

func TestResultsWholeLineOrNothing(t *testing.T) {
	// A write the kernel cuts part-way (the file size limit, as a full
	// disk would) is cut back off: the file keeps whole lines only.
	store, doc := newSweep(t)
	res, _, err := store.OpenResults(doc.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	for i := range int64(3) {
		if err := res.Append(passed(i, 1)); err != nil {
			t.Fatal(err)
		}
	}
	res.Close()
	path := filepath.Join(store.Dir(doc.SweepID), ResultsFile)
	before, _ := os.ReadFile(path)
	cmd := helper(t, "fsize", filepath.Dir(filepath.Dir(store.Dir(doc.SweepID))), doc.SweepID)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	if !strings.Contains(string(out), "file too large") {
		t.Fatalf("the helper's append: %s", out)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(after, before) {
		t.Fatalf("after a cut write the file holds %d bytes, %d before:\n%s", len(after), len(before), after[len(before):])
	}
	if rb, err := ReadResults(path); err != nil || len(rb.Results) != 3 || rb.Dropped != 0 {
		t.Fatalf("read back %+v, %v", rb, err)
	}
}

func TestDocumentRoundTripThroughStore(t *testing.T) {
	store, doc := newSweep(t)
	doc.Tally(mustPlan(t, mustSpec(t, Flags{Grid: []string{"fast=1,2"}}, manifest)), nil, []Result{passed(0, 1), failed(1)})
	if err := store.Save(doc); err != nil {
		t.Fatal(err)
	}
	back, err := store.Load(doc.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(doc)
	b, _ := json.Marshal(back)
	if !bytes.Equal(a, b) {
		t.Fatalf("saved\n%s\nloaded\n%s", a, b)
	}
}

func TestResultsConcurrentAppends(t *testing.T) {
	// The runs of a sweep append from their own goroutines; two that
	// finish the same index (a run lost and run again elsewhere) leave
	// one line.
	store, doc := newSweep(t)
	res, _, err := store.OpenResults(doc.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	const writers, perWriter = 8, 40
	errs := make(chan error, writers*perWriter)
	done := make(chan struct{})
	for w := range writers {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range perWriter {
				// Writers w and w^1 append the same indices.
				errs <- res.Append(passed(int64((w/2)*perWriter+i), 1))
			}
		}()
	}
	for range writers {
		<-done
	}
	close(errs)
	dups := 0
	for err := range errs {
		switch {
		case errors.Is(err, ErrDuplicateResult):
			dups++
		case err != nil:
			t.Fatal(err)
		}
	}
	if dups != writers*perWriter/2 {
		t.Fatalf("%d duplicates refused, want %d", dups, writers*perWriter/2)
	}
	rb, err := ReadResults(filepath.Join(store.Dir(doc.SweepID), ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	got := indices(rb.Results)
	slices.Sort(got)
	for i, idx := range got {
		if idx != int64(i) {
			t.Fatalf("indices %v", got)
		}
	}
	if len(got) != writers*perWriter/2 {
		t.Fatalf("%d lines", len(got))
	}
}

// TestLoadCatchesUpWithResults: sweep.json of a running sweep is rewritten
// at most every DefaultSaveEvery, so a sweep that crashed left it behind
// results.jsonl; Load takes counts, best and runs from the results then.
// A finished sweep's document is read as it is.
func TestLoadCatchesUpWithResults(t *testing.T) {
	store, doc := newSweep(t)
	plan := mustPlan(t, mustSpec(t, Flags{Grid: []string{"fast=1,2,3,4"}}, manifest))
	res, _, err := store.OpenResults(doc.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	saved := []Result{passed(0, 1)}
	doc.Tally(plan, nil, saved)
	if err := store.Save(doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range append(saved, failed(1), passed(2, 3), passed(3, 2)) {
		if err := res.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	back, err := store.Load(doc.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	if back.Counts != (Counts{Total: 4, Done: 4, Passed: 3, Failed: 1}) || back.Best == nil || back.Best.Index != 2 ||
		!slices.Equal(indices(back.Runs), []int64{2, 3, 0, 1}) {
		t.Fatalf("loaded counts %+v, best %+v, runs %v: want those of the four results", back.Counts, back.Best, indices(back.Runs))
	}
	doc.Finish(true, doc.StartedAt.Add(time.Minute))
	if err := store.Save(doc); err != nil {
		t.Fatal(err)
	}
	if back, err = store.Load(doc.SweepID); err != nil || back.Counts.Done != 1 {
		t.Fatalf("a stopped sweep's document loaded with counts %+v (%v), want it as saved", back.Counts, err)
	}
}

// TestStoreCreate: a sweep's folder appears whole (sweep.json in it, its
// results open and locked) or not at all, and what a Create that died
// part-way left is removed by RemoveAbandoned, never what a running
// Create is making.
func TestStoreCreate(t *testing.T) {
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	doc := &Document{Status: StatusRunning, StartedAt: time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)}
	res, err := store.Create(doc)
	if err != nil {
		t.Fatal(err)
	}
	if running, err := store.Running(doc.SweepID); err != nil || !running {
		t.Fatalf("a created sweep is running (its results locked): %v, %v", running, err)
	}
	if _, _, err := store.OpenResults(doc.SweepID); !errors.Is(err, ErrBusy) {
		t.Fatalf("a second opening of a created sweep's results: %v, want ErrBusy", err)
	}
	if err := res.Append(Result{Index: 0, Status: RunPassed, JobID: "j0"}); err != nil {
		t.Fatal(err)
	}
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
	rb, err := ReadResults(filepath.Join(store.Dir(doc.SweepID), ResultsFile))
	if err != nil || len(rb.Results) != 1 || rb.Results[0].JobID != "j0" {
		t.Fatalf("the results Create opened were not the sweep's: %+v, %v", rb, err)
	}
	if info, err := os.Stat(store.Dir(doc.SweepID)); err != nil || info.Mode().Perm() != 0o755 {
		t.Fatalf("sweep folder: %v, %v", info, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(store.Dir(doc.SweepID)))
	if len(entries) != 1 || entries[0].Name() != doc.SweepID {
		t.Fatalf("the sweeps folder holds %v, want only %s", entries, doc.SweepID)
	}

	// Three folders a Create makes before its rename: one it left an hour
	// ago (dead: nothing locks its results), one it left a moment ago (it
	// may still be about to lock them), one whose results a live Create
	// holds (locked by this process through another descriptor).
	old := filepath.Join(store.dir, creatingPrefix+"old")
	recent := filepath.Join(store.dir, creatingPrefix+"recent")
	held := filepath.Join(store.dir, creatingPrefix+"held")
	for _, dir := range []string{old, recent, held} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ResultsFile), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	locked, _, err := openResults(filepath.Join(held, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer locked.Close()
	hourAgo := time.Now().Add(-time.Hour)
	for _, dir := range []string{old, held} {
		if err := os.Chtimes(dir, hourAgo, hourAgo); err != nil {
			t.Fatal(err)
		}
	}
	if ids, err := store.IDs(); err != nil || len(ids) != 1 {
		t.Fatalf("ids %v, %v: a folder being created is not a sweep", ids, err)
	}
	// The fallback of renameNoReplace claims the id with an empty folder
	// before its rename: one left an hour ago (it died between the two) and
	// one made a moment ago. And a sweep's own folder an hour old.
	emptyOld := store.Dir(NewID(hourAgo))
	emptyRecent := store.Dir(NewID(time.Now()))
	for _, dir := range []string{emptyOld, emptyRecent} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{emptyOld, store.Dir(doc.SweepID)} {
		if err := os.Chtimes(dir, hourAgo, hourAgo); err != nil {
			t.Fatal(err)
		}
	}
	// A cutoff before the old folder's time keeps it too (prune --older-than).
	if n, err := store.RemoveAbandoned(hourAgo.Add(-time.Minute)); err != nil || n != 0 {
		t.Fatalf("removed %d, %v; want none older than the cutoff", n, err)
	}
	if n, err := store.RemoveAbandoned(time.Now()); err != nil || n != 2 {
		t.Fatalf("removed %d, %v; want the dead hidden one and the old empty one", n, err)
	}
	for dir, want := range map[string]bool{old: false, recent: true, held: true, store.Dir(doc.SweepID): true,
		emptyOld: false, emptyRecent: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(dir), err == nil, want)
		}
	}
}

// TestStoreCreateKilled kills a process creating sweeps at whatever step
// it is in, many times over: every sweep folder it leaves under an id has
// its sweep.json (a listing, a status or a resume finds a whole sweep), and
// whatever else it left is a hidden folder being created.
func TestStoreCreateKilled(t *testing.T) {
	home := t.TempDir()
	store, err := OpenStore(home)
	if err != nil {
		t.Fatal(err)
	}
	created := 0
	for kill := range 30 {
		cmd := helper(t, "create", home)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		for range 1 + kill%5 {
			if !lines.Scan() {
				t.Fatalf("the helper ended: %v", lines.Err())
			}
			created++
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
	ids, err := store.IDs()
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) < created {
		t.Fatalf("%d sweep folders, %d created", len(ids), created)
	}
	for _, id := range ids {
		if _, err := store.Load(id); err != nil {
			t.Errorf("sweep folder %s: %v", id, err)
		}
	}
	entries, err := os.ReadDir(store.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !IsID(e.Name()) && !strings.HasPrefix(e.Name(), creatingPrefix) {
			t.Errorf("the sweeps folder holds %s", e.Name())
		}
	}
}

// TestStoreTrustsNoRecordedPath: a sweep is its folder. A sweeps/ID that is
// a link to a sweep folder elsewhere is no sweep (not listed, loaded,
// locked or resumed, and Remove removes the link only); a sweep.json or
// results.jsonl that is a link or a FIFO is refused without being followed
// or waited on; a sweeps folder that is a link is refused. Nothing outside
// the home changes.
func TestStoreTrustsNoRecordedPath(t *testing.T) {
	store, doc := newSweep(t)
	root := t.TempDir()
	victim := filepath.Join(root, "victim")
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	// The victim is a copy of a real sweep's folder.
	for _, name := range []string{DocumentFile, ResultsFile} {
		b, err := os.ReadFile(filepath.Join(store.Dir(doc.SweepID), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(victim, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := os.ReadDir(victim)
	linked := doc.SweepID[:len(doc.SweepID)-4] + "ffff"
	if err := os.Symlink(victim, store.Dir(linked)); err != nil {
		t.Fatal(err)
	}
	if ids, err := store.IDs(); err != nil || !slices.Equal(ids, []string{doc.SweepID}) {
		t.Errorf("IDs %v, %v; want only %s", ids, err, doc.SweepID)
	}
	if _, err := store.Load(linked); !errors.Is(err, ErrUnknownSweep) {
		t.Errorf("Load of a link: %v", err)
	}
	if _, err := store.Running(linked); !errors.Is(err, ErrUnknownSweep) {
		t.Errorf("Running of a link: %v", err)
	}
	if _, _, err := store.OpenResults(linked); !errors.Is(err, ErrUnknownSweep) {
		t.Errorf("OpenResults of a link: %v", err)
	}
	if err := store.Remove(linked); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(store.Dir(linked)); !os.IsNotExist(err) {
		t.Errorf("the link is still there: %v", err)
	}
	after, _ := os.ReadDir(victim)
	if len(before) != 2 || len(after) != len(before) {
		t.Errorf("the folder outside the home changed: %v, then %v", before, after)
	}

	// A document or results that are a link or a FIFO.
	dir := store.Dir(doc.SweepID)
	os.Remove(filepath.Join(dir, ResultsFile))
	if err := unix.Mkfifo(filepath.Join(dir, ResultsFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.OpenResults(doc.SweepID); err == nil {
		t.Error("OpenResults of a FIFO")
	}
	if _, err := store.Running(doc.SweepID); err == nil {
		t.Error("Running of a FIFO")
	}
	os.Remove(filepath.Join(dir, DocumentFile))
	if err := os.Symlink(filepath.Join(victim, DocumentFile), filepath.Join(dir, DocumentFile)); err != nil {
		t.Fatal(err)
	}
	var de *DocumentError
	if _, err := store.Load(doc.SweepID); !errors.As(err, &de) {
		t.Errorf("Load of a linked sweep.json: %v, want a DocumentError", err)
	}
	for _, id := range []string{"sw-../x", "..", "sw-a/b"} {
		if err := store.Remove(id); !errors.Is(err, ErrUnknownSweep) {
			t.Errorf("Remove(%q): %v", id, err)
		}
	}

	// A sweeps folder that is a link is refused.
	home := filepath.Join(root, "home")
	os.MkdirAll(home, 0o755)
	if err := os.Symlink(victim, filepath.Join(home, "sweeps")); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(home); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("OpenStore of a home whose sweeps folder is a link: %v", err)
	}
}

// TestResultsKeepWhatARunWrites: a results.jsonl is the home's. What is
// kept of a line is what a run writes: its metrics are the report's, in
// the order written, each number as written, and a field no report has
// (a 1 MB array here) is left out; a metric of the wrong type is an error
// naming the line. With the sweep's planned runs known, a line past them
// is an error naming the file and the line.
func TestResultsKeepWhatARunWrites(t *testing.T) {
	written := `{"start_equity":10000,"positions":{"AAA":2},"total_return":0.012345678901234,"sharpe":null,"fills":3}`
	line := func(i int, metrics string) string {
		return fmt.Sprintf(`{"index":%d,"fold":null,"phase":null,"params":{"fast":3},"job_id":"x","status":"passed","failure_kind":null,"metrics":%s,"fingerprint":"a","orders_hash":"b","duration_ms":1}`+"\n", i, metrics)
	}
	big := `[` + strings.Repeat("1,", 500_000) + `1]`
	file := line(0, written) + line(1, `{"sharpe":1,"x":`+big+`,"total_return":2}`)
	rb, err := scanResults(strings.NewReader(file), "results.jsonl", -1)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(rb.Results[0].Metrics); got != written {
		t.Errorf("metrics as written:\n%s\nkept:\n%s", written, got)
	}
	if got := string(rb.Results[1].Metrics); got != `{"sharpe":1,"total_return":2}` {
		t.Errorf("metrics with a field no report has: kept %.200s", got)
	}
	if _, err := scanResults(strings.NewReader(line(0, `{"sharpe":"1"}`)), "results.jsonl", -1); err == nil || !strings.Contains(err.Error(), "line 1: metrics: sharpe") {
		t.Errorf("a metric that is a string: %v", err)
	}
	if _, err := scanResults(strings.NewReader(file+line(2, written)), "results.jsonl", 2); err == nil ||
		!strings.Contains(err.Error(), "results.jsonl line 3: more results than the sweep's 2 planned runs") {
		t.Errorf("a line past the planned runs: %v", err)
	}
}

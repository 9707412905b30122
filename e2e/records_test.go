package e2e

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"stratbench/internal/e2etest"
	"stratbench/job"
)

// openRecord opens a record of job id in the test's home, as CSV text,
// through the one reader every command uses.
func (e *env) openRecord(id string, rec job.Record) io.ReadCloser {
	e.T.Helper()
	store, err := job.OpenStore(e.Home)
	if err != nil {
		e.T.Fatal(err)
	}
	f, err := store.OpenRecord(id, rec)
	if err != nil {
		e.T.Fatal(err)
	}
	return f
}

// TestRecordsApartFromArtifacts: a strategy that writes artifacts named
// equity.csv, trades.csv and orders.csv keeps all three as it wrote them;
// status lists them as its artifacts and stratbench's records apart, in
// records/, whole (issue 37, item 3: the records were moved over them).
func TestRecordsApartFromArtifacts(t *testing.T) {
	e := newEnv(t)
	r := e.Run("--ci", e2etest.Strategy("record_names.py"), "--to", "2026-01-05 01:00:00", "--output", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	rep := e2etest.DecodeReport(t, r.Stdout)
	if rep.Metrics == nil || rep.Metrics.Trades == 0 {
		t.Fatalf("metrics %+v: the strategy should have traded", rep.Metrics)
	}
	dir := filepath.Join(e.Home, "jobs", rep.JobID)
	for _, rec := range job.AllRecords() {
		name := rec.CSVName()
		mine, err := os.ReadFile(filepath.Join(dir, "artifacts", name))
		if err != nil || !strings.HasPrefix(string(mine), "mine,"+string(rec)+"\n") {
			t.Errorf("the strategy's artifact %s: %.80q, %v", name, mine, err)
		}
	}
	st := e.Run("status", rep.JobID, "--output", "json")
	var status struct {
		Artifacts job.Artifacts   `json:"artifacts"`
		Records   job.RecordFiles `json:"records"`
	}
	if err := json.Unmarshal([]byte(st.Stdout), &status); st.Code != 0 || err != nil {
		t.Fatalf("status: exit %d, %v\n%s", st.Code, err, st.Stderr)
	}
	var arts, recs []string
	for _, f := range status.Artifacts.Files {
		arts = append(arts, f.Name)
	}
	for _, f := range status.Records.Files {
		recs = append(recs, f.Name)
	}
	if got := strings.Join(arts, " "); got != "equity.csv orders.csv trades.csv" {
		t.Errorf("status lists the artifacts %q", got)
	}
	if got := strings.Join(recs, " "); got != "equity.csv.gz orders.csv.gz trades.csv.gz" {
		t.Errorf("status lists the records %q", got)
	}
	// The records are stratbench's, whole: one equity row per event, one
	// trade row per trade.
	want := map[job.Record]struct {
		header string
		rows   int
	}{
		job.RecordEquity: {"event,time,equity,cash,symbol,close", rep.Data.Events},
		job.RecordTrades: {"symbol,side,qty,", rep.Metrics.Trades},
		job.RecordOrders: {"record,time,event,order_id,", -1},
	}
	for rec, w := range want {
		f := e.openRecord(rep.JobID, rec)
		text, err := io.ReadAll(f)
		f.Close()
		lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
		if err != nil || !strings.HasPrefix(lines[0], w.header) || w.rows >= 0 && len(lines)-1 != w.rows {
			t.Errorf("the %s record: %d lines, header %q, %v; want %d rows under %q", rec, len(lines), lines[0], err, w.rows, w.header)
		}
	}
	text := e.Run("status", rep.JobID).Stdout
	if !strings.Contains(text, "records      "+filepath.Join(dir, job.RecordsDir)) {
		t.Errorf("status text does not show the records:\n%s", text)
	}
}

// TestRecordsCompact: the bundled example's run (20,160 bars) keeps its
// records in at most a fifth of the bytes of their CSV text, and zcat
// gives that text back.
func TestRecordsCompact(t *testing.T) {
	e := newEnv(t)
	r := e.Run("--ci", "python/example/strategy.py", "--output", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	rep := e2etest.DecodeReport(t, r.Stdout)
	if rep.Data.Events != 20160 {
		t.Fatalf("%d events: not the bundled example's week", rep.Data.Events)
	}
	var disk, text int64
	for _, rec := range job.AllRecords() {
		path := filepath.Join(e.Home, "jobs", rep.JobID, job.RecordsDir, rec.FileName())
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		disk += info.Size()
		f := e.openRecord(rep.JobID, rec)
		n, err := io.Copy(io.Discard, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		text += n
		if zcat, err := exec.LookPath("zcat"); err == nil {
			plain, err := exec.Command(zcat, path).Output()
			if err != nil || int64(len(plain)) != n {
				t.Errorf("zcat %s: %d bytes, %v; want %d", path, len(plain), err, n)
			}
		}
	}
	t.Logf("records: %d bytes on disk for %d bytes of CSV (1/%.2f)", disk, text, float64(text)/float64(disk))
	if disk*5 > text {
		t.Errorf("the records take %d bytes for %d bytes of CSV: over a fifth", disk, text)
	}
}

// TestRecordsOfOlderJobFolders: a job folder of an older version, with its
// records as plain CSV among its artifacts (a finished job) or in
// records/ (a job that had not ended), reads as the same job: its HTML
// report holds the same data as that of the folder as this version wrote
// it.
func TestRecordsOfOlderJobFolders(t *testing.T) {
	e := newEnv(t)
	r := e.Run("--ci", "python/example/strategy.py", "--to", "2026-01-06 00:00:00", "--output", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	id := e2etest.DecodeReport(t, r.Stdout).JobID
	dir := filepath.Join(e.Home, "jobs", id)
	data := func(layout string) string {
		t.Helper()
		out := filepath.Join(e.Tmp, layout+".html")
		if r := e.Run("report", id, "--out", out); r.Code != 0 {
			t.Fatalf("%s: report: exit %d\n%s", layout, r.Code, r.Stderr)
		}
		page, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		_, rest, _ := strings.Cut(string(page), `<script type="application/json" id="data">`)
		d, _, _ := strings.Cut(rest, "</script>")
		if _, note, _ := strings.Cut(string(page), ".csv: "); len(d) < 1000 || note != "" {
			t.Fatalf("%s: the report's data is %d bytes; a note on a record: %.200q", layout, len(d), note)
		}
		return d
	}
	want := data("new")
	// As an older version left it while running: plain CSV in records/.
	texts := map[job.Record][]byte{}
	for _, rec := range job.AllRecords() {
		f := e.openRecord(id, rec)
		b, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		texts[rec] = b
		os.Remove(filepath.Join(dir, job.RecordsDir, rec.FileName()))
		if err := os.WriteFile(filepath.Join(dir, job.RecordsDir, rec.CSVName()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := data("running-old"); got != want {
		t.Error("the report of the older running layout differs")
	}
	// As an older version left it once ended: plain CSV in artifacts/, no
	// records folder.
	if err := os.RemoveAll(filepath.Join(dir, job.RecordsDir)); err != nil {
		t.Fatal(err)
	}
	for rec, b := range texts {
		if err := os.WriteFile(filepath.Join(dir, "artifacts", rec.CSVName()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := data("ended-old"); got != want {
		t.Error("the report of the older ended layout differs")
	}
}

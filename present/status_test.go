package present

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"stratbench/internal/fixtures"
	"stratbench/job"
)

// TestStatusText: status of a recorded real job that saved a chart: the
// report as --ci prints it, then its artifacts with their sizes and the caps.
func TestStatusText(t *testing.T) {
	rec := fixtures.Load(t, "charts")
	var out bytes.Buffer
	if err := WriteStatus(&out, rec.Report, *rec.Artifacts, job.RecordFiles{}, "text"); err != nil {
		t.Fatal(err)
	}
	golden.RequireEqual(t, out.String())
}

// TestStatusTextUnsafeNames: a file name is the strategy's; it reaches the
// terminal as one line without control sequences, and a long listing says
// how many files it leaves out.
func TestStatusTextUnsafeNames(t *testing.T) {
	a := job.Artifacts{Dir: "/home/ana/jobs/x/artifacts", Files: []job.Artifact{{Name: "a\x1b[2J\nb.png", Bytes: 3}}, Unlisted: 12, Bytes: 40}
	text := artifactsText(a)
	want := "job folder   /home/ana/jobs/x\n" +
		"artifacts    /home/ana/jobs/x/artifacts\n" +
		"             13 files · 40 bytes · cap 0 bytes, 0 bytes a file\n" +
		"             ab.png     3 bytes\n" +
		"             … and 12 more files\n"
	if text != want {
		t.Errorf("got\n%q\nwant\n%q", text, want)
	}
}

// TestStatusJSON: status --output json is the report, field for field as
// job.json holds it, plus "artifacts" and "records".
func TestStatusJSON(t *testing.T) {
	rec := fixtures.Load(t, "charts")
	var out bytes.Buffer
	if err := WriteStatus(&out, rec.Report, *rec.Artifacts, job.RecordFiles{}, "json"); err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rec.Report)
	var want map[string]json.RawMessage
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	var arts job.Artifacts
	if err := json.Unmarshal(got["artifacts"], &arts); err != nil || !reflect.DeepEqual(arts, *rec.Artifacts) {
		t.Errorf("artifacts %s (%v), want %+v", got["artifacts"], err, *rec.Artifacts)
	}
	delete(got, "artifacts")
	if _, ok := got["records"]; !ok {
		t.Error("no records")
	}
	delete(got, "records")
	if len(got) != len(want) {
		t.Fatalf("%d report fields, want %d", len(got), len(want))
	}
	for k, v := range want {
		var a, b any
		json.Unmarshal(v, &a)
		json.Unmarshal(got[k], &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("field %s: %s, want %s", k, got[k], v)
		}
	}
}

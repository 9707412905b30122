package workbench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stratbench/internal/fixtures"
)

// TestGoldenArtifacts: the artifacts of a real job that saved a matplotlib
// chart (the recording "charts"), listed over the panes with their sizes,
// the caps and the selected file's path, at both sizes.
func TestGoldenArtifacts(t *testing.T) {
	for _, sz := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			m := newTestModel(t, sz[0], sz[1])
			rec := fixtures.Load(t, "charts")
			live(t, m, "charts", true)
			_, cmd := m.Update(press("a"))
			if cmd == nil || m.artifacts.state != artifactsLoading {
				t.Fatalf("a: command %v, state %v; want the listing to start", cmd != nil, m.artifacts.state)
			}
			if !strings.Contains(screen(m), "listing…") {
				t.Errorf("while listing:\n%s", screen(m))
			}
			// The recorded listing stands for the folder, which lives on
			// the machine that recorded it.
			list := *rec.Artifacts
			list.Dir = strings.ReplaceAll(list.Dir, fixtures.ID("charts"), testJob)
			m.Update(artifactsListedMsg{jobID: testJob, list: list})
			m.Update(press("j"))
			out := m.View().Content
			checkGolden(t, out, sz[0], sz[1])
		})
	}
}

// TestArtifactsOfAStoredJob: a job opened from the jobs list lists its own
// folder through the store; y copies a path, enter without an opener shows
// it; esc closes the list and leaves the job open.
func TestArtifactsOfAStoredJob(t *testing.T) {
	m := newTestModel(t, 120, 40)
	withRecordedJobs(t, m)
	m.Update(press("6"))
	m.Update(press("G"))
	openSelected(t, m)
	id := m.inspected.id
	dir := filepath.Join(m.opts.Store.JobDir(id), "artifacts")
	if err := os.WriteFile(filepath.Join(dir, "chart.html"), []byte("<html></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, cmd := m.Update(press("a"))
	if cmd == nil {
		t.Fatal("a returned no command")
	}
	m.Update(cmd())
	a := m.artifacts
	if a.state != artifactsShown || a.err != nil || a.jobID != id || len(a.list.Files) != 2 || a.list.Files[0].Name != "chart.html" {
		t.Fatalf("listing of %s: %+v", id, a)
	}
	if s := screen(m); !strings.Contains(s, "chart.html") || !strings.Contains(s, "13 bytes") || !strings.Contains(s, "equity.csv") {
		t.Errorf("the list shows:\n%s", s)
	}
	path := filepath.Join(dir, "chart.html")
	if _, cmd := m.Update(press("y")); cmd == nil || m.flash.text != "copied "+path {
		t.Errorf("y: flash %q", m.flash.text)
	}
	m.opts.Opener = ""
	if _, cmd := m.Update(press("enter")); cmd != nil || !strings.Contains(m.flash.text, "the file is "+path) {
		t.Errorf("enter without an opener: flash %q", m.flash.text)
	}
	m.opts.Opener = "my-viewer --new-window"
	if _, cmd := m.Update(press("o")); cmd == nil {
		t.Error("o with an opener returned no command")
	}
	m.Update(press("esc"))
	if m.artifacts.state != artifactsClosed || m.inspected == nil || m.inspected.id != id {
		t.Errorf("esc: overlay %v, inspected %v; want the list closed and the job still open", m.artifacts.state, m.inspected != nil)
	}
}

// TestArtifactsListingOfAnotherJobIsDropped: a listing that arrives after
// the overlay was closed, or for another job, changes nothing.
func TestArtifactsListingOfAnotherJobIsDropped(t *testing.T) {
	m := newTestModel(t, 120, 40)
	live(t, m, "charts", true)
	rec := fixtures.Load(t, "charts")
	m.Update(press("a"))
	m.Update(press("esc"))
	m.Update(artifactsListedMsg{jobID: testJob, list: *rec.Artifacts})
	if m.artifacts.state != artifactsClosed {
		t.Fatal("a late listing reopened the overlay")
	}
	m.Update(press("a"))
	m.Update(artifactsListedMsg{jobID: "20261130-090000.000-0001", list: *rec.Artifacts})
	if m.artifacts.state != artifactsLoading {
		t.Fatal("another job's listing was shown")
	}
}

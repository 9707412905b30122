package sweepview

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"stratbench/sweep"
	"stratbench/themes"
	"stratbench/ui/internal/uitest"
)

// recordedSweeps are the documents of the recorded sweeps, newest first,
// as the store lists them.
func recordedSweeps(t *testing.T) []*sweep.Document {
	t.Helper()
	var docs []*sweep.Document
	for _, name := range []string{"failures", "walkforward", "wide", "random", "constraint", "grid"} {
		docs = append(docs, loadSweep(t, name).doc)
	}
	return docs
}

func newTestPick(t *testing.T, docs []*sweep.Document, w, h int) *pickModel {
	t.Helper()
	m := newPickModel(PickOptions{Sweeps: docs}, themes.Plain(), false, colorprofile.TrueColor)
	m.loc = time.UTC
	m.Update(uitest.Size(w, h))
	return m
}

// TestGoldenPick renders the list of sweeps `stratbench sweep view`
// shows without an id, and the list of none.
func TestGoldenPick(t *testing.T) {
	for _, c := range []struct {
		name string
		docs func(t *testing.T) []*sweep.Document
	}{{"sweeps", recordedSweeps}, {"none", func(*testing.T) []*sweep.Document { return nil }}} {
		for _, sz := range uitest.GoldenSizes {
			t.Run(fmt.Sprintf("%s/%dx%d", c.name, sz[0], sz[1]), func(t *testing.T) {
				m := newTestPick(t, c.docs(t), sz[0], sz[1])
				m.Update(uitest.Press("j"))
				out := m.View().Content
				uitest.CheckGolden(t, out, sz[0], sz[1])
			})
		}
	}
}

// TestPick: enter opens the selected sweep, q and esc choose none, and
// the sweep just left is selected when the list comes back.
func TestPick(t *testing.T) {
	docs := recordedSweeps(t)
	m := newTestPick(t, docs, 120, 40)
	m.Update(uitest.Press("j"))
	m.Update(uitest.Press("j"))
	if _, cmd := m.Update(uitest.Press("enter")); cmd == nil || m.chosen != docs[2].SweepID {
		t.Fatalf("enter chose %q, want %q", m.chosen, docs[2].SweepID)
	} else if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("enter did not end the list")
	}
	for _, k := range []string{"q", "esc"} {
		m = newTestPick(t, docs, 120, 40)
		if _, cmd := m.Update(uitest.Press(k)); cmd == nil || m.chosen != "" {
			t.Fatalf("%s chose %q", k, m.chosen)
		}
	}
	m = newPickModel(PickOptions{Sweeps: docs, Selected: docs[4].SweepID}, themes.Plain(), false, colorprofile.TrueColor)
	m.Update(uitest.Size(120, 40))
	if !strings.Contains(ansi.Strip(m.View().Content), "▸ "+docs[4].SweepID) {
		t.Fatalf("the sweep just left is not selected:\n%s", ansi.Strip(m.View().Content))
	}
}

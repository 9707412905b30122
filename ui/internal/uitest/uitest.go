// Package uitest holds what the tests of the ui programs share: key
// presses as a terminal delivers them, the checks every screen passes, and
// job folders written as a job leaves them.
package uitest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"stratbench/internal/fixtures"
	"stratbench/job"
)

// keys are the named keys tests press, as the terminal delivers them.
var keys = map[string]tea.KeyPressMsg{
	"enter":     {Code: tea.KeyEnter},
	"esc":       {Code: tea.KeyEscape},
	"tab":       {Code: tea.KeyTab},
	"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift},
	"up":        {Code: tea.KeyUp},
	"down":      {Code: tea.KeyDown},
	"left":      {Code: tea.KeyLeft},
	"right":     {Code: tea.KeyRight},
	"pgdown":    {Code: tea.KeyPgDown},
	"pgup":      {Code: tea.KeyPgUp},
	"space":     {Code: tea.KeySpace, Text: " "},
	"ctrl+c":    {Code: 'c', Mod: tea.ModCtrl},
	"ctrl+d":    {Code: 'd', Mod: tea.ModCtrl},
	"ctrl+u":    {Code: 'u', Mod: tea.ModCtrl},
	"backspace": {Code: tea.KeyBackspace},
}

// Press builds a key Press as the terminal would deliver it: a named key
// of keys, or a single character.
func Press(s string) tea.KeyPressMsg {
	if k, ok := keys[s]; ok {
		return k
	}
	r := []rune(s)
	if len(r) != 1 {
		panic("unknown test key " + s)
	}
	return tea.KeyPressMsg{Code: r[0], Text: s}
}

// Size is a terminal resize to w×h.
func Size(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

// GoldenSizes are the sizes every state is checked at: a common wide
// terminal and the smallest supported one.
var GoldenSizes = [][2]int{{120, 40}, {80, 24}}

// CheckScreen asserts that out is exactly h lines of exactly w cells.
func CheckScreen(t *testing.T, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) != h {
		t.Fatalf("%d×%d: got %d lines", w, h, len(lines))
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n != w {
			t.Fatalf("%d×%d: line %d is %d cells wide: %q", w, h, i, n, ansi.Strip(l))
		}
	}
}

// CheckGolden asserts that out is a w×h screen without colour (CheckScreen,
// CheckNoColor) whose text, escape codes stripped, is the test's golden
// file (go test -update rewrites it).
func CheckGolden(t *testing.T, out string, w, h int) {
	t.Helper()
	CheckScreen(t, out, w, h)
	CheckNoColor(t, out)
	golden.RequireEqual(t, ansi.Strip(out))
}

var sgr = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// CheckNoColor asserts that out sets no colour: only attributes such as bold
// and reverse, which NO_COLOR allows.
func CheckNoColor(t *testing.T, out string) {
	t.Helper()
	for _, m := range sgr.FindAllStringSubmatch(out, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			var n int
			fmt.Sscan(p, &n)
			if (n >= 30 && n <= 49) || (n >= 90 && n <= 107) || n == 58 {
				t.Fatalf("colour parameter %d in %q", n, m[0])
			}
		}
	}
	if rest := sgr.ReplaceAllString(out, ""); strings.Contains(rest, "\x1b") {
		t.Fatal("escape sequence other than SGR in the view")
	}
}

// NewStore returns a job store in a fresh folder: the real job.Store,
// which the workbench reads stored jobs through.
func NewStore(t testing.TB) *job.Store {
	t.Helper()
	s, err := job.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// SaveJob writes a job folder in s as a job leaves it: job.json, logs.jsonl
// and, when equity is not nil, artifacts/equity.csv.
func SaveJob(t testing.TB, s *job.Store, r *job.Report, logs []job.LogLine, equity []float64) {
	t.Helper()
	dir := s.JobDir(r.JobID)
	if err := os.MkdirAll(filepath.Join(dir, "artifacts"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "job.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var lb strings.Builder
	for _, l := range logs {
		j, _ := json.Marshal(l)
		lb.Write(j)
		lb.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "logs.jsonl"), []byte(lb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if equity != nil {
		var eb strings.Builder
		eb.WriteString("time,equity,cash\n")
		for i, v := range equity {
			fmt.Fprintf(&eb, "%s,%.2f,%.2f\n", fixtures.T0.Add(time.Duration(i)*time.Hour).Format(time.RFC3339), v, 50000.0)
		}
		if err := os.WriteFile(filepath.Join(dir, "artifacts", "equity.csv"), []byte(eb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

package doclinks

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the repository, from this package's folder.
const repoRoot = "../.."

// readmeMaxLines is how long README.md may be: a page a newcomer reads
// through; the rest belongs in docs/.
const readmeMaxLines = 320

// TestRepositoryLinks: every relative link and anchor of README.md and of
// the pages under docs/ resolves.
func TestRepositoryLinks(t *testing.T) {
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(repoRoot, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("found only %v", files)
	}
	problems, err := Check(repoRoot, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestReadmeLength: README.md stays short enough to read through.
func TestReadmeLength(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail into a page of docs/", n, readmeMaxLines)
	}
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Runtime limits and failures":              "runtime-limits-and-failures",
		"stratbench's own memory and disk":         "stratbenchs-own-memory-and-disk",
		"What the runtime promises (threat model)": "what-the-runtime-promises-threat-model",
		"`--jobs`":                    "--jobs",
		"The `on_data` hook":          "the-on_data-hook",
		"Fills & metrics":             "fills--metrics",
		"**Bold** and [a link](x.md)": "bold-and-a-link",
		"Walk-forward, step by step":  "walk-forward-step-by-step",
		"Déjà vu: 2× faster":          "déjà-vu-2-faster",
		"  Trailing  ":                "trailing",
	} {
		if got := Slug(heading); got != want {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

func TestCodeSpans(t *testing.T) {
	for _, c := range []struct{ in, keep, drop string }{
		{"a `b` c", "a b c", "a  c"},
		{"``a ` b`` c", "a ` b c", " c"},
		{"no `closing", "no `closing", "no `closing"},
		{"`x` and `[l](y.md)`", "x and [l](y.md)", " and "},
	} {
		if got := codeSpans(c.in, true); got != c.keep {
			t.Errorf("codeSpans(%q, keep) = %q, want %q", c.in, got, c.keep)
		}
		if got := codeSpans(c.in, false); got != c.drop {
			t.Errorf("codeSpans(%q, drop) = %q, want %q", c.in, got, c.drop)
		}
	}
}

// TestCheck: what Check reports and what it leaves alone.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", strings.Join([]string{
		"# Title",
		"[ok](docs/a.md) [ok](docs/a.md#a-section) [ok](#title) [ok](docs/)",
		"[ok](#title-1) [ok](docs/a.md#second-1) [ok](docs/a.md#anchor) ![ok](pic.svg)",
		"[external](https://example.com/x.md#nowhere) [mail](mailto:x@example.com)",
		"`[in code](missing.md)`",
		"```",
		"[in a fence](missing.md)",
		"# not a heading",
		"```",
		"[gone](missing.md)",
		"[bad anchor](docs/a.md#nowhere) [bad local](#not-a-heading)",
		"[up](../outside.md)",
		"[ref]: docs/b.md",
		`<a href="docs/a.md#second">html</a>`,
		"# Title",
	}, "\n"))
	write("pic.svg", "<svg/>")
	write("docs/a.md", "## A section\n\n## Second\n\n## Second\n\n<a id=\"anchor\"></a>\n")
	problems, err := Check(dir, []string{"README.md"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Link)
	}
	want := []string{"missing.md", "docs/a.md#nowhere", "#not-a-heading", "../outside.md", "docs/b.md"}
	if !slices.Equal(got, want) {
		t.Errorf("problems %v, want the links %v", problems, want)
	}
}

package main

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

var updateCLI = flag.Bool("update-cli", false, "rewrite docs/cli/, the command line reference, from the command tree")

// cliReference is where the generated command line reference lives.
const cliReference = "docs/cli"

// TestCLIReference: docs/cli/ is cobra's own Markdown (doc.GenMarkdownTree)
// of the command tree newRootCommand builds, so a flag, a command or a help
// text changed without the reference fails here. Regenerate with
//
//	go test -short -run '^TestCLIReference$' . -update-cli
func TestCLIReference(t *testing.T) {
	got := generateCLIReference(t)
	if *updateCLI {
		old, _ := filepath.Glob(filepath.Join(cliReference, "*.md"))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(cliReference, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range got {
			if err := os.WriteFile(filepath.Join(cliReference, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	want := map[string]string{}
	files, err := filepath.Glob(filepath.Join(cliReference, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want[filepath.Base(f)] = string(b)
	}
	var stale []string
	for name, text := range got {
		if w, ok := want[name]; !ok {
			stale = append(stale, name+" is missing")
		} else if w != text {
			stale = append(stale, name+" differs from the command tree")
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			stale = append(stale, name+" names no command")
		}
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		t.Errorf("%s/ is stale: %s; regenerate it: go test -short -run '^TestCLIReference$' . -update-cli",
			cliReference, strings.Join(stale, "; "))
	}
}

// generateCLIReference returns cobra's Markdown pages of the command tree,
// by file name. The tree is main's, with the `completion` command and the
// --version flag cobra adds when it executes; hidden commands (ray-shard)
// are left out.
func generateCLIReference(t *testing.T) map[string]string {
	t.Helper()
	root := newRootCommand()
	root.InitDefaultCompletionCmd()
	root.InitDefaultVersionFlag()
	var stamp func(*cobra.Command)
	stamp = func(c *cobra.Command) {
		c.DisableAutoGenTag = true // no date: the pages change only with the tree
		for _, sub := range c.Commands() {
			stamp(sub)
		}
	}
	stamp(root)
	dir := t.TempDir()
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		pages[e.Name()] = string(b)
	}
	return pages
}

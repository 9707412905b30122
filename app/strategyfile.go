package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxListedEntries bounds the folder entries read to suggest a strategy
// file: a STRATEGY mistyped in a folder of a million files is answered
// from its first entries.
const maxListedEntries = 10_000

// pyFilesIn returns the names of the .py files in dir (regular files or
// links to them), sorted; none when dir cannot be read.
func pyFilesIn(dir string) []string {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	entries, _ := f.ReadDir(maxListedEntries)
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".py") || strings.HasPrefix(name, ".") {
			continue
		}
		if info, err := os.Stat(filepath.Join(dir, name)); err == nil && info.Mode().IsRegular() {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// nearestPy returns the path of the .py file in path's folder whose name is
// nearest to path's (by edit distance, ignoring case; the first by name of
// equals), or "" when the folder has none.
func nearestPy(path string) string {
	dir, base := filepath.Dir(path), strings.ToLower(filepath.Base(path))
	best, bestD := "", 0
	for _, name := range pyFilesIn(dir) {
		if name == filepath.Base(path) {
			continue
		}
		d := distance(base, strings.ToLower(name))
		if best == "" || d < bestD {
			best, bestD = name, d
		}
	}
	if best == "" {
		return ""
	}
	return filepath.Join(dir, best)
}

// noStrategyFile is the error for a STRATEGY that cannot be read (err, from
// os.Stat): "no such file" with the nearest .py file of its folder.
func noStrategyFile(path string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("strategy: %w", err)
	}
	msg := fmt.Sprintf("strategy %s: no such file", path)
	if near := nearestPy(path); near != "" {
		msg += fmt.Sprintf("; did you mean %s?", near)
	}
	return errors.New(msg)
}

// missingCIStrategy is the error of --ci without a STRATEGY: it names the
// .py files of dir, the current folder, that it could have been.
func missingCIStrategy(dir string) error {
	msg := "--ci runs the STRATEGY it is given, and none was: stratbench --ci STRATEGY.py"
	if files := pyFilesIn(dir); len(files) > 0 {
		shown := files[:min(len(files), 5)]
		msg = "--ci runs the STRATEGY it is given, and none was: stratbench --ci " + shown[0]
		msg += " (the .py files here: " + strings.Join(shown, ", ")
		if len(files) > len(shown) {
			msg += fmt.Sprintf(" and %d more", len(files)-len(shown))
		}
		msg += ")"
	}
	return errors.New(msg + "; only the workbench, without --ci, falls back to the bundled example")
}

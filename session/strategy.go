package session

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"stratbench/internal/editdist"
	"stratbench/python"
)

// Finding the strategy file: the one a command line names, the one it
// falls back to, the nearest one to a name mistyped. What a STRATEGY
// argument may be (a .py file, not a command) is app's to say.

// DefaultStrategy is the strategy of a command line that names none:
// ./strategy.py, or the bundled example written to the workspace folder
// of the home (home says where; the example is kept across runs, so
// edits survive). It returns the path and the workspace folder, if used.
func DefaultStrategy(home func() (string, error)) (path, workspace string, err error) {
	if _, err := os.Stat("strategy.py"); err == nil {
		return "strategy.py", "", nil
	}
	h, err := home()
	if err != nil {
		return "", "", err
	}
	workspace = filepath.Join(h, "workspace")
	path = filepath.Join(workspace, "strategy.py")
	if _, err := os.Stat(path); err == nil {
		return path, workspace, nil
	}
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		return "", "", fmt.Errorf("write the example strategy: %w", err)
	}
	if err := os.WriteFile(path, python.ExampleStrategy(), 0o644); err != nil {
		return "", "", fmt.Errorf("write the example strategy: %w", err)
	}
	return path, workspace, nil
}

// OfferExample asks, in a folder that is empty, whether to write the
// bundled example there as strategy.py, and does when the answer is yes
// (or empty). It returns the path written, or "" when it asked nothing or
// the answer was no.
func OfferExample(dir string, in io.Reader, out io.Writer) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) > 0 {
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil
	}
	fmt.Fprintf(out, "No strategy here. Write the example strategy to %s? [Y/n] ", filepath.Join(abs, "strategy.py"))
	answer, _ := bufio.NewReader(in).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "", "y", "yes":
	default:
		return "", nil
	}
	path := filepath.Join(dir, "strategy.py")
	if err := os.WriteFile(path, python.ExampleStrategy(), 0o644); err != nil {
		return "", fmt.Errorf("write the example strategy: %w", err)
	}
	return path, nil
}

// AskMissing answers a STRATEGY that cannot be read (statErr): at a
// terminal (interactive) it says there is no such file and asks whether
// to open the nearest .py file of its folder instead, to wait for the file
// to be created, or to quit, and returns the path to open; elsewhere, and
// on quit, the error is NoStrategyFile's.
func AskMissing(path string, statErr error, interactive bool, in io.Reader, out io.Writer) (string, error) {
	refusal := NoStrategyFile(path, statErr)
	if !errors.Is(statErr, fs.ErrNotExist) || !interactive {
		return "", refusal
	}
	near := nearestPy(path)
	if near != "" {
		fmt.Fprintf(out, "No strategy %s here. Open %s instead [o], create %s and wait for its first save [c], or quit [q]? [O/c/q] ",
			path, near, path)
	} else {
		fmt.Fprintf(out, "No strategy %s here. Create it and wait for its first save [c], or quit [q]? [c/Q] ", path)
	}
	answer, _ := bufio.NewReader(in).ReadString('\n')
	switch a := strings.ToLower(strings.TrimSpace(answer)); {
	case near != "" && (a == "" || a == "o" || a == "open" || a == "y" || a == "yes"):
		return near, nil
	case a == "c" || a == "create":
		return path, nil
	}
	return "", refusal
}

// NoStrategyFile is the error for a STRATEGY that cannot be read (err,
// from os.Stat): "no such file" with the nearest .py file of its folder.
func NoStrategyFile(path string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("strategy: %w", err)
	}
	msg := fmt.Sprintf("strategy %s: no such file", path)
	if near := nearestPy(path); near != "" {
		msg += fmt.Sprintf("; did you mean %s?", near)
	}
	return errors.New(msg)
}

// maxListedEntries bounds the folder entries read to suggest a strategy
// file: a STRATEGY mistyped in a folder of a million files is answered
// from its first entries.
const maxListedEntries = 10_000

// PyFiles returns the names of the .py files in dir (regular files or
// links to them), sorted; none when dir cannot be read.
func PyFiles(dir string) []string {
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
	for _, name := range PyFiles(dir) {
		if name == filepath.Base(path) {
			continue
		}
		d := editdist.Levenshtein(base, strings.ToLower(name))
		if best == "" || d < bestD {
			best, bestD = name, d
		}
	}
	if best == "" {
		return ""
	}
	return filepath.Join(dir, best)
}

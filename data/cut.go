package data

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Cut copies of data files, for `stratbench check` (docs/robustness.md):
// a replay whose data ends at a time shows a strategy that reads its data
// files itself copies of them that end there too, so that a decision that
// used a later bar changes.

// CutFile is a data file and its cut copy.
type CutFile struct {
	// Path is the data file as listed (a folder's files one by one).
	Path string
	// Copy is its copy holding only its bars up to the cut.
	Copy string
}

// CutCopies writes into dir (which must exist) a copy of each data file of
// paths, folders listed as Open lists them, that holds only the bars whose
// time is at or before to, for each file it knows how to cut:
//
//   - a CSV or JSON Lines file keeps its bytes: the header, blank lines
//     and every line whose timestamp is at or before to, in their order;
//     a line that does not parse is left out;
//   - a Parquet file is written again by Convert, over the window that
//     ends at to: the standard columns only, in replay order.
//
// Feather files and freqtrade's JSON are not cut: they are returned in
// notCut. The copies are named by their order in the list (dir/0.csv,
// dir/1.parquet …). The errors are listing's (Open's), a copy's writing,
// and ctx's.
func CutCopies(ctx context.Context, paths []string, timeframe string, to time.Time, dir string) (cut []CutFile, notCut []string, err error) {
	files, err := listFiles(paths, timeframe)
	if err != nil {
		return nil, nil, err
	}
	for i, e := range files {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		kind, err := cutKind(e.path)
		if err != nil {
			return nil, nil, err
		}
		out := filepath.Join(dir, strconv.Itoa(i)+kind)
		switch kind {
		case ".parquet":
			_, err = Convert(ctx, []string{e.path}, Options{Window: Window{To: to}}, out)
			var de *Error
			if errors.As(err, &de) && strings.Contains(de.Msg, "no bars") {
				// None of its bars is before the cut: Convert writes no
				// file without bars, and the file is left as it is.
				notCut = append(notCut, e.path)
				continue
			}
		case ".csv", ".jsonl":
			err = cutLines(ctx, e.path, out, kind == ".jsonl", clampUnixNano(to))
		default:
			notCut = append(notCut, e.path)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		cut = append(cut, CutFile{Path: e.path, Copy: out})
	}
	return cut, notCut, nil
}

// cutKind is the extension of a file's cut copy by its format (as
// openSource tells it), "" for a format that is not cut.
func cutKind(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", pathError(path, err)
	}
	defer f.Close()
	head := make([]byte, 512)
	n, err := f.Read(head)
	if err != nil && err != io.EOF {
		return "", pathError(path, err)
	}
	head = head[:n]
	switch ext := strings.ToLower(extOf(path)); {
	case ext == ".parquet" || ext != ".csv" && strings.HasPrefix(string(head), "PAR1"):
		return ".parquet", nil
	case ext == ".feather" || ext == ".arrow" || ext != ".csv" && (strings.HasPrefix(string(head), arrowMagic) || strings.HasPrefix(string(head), "FEA1")),
		ext == ".gz" || ext != ".csv" && strings.HasPrefix(string(head), "\x1f\x8b"),
		ext != ".csv" && ext != ".jsonl" && ext != ".ndjson" && jsonArray(head):
		return "", nil
	case formatFor(path, head):
		return ".jsonl", nil
	}
	return ".csv", nil
}

// cutLines copies the lines of a CSV (its header first) or JSON Lines file
// whose timestamp is at or before to.
func cutLines(ctx context.Context, path, out string, jsonl bool, to int64) error {
	in, err := os.Open(path)
	if err != nil {
		return pathError(path, err)
	}
	defer in.Close()
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	lr := newLineReader(path, in, 0, maxLineBytes)
	lf := &lineFormat{jsonl: jsonl}
	if !jsonl {
		if err := lf.readHeader(ctx, lr); err != nil {
			return err
		}
		// The header's line, as it was (lines before it were blank).
		if _, err := in.Seek(0, io.SeekStart); err != nil {
			return err
		}
		hr := newLineReader(path, in, 0, maxLineBytes)
		for range lr.line {
			line, err := hr.next()
			if err != nil {
				return err
			}
			w.Write(line)
			w.WriteByte('\n')
		}
		lr = hr
	}
	var raw [numColumns][]byte
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		keep := blank(line)
		if !keep && lf.read(path, lr.line, line, &raw) == nil {
			t, err := parseTimestamp(raw[colTimestamp])
			keep = err == nil && t <= to
		}
		if keep {
			w.Write(line)
			w.WriteByte('\n')
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

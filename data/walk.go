package data

import (
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Folders are listed here: the files directly in a folder, hive partitions
// (key=value folders, walked recursively), freqtrade's data folders (one
// timeframe chosen) and Nautilus catalogs (their bar folders). Everything
// found in a folder is input: the walk is bounded, never leaves the folder
// it was given through a symbolic link, and refuses what is not a regular
// file.

// Bounds of a folder's walk.
const (
	maxWalkDepth   = 16      // partition folders below the folder given
	maxDataFiles   = 10_000  // data files in all: a set holds each open while it lives
	maxWalkEntries = 200_000 // folder entries looked at, in all
)

// fileEntry is a data file of a set, and what its path says about it.
type fileEntry struct {
	path string // as opened
	// name is how the digest names the file: its base name when it was
	// given or found directly in a folder given, its path below that
	// folder when it was found deeper.
	name string
	// symbol is the symbol its path gives: a symbol=VALUE partition folder
	// it lies in (VALUE URL-decoded), "" when none does.
	symbol string
	// partitioned: the file lies in a partition folder (key=value), where
	// its name is no symbol (part-0.parquet).
	partitioned bool
	// ft is its name as freqtrade's, nil when it is no freqtrade name.
	ft *ftName
}

// lister lists the data files of the paths given.
type lister struct {
	timeframe string // Options.Timeframe
	files     []fileEntry
	entries   int  // folder entries looked at
	ftSeen    bool // a freqtrade-named file was found
}

// listFiles expands folders into their data files, sorted by name within
// each folder, and refuses a file given twice.
func listFiles(paths []string, timeframe string) ([]fileEntry, error) {
	l := &lister{timeframe: timeframe}
	for _, p := range paths {
		if err := l.add(p); err != nil {
			return nil, err
		}
	}
	if timeframe != "" && !l.ftSeen {
		return nil, &OptionError{Option: OptionTimeframe,
			Msg: "a timeframe chooses among freqtrade's files (PAIR-TIMEFRAME.feather, .parquet, .json, .json.gz), and " +
				strings.Join(paths, ", ") + " holds none"}
	}
	infos := make([]fs.FileInfo, len(l.files))
	for i, f := range l.files {
		info, err := os.Stat(f.path)
		if err != nil {
			return nil, pathError(f.path, err)
		}
		for j := range i {
			if os.SameFile(info, infos[j]) {
				return nil, &Error{File: f.path, Msg: "given twice (also as " + l.files[j].path + ")"}
			}
		}
		infos[i] = info
	}
	return l.files, nil
}

// add lists one path given.
func (l *lister) add(p string) error {
	info, err := os.Stat(p)
	if err != nil {
		return pathError(p, err)
	}
	sym, partitioned, err := pathSymbol(p, info.IsDir())
	if err != nil {
		return err
	}
	switch {
	case info.Mode().IsRegular():
		e := fileEntry{path: p, name: filepath.Base(p), symbol: sym, partitioned: partitioned, ft: parseFTName(filepath.Base(p))}
		if e.ft != nil {
			l.ftSeen = true
			if l.timeframe != "" && e.ft.timeframe != l.timeframe {
				return &OptionError{Option: OptionTimeframe, Msg: p + " holds " + e.ft.timeframe + " candles, not " + l.timeframe}
			}
		}
		return l.push(e)
	case info.IsDir():
		n := len(l.files)
		found, err := l.folder(p, sym, partitioned)
		if err != nil {
			return err
		}
		if len(l.files) == n {
			return &Error{File: p, Msg: found.nothing()}
		}
		return nil
	}
	return &Error{File: p, Msg: notRegular(info)}
}

func (l *lister) push(e fileEntry) error {
	if len(l.files) == maxDataFiles {
		return &Error{File: e.path, Msg: "more than " + strconv.Itoa(maxDataFiles) + " data files: give fewer, or larger ones (stratbench data convert merges files into one)"}
	}
	l.files = append(l.files, e)
	return nil
}

// seen is what a folder's walk found besides data files, for the message
// when it found none.
type seen struct {
	others  []string // folders that are no partitions
	skipped []string // freqtrade files of candle types a folder leaves out
}

func (s *seen) nothing() string {
	msg := "no data files in the folder (" + strings.Join(dataExts, ", ") + ", .json.gz)"
	if len(s.others) > 0 {
		msg += "; it holds " + listSome(s.others) + ", which " + plural(len(s.others), "is no partition folder", "are no partition folders") +
			" (key=value, as pyarrow, pandas, polars and duckdb write them)"
	}
	if len(s.skipped) > 0 {
		msg += "; freqtrade's " + listSome(s.skipped) + " (mark, index, premium index or funding rate candles) are only read when given as files"
	}
	return msg
}

// listSome lists names, at most five of them.
func listSome(names []string) string {
	if len(names) > 5 {
		return strings.Join(names[:5], ", ") + " and " + strconv.Itoa(len(names)-5) + " more"
	}
	return strings.Join(names, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// folder lists a folder given: a Nautilus catalog's bar folders, or the
// data files in it and in its partition folders.
func (l *lister) folder(root, sym string, partitioned bool) (*seen, error) {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, pathError(root, err)
	}
	w := &walker{l: l, root: root, real: real, seen: &seen{}}
	if bars := nautilusBars(root); bars != "" {
		return w.seen, w.nautilus(bars)
	}
	return w.seen, w.walk(root, 0, sym, partitioned)
}

// walker walks one folder given.
type walker struct {
	l    *lister
	root string // as given
	real string // its real path, symbolic links resolved
	seen *seen
}

// nautilusBars returns the folder of the bar folders of a Nautilus
// catalog (CATALOG/data/bar) when root is a catalog or that folder, "" when
// it is neither.
func nautilusBars(root string) string {
	if isDir(filepath.Join(root, "data", "bar")) {
		return filepath.Join(root, "data", "bar")
	}
	if abs, err := filepath.Abs(root); err == nil && filepath.Base(abs) == "bar" && filepath.Base(filepath.Dir(abs)) == "data" {
		return root
	}
	return ""
}

func isDir(p string) bool {
	info, err := os.Lstat(p)
	return err == nil && info.IsDir()
}

// nautilus lists the Parquet files of each bar type's folder of a
// catalog's bar folder.
func (w *walker) nautilus(bars string) error {
	dirs, err := w.readDir(bars)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if !d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			continue
		}
		dir := filepath.Join(bars, d.Name())
		files, err := w.readDir(dir)
		if err != nil {
			return err
		}
		for _, f := range files {
			name := f.Name()
			if strings.HasPrefix(name, ".") || strings.ToLower(extOf(name)) != ".parquet" {
				continue
			}
			path := filepath.Join(dir, name)
			if err := w.checkFile(path, f); err != nil {
				return err
			}
			if err := w.l.push(fileEntry{path: path, name: w.rel(path)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// walk lists the data files of dir, depth partition folders below the
// folder given, and walks its partition folders. sym is the symbol of a
// symbol=VALUE folder dir is in; partitioned, whether dir is a partition
// folder.
func (w *walker) walk(dir string, depth int, sym string, partitioned bool) error {
	list, err := w.readDir(dir)
	if err != nil {
		return err
	}
	var files []fileEntry
	for _, de := range list {
		name := de.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		if de.IsDir() {
			key, value, isPart := hivePart(name)
			if !isPart {
				w.seen.others = append(w.seen.others, w.rel(path)+"/")
				continue
			}
			if depth+1 > maxWalkDepth {
				return &Error{File: path, Msg: "partition folders nested deeper than " + strconv.Itoa(maxWalkDepth)}
			}
			sub := sym
			if strings.EqualFold(key, "symbol") {
				if sym != "" {
					return &Error{File: path, Msg: "a symbol partition inside another (symbol=" + sym + ")"}
				}
				if sub, err = partitionSymbol(path, value); err != nil {
					return err
				}
			}
			if err := w.walk(path, depth+1, sub, true); err != nil {
				return err
			}
			continue
		}
		if !isDataName(name) {
			continue
		}
		if err := w.checkFile(path, de); err != nil {
			return err
		}
		files = append(files, fileEntry{path: path, name: w.rel(path), symbol: sym, partitioned: partitioned, ft: parseFTName(name)})
	}
	files, err = w.chooseTimeframe(dir, files)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := w.l.push(f); err != nil {
			return err
		}
	}
	return nil
}

// chooseTimeframe keeps, of a folder's freqtrade files, those of the
// pairs' trades (spot or futures candles) and of one timeframe: the only
// one, or the one asked for.
func (w *walker) chooseTimeframe(dir string, files []fileEntry) ([]fileEntry, error) {
	var timeframes []string
	kept := files[:0]
	for _, f := range files {
		if f.ft == nil {
			kept = append(kept, f)
			continue
		}
		w.l.ftSeen = true
		if !f.ft.tradeCandles() {
			w.seen.skipped = append(w.seen.skipped, filepath.Base(f.path))
			continue
		}
		if !slices.Contains(timeframes, f.ft.timeframe) {
			timeframes = append(timeframes, f.ft.timeframe)
		}
		kept = append(kept, f)
	}
	if len(timeframes) <= 1 && w.l.timeframe == "" {
		return kept, nil
	}
	if w.l.timeframe == "" {
		slices.SortFunc(timeframes, compareTimeframes)
		return nil, &OptionError{Option: OptionTimeframe,
			Msg: dir + " holds candles of " + strconv.Itoa(len(timeframes)) + " timeframes (" + strings.Join(timeframes, ", ") + "): choose one"}
	}
	if len(timeframes) > 0 && !slices.Contains(timeframes, w.l.timeframe) {
		slices.SortFunc(timeframes, compareTimeframes)
		return nil, &OptionError{Option: OptionTimeframe,
			Msg: dir + " holds no " + w.l.timeframe + " candles (it holds " + strings.Join(timeframes, ", ") + ")"}
	}
	out := kept[:0]
	for _, f := range kept {
		if f.ft == nil || f.ft.timeframe == w.l.timeframe {
			out = append(out, f)
		}
	}
	return out, nil
}

// compareTimeframes orders timeframes by length of time where their units
// are known (1m before 5m before 1h), by text otherwise.
func compareTimeframes(a, b string) int {
	da, db := timeframeSeconds(a), timeframeSeconds(b)
	if da > 0 && db > 0 && da != db {
		return int(min(max(da-db, -1), 1))
	}
	return strings.Compare(a, b)
}

// timeframeSeconds is the length of a freqtrade timeframe, 0 when unknown.
func timeframeSeconds(tf string) int64 {
	i := 0
	for i < len(tf) && tf[i] >= '0' && tf[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(tf[:i], 10, 64)
	if err != nil || n <= 0 || n > 1<<20 {
		return 0
	}
	unit := map[string]int64{"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "M": 30 * 86400, "y": 365 * 86400}[tf[i:]]
	return n * unit
}

// isDataName reports whether a folder's listing takes a file of this name.
func isDataName(name string) bool {
	lower := strings.ToLower(name)
	return slices.Contains(dataExts, extOf(lower)) || strings.HasSuffix(lower, ".feather") || strings.HasSuffix(lower, ".json.gz")
}

// checkLink refuses a symbolic link that leads out of the folder given.
func (w *walker) checkLink(path string) error {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return &Error{File: path, Msg: "a symbolic link that leads nowhere", Err: err}
	}
	if rel, err := filepath.Rel(w.real, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		if abs, err := filepath.Abs(target); err == nil {
			target = abs
		}
		return &Error{File: path, Msg: "a symbolic link out of the folder (to " + target + "): not followed; give the file itself"}
	}
	return nil
}

// checkFile refuses a data file that is not a regular file (a FIFO would
// block the read, a device never end it).
func (w *walker) checkFile(path string, de fs.DirEntry) error {
	if de.Type()&fs.ModeSymlink != 0 {
		if err := w.checkLink(path); err != nil {
			return err
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		return pathError(path, err)
	}
	if !info.Mode().IsRegular() {
		msg := notRegular(info)
		if msg == "" {
			msg = "is a folder, not a data file"
		}
		return &Error{File: path, Msg: msg}
	}
	return nil
}

// rel names path below the folder given.
func (w *walker) rel(path string) string {
	if r, err := filepath.Rel(w.root, path); err == nil {
		return filepath.ToSlash(r)
	}
	return filepath.Base(path)
}

// readDir reads a folder's entries, sorted by name, within the walk's
// bound on the entries looked at.
func (w *walker) readDir(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, pathError(dir, err)
	}
	defer f.Close()
	var list []fs.DirEntry
	for {
		batch, err := f.ReadDir(1024)
		list = append(list, batch...)
		w.l.entries += len(batch)
		if w.l.entries > maxWalkEntries {
			return nil, &Error{File: w.root, Msg: "more than " + strconv.Itoa(maxWalkEntries) + " files and folders to look at: give a folder of fewer"}
		}
		if err == io.EOF || len(batch) == 0 {
			break
		}
		if err != nil {
			return nil, pathError(dir, err)
		}
	}
	slices.SortFunc(list, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return list, nil
}

// hivePart splits a folder name of a hive partition, key=value, value as
// written (URL-encoded).
func hivePart(name string) (key, value string, ok bool) {
	i := strings.IndexByte(name, '=')
	if i <= 0 {
		return "", "", false
	}
	key = name[:i]
	for _, r := range key {
		if !(r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "", "", false
		}
	}
	return key, name[i+1:], true
}

// hiveNull is the value the writers give a partition of null values.
const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// partitionSymbol decodes the value of a symbol=VALUE folder: pyarrow,
// pandas, polars and duckdb percent-encode what a path cannot hold
// (BTC/USDT is symbol=BTC%2FUSDT).
func partitionSymbol(path, value string) (string, error) {
	if value == hiveNull {
		return "", &Error{File: path, Msg: "the partition of rows without a symbol (null)"}
	}
	sym, err := url.PathUnescape(value)
	if err != nil {
		return "", &Error{File: path, Msg: "the symbol is not percent-encoded as the writers encode it: " + strconv.Quote(value)}
	}
	if msg := symbolProblem([]byte(sym)); msg != "" {
		return "", &Error{File: path, Column: "symbol", Msg: "the partition's symbol is " + msg}
	}
	return sym, nil
}

// pathSymbol returns the symbol a path given says, and whether it lies in
// a partition folder: the nearest symbol=VALUE among the partition folders
// (key=value) it is in, counting a folder's own name; a folder that is no
// partition ends the search (/home/symbol=x/project/bars.csv says nothing).
func pathSymbol(p string, isDir bool) (string, bool, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", false, pathError(p, err)
	}
	dir := abs
	if !isDir {
		dir = filepath.Dir(abs)
	}
	partitioned := false
	for {
		key, value, ok := hivePart(filepath.Base(dir))
		if !ok {
			return "", partitioned, nil
		}
		partitioned = true
		if strings.EqualFold(key, "symbol") {
			sym, err := partitionSymbol(dir, value)
			return sym, true, err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", partitioned, nil
		}
		dir = parent
	}
}

// OptionTimeframe is the option of OptionError about Options.Timeframe.
const OptionTimeframe = "Timeframe"

// OptionError is a problem with an option of Open rather than with the
// data: Option names the field of Options (OptionTimeframe), Msg says what
// is wrong without naming the option (a command names its flag). It is
// bad usage (exit code 2).
type OptionError struct {
	Option string
	Msg    string
}

func (e *OptionError) Error() string { return "read bars: " + e.Msg }

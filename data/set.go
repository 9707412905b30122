package data

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultBudget is the memory a set may hold decoded bars in when Options
// leaves Budget zero: 64 MiB, about 1.29 million bars.
const DefaultBudget = 64 << 20

// Options say which bars of the files a set replays and how much memory it
// may keep them in.
type Options struct {
	// Window restricts the set to the bars inside it.
	Window Window
	// Budget bounds the memory of the bars a set decodes once and keeps
	// (52 bytes a bar, and 8 more for each while the set is being built).
	// Data that fits is decoded in Open, checked whole, and replayed from
	// memory by every stream; data that does not is streamed from the
	// files by each stream. Zero means DefaultBudget; a negative budget
	// streams everything.
	Budget int64
	// StreamBudget bounds the memory a replay of data that streams holds
	// in its files' streams at once (see spill.go); zero means
	// DefaultStreamBudget. A Parquet file whose stream alone would need
	// more is refused.
	StreamBudget int64
	// SpillBudget bounds the disk a spill of the streams takes in the
	// temporary folder (see spill.go): data whose spill would take more is
	// a data failure (*Error) naming it and the budget. Zero means
	// DefaultSpillBudget.
	SpillBudget int64
	// Timeframe chooses which of freqtrade's files of several timeframes
	// (BTC_USDT-1m.feather, BTC_USDT-5m.feather) a folder stands for: "1m",
	// "5m", "1h"... It is needed when a folder holds several, and refused
	// when no file is named as freqtrade names them (an *OptionError).
	Timeframe string

	// sort accepts files whose symbols' rows go back in time: each stretch
	// in time order is a run of its own, and the merge sorts them (two
	// bars of a symbol at one time are still an error). Convert sets it;
	// a run never does: it does not sort rows silently.
	sort bool
	// scan tunes how line files are read (tests).
	scan scanTuning
}

// fileFormat is a data file's format.
type fileFormat uint8

const (
	formatCSV fileFormat = iota
	formatJSONL
	formatParquet
	formatFeather // Arrow IPC files: Feather V2 (feather.go)
	formatFTJSON  // freqtrade's JSON: an array of [ms, o, h, l, c, v] (ftjson.go)
)

// rowFormat reports whether f numbers rows rather than lines.
func (f fileFormat) rowFormat() bool { return f != formatCSV && f != formatJSONL }

// Set is bar data opened for replay: the files' bars inside the window,
// merged into one stream ordered by time. Bars of several symbols with the
// same timestamp replay in symbol table order, which is the symbols' names
// in byte order: the order does not depend on how the rows are laid out in
// files, so any layout of the same rows replays the same way.
//
// A set holds its files open until Close, so a file replaced while it
// lives (an editor's atomic save) is not seen; a file changed in place is
// detected as it streams. A Set is safe for concurrent use: several streams
// (the runs of a sweep) may replay it at once.
type Set struct {
	paths     []string
	timeframe string
	sort      bool // Options.sort
	openedAt  time.Time
	info      Info
	window    Window
	win       span
	srcs      []*source
	symbols   []string
	symIndex  map[string]int32
	resident  bool
	bars      Bars // resident: every bar in the window, in replay order
	// memDigest identifies the bars of a set made in memory (the sample).
	memDigest *[sha256.Size]byte
	// seed keys the hashes of the stretches of files a stream checks
	// what it reads against (see pqSpan, lineMark).
	seed maphash.Seed
	// indexLeft is what is left of the index budget (see charge).
	indexLeft    int64
	streamBudget int64
	spillBudget  int64

	scan scanTuning // Options.scan

	// open holds buffers Open reuses from file to file; nil after Open.
	open *openScratch

	// Many streams are spilled by the first stream (spill.go).
	spillMu  sync.Mutex
	spilled  *spill
	spillErr error
}

// source is one data file of a set.
type source struct {
	set     *Set
	idx     int32 // in set.srcs
	path    string
	entry   fileEntry // what the listing found about it
	format  fileFormat
	fh      *os.File
	size    int64
	modTime time.Time

	local []string // symbols in order of first appearance in the file
	toSet []int32  // local symbol index -> set symbol index
	// Bars in the window, the times of the first and last of them, and
	// the times of the first and last bar the scan saw in the file.
	events           int64
	first, last      int64
	seenMin, seenMax int64
	digestMu         sync.Mutex // guards digest and digestDone once the set is open
	digest           [sha256.Size]byte
	digestDone       bool
	dec              *block // resident: the bars in the window, in file order
	decRuns          []int  // resident: where each run starts in dec
	lines            *lineFile
	pq               *pqFile
	tbl              table      // Parquet (pq), Feather, freqtrade's JSON
	runs             []tableRun // a streamed table's runs
	// timeColumn names the time column when the file's layout gives it
	// another name than timestamp (date, ts_event).
	timeColumn string
}

// columnName is the name of bar column c in src.
func (src *source) columnName(c int) string {
	if c == colTimestamp && src.timeColumn != "" {
		return src.timeColumn
	}
	return columnNames[c]
}

// Open opens bar data for replay. Each path is a data file (CSV, JSON
// Lines or Parquet) or a folder, which stands for every data file directly
// in it (.csv, .jsonl, .ndjson, .json, .parquet; hidden files and other
// names are left out). Open reads what a replay needs before it starts:
// the symbol table, the number of bars in the window and their first and
// last time, and checks the data (see the package documentation for what
// is checked when). Every error but ctx's is bad input (exit code 2); a
// problem with a path or its data is an *Error naming the file, and the
// line or row and the column where there is one.
func Open(ctx context.Context, paths []string, opts Options) (*Set, error) {
	if len(paths) == 0 {
		return nil, errors.New("read bars: no data given")
	}
	budget := opts.Budget
	if budget == 0 {
		budget = DefaultBudget
	}
	s := &Set{paths: slices.Clone(paths), timeframe: opts.Timeframe, sort: opts.sort, scan: opts.scan, openedAt: time.Now(), window: opts.Window,
		win: opts.Window.bounds(), seed: maphash.MakeSeed(), indexLeft: indexBudget, streamBudget: opts.StreamBudget}
	if s.spillBudget = opts.SpillBudget; s.spillBudget <= 0 {
		s.spillBudget = DefaultSpillBudget
	}
	if s.streamBudget <= 0 {
		s.streamBudget = DefaultStreamBudget
	}
	s.info.Source = strings.Join(paths, ", ")
	files, err := listFiles(paths, opts.Timeframe)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		s.closeScratch()
		if !ok {
			s.Close()
		}
	}()
	for _, f := range files {
		src, err := s.openSource(f)
		if err != nil {
			return nil, err
		}
		src.idx = int32(len(s.srcs))
		s.srcs = append(s.srcs, src)
	}
	// Decode what fits the budget, in the order given; index the rest.
	left := max(budget, 0)
	for _, src := range s.srcs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var err error
		switch {
		case src.tbl == nil:
			err = src.scanLines(ctx, &left)
		case src.tbl.usedRows() < 0: // known once read: decoded while it fits
			err = src.scanTable(ctx, left > 0, &left)
		default:
			need := src.tbl.usedRows() * (barBytes + 8)
			decode := need <= left
			if decode {
				left -= need
			}
			err = src.scanTable(ctx, decode, nil)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := s.checkLayouts(); err != nil {
		return nil, err
	}
	s.keepAllOrNone()
	s.fitMerge(left)
	if err := s.buildSymbols(); err != nil {
		return nil, err
	}
	if err := s.summarize(); err != nil {
		return nil, err
	}
	s.resident = true
	for _, src := range s.srcs {
		if src.dec == nil {
			s.resident = false
		}
	}
	if s.resident {
		if err := s.mergeResident(); err != nil {
			return nil, err
		}
	}
	s.info.Resident = s.resident
	ok = true
	return s, nil
}

// openScratch holds the buffers Open reuses from file to file, so that a
// folder of thousands of files does not allocate each file's anew: the
// allocations, not the memory held, would then set the pace of the
// garbage collector, and what is allocated while it marks counts as live.
type openScratch struct {
	br    *bufio.Reader // the survey's page headers
	buf   []byte        // the survey's copies
	block block         // the scan's bars
	pq    *pqReader     // the last Parquet scan's reader: its cursors' buffers and codecs
	lines lineReader    // the line scan's reader
	// parallel is what a parallel line scan leaves for the next file's.
	parallel lineScratch
}

// openScratch returns the scratch of Open, making it at the first call.
func (s *Set) openScratch() *openScratch {
	if s.open == nil {
		s.open = &openScratch{br: bufio.NewReaderSize(nil, maxPageHeader), buf: make([]byte, 64<<10), block: makeBlock(blockBars)}
	}
	return s.open
}

// closeScratch drops Open's scratch.
func (s *Set) closeScratch() {
	if s.open != nil && s.open.pq != nil {
		s.open.pq.close()
	}
	s.open = nil
}

// canStream reports whether src can stream: the scan kept its runs.
func (src *source) canStream() bool {
	if src.tbl != nil {
		return src.runs != nil
	}
	return src.lines != nil
}

// keepAllOrNone drops the decoded bars of the files that fit the decode
// budget when others did not: the set streams, and decoded bars beside
// streams would hold the decode budget and the streams' at once, for
// little gain (a replay's time goes to the streams).
func (s *Set) keepAllOrNone() {
	streamed := false
	for _, src := range s.srcs {
		streamed = streamed || src.dec == nil
	}
	if !streamed {
		return
	}
	for _, src := range s.srcs {
		if src.dec != nil && src.canStream() {
			src.dec, src.decRuns = nil, nil
		}
	}
}

// fitMerge keeps the decoded bars within the decode budget, of which left
// is unused: when every file is decoded and there is more than one run
// (several files, or a file laid out symbol after symbol), mergeResident
// copies the bars into one column set, 52 bytes a bar more; when that does
// not fit, one file streams instead (the last that can), so that nothing is
// copied: its replays merge the decoded runs with its stream.
func (s *Set) fitMerge(left int64) {
	var runs int
	var events int64
	for _, src := range s.srcs {
		if src.dec == nil {
			return
		}
		runs += len(src.decRuns)
		events += int64(src.dec.Len())
	}
	if runs <= 1 || events*barBytes <= left {
		return
	}
	for i := len(s.srcs) - 1; i >= 0; i-- {
		if src := s.srcs[i]; src.canStream() {
			src.dec, src.decRuns = nil, nil
			return
		}
	}
}

// checkLayouts checks what the files' paths and metadata say against
// what they hold: a file in a symbol=VALUE folder holds VALUE's bars only,
// and an instrument of a Nautilus catalog has bars of one bar type.
func (s *Set) checkLayouts() error {
	barTypes := map[string]*source{}
	for _, src := range s.srcs {
		if sym := src.entry.symbol; sym != "" {
			for _, name := range src.local {
				if name != sym {
					return &Error{File: src.path, Column: "symbol", columnar: src.format.rowFormat(),
						Msg: "holds bars of " + strconv.Quote(name) + " in the folder of symbol " + strconv.Quote(sym)}
				}
			}
		}
		if src.pq == nil || src.pq.nautilus == nil {
			continue
		}
		nt := src.pq.nautilus
		if other, ok := barTypes[nt.instrument]; ok && other.pq.nautilus.barType != nt.barType {
			return &Error{File: src.path, Msg: "bars of " + nt.instrument + " of two bar types, " + other.pq.nautilus.barType +
				" (" + other.path + ") and " + nt.barType + ": give the folder of one"}
		}
		barTypes[nt.instrument] = src
	}
	return nil
}

// buildSymbols makes the set's symbol table, the union of the files'
// sorted by name, and maps the files' symbols and decoded bars to it.
func (s *Set) buildSymbols() error {
	seen := map[string]bool{}
	for _, src := range s.srcs {
		for _, name := range src.local {
			if !seen[name] {
				seen[name] = true
				s.symbols = append(s.symbols, name)
			}
		}
	}
	if len(s.symbols) > math.MaxInt32 {
		return &Error{File: s.info.Source, Msg: "too many symbols"}
	}
	slices.Sort(s.symbols)
	s.symIndex = make(map[string]int32, len(s.symbols))
	for i, name := range s.symbols {
		s.symIndex[name] = int32(i)
	}
	for _, src := range s.srcs {
		src.toSet = make([]int32, len(src.local))
		for i, name := range src.local {
			src.toSet[i] = s.symIndex[name]
		}
		if src.dec == nil {
			continue
		}
		for i, l := range src.dec.Symbol {
			src.dec.Symbol[i] = src.toSet[l]
		}
		for k, lo := range src.decRuns {
			hi := src.dec.Len()
			if k+1 < len(src.decRuns) {
				hi = src.decRuns[k+1]
			}
			sortTies(src.dec.slice(lo, hi))
		}
	}
	s.info.Symbols = s.symbols
	s.info.Files = len(s.srcs)
	return nil
}

// summarize totals the files' bars in the window.
func (s *Set) summarize() error {
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	seenMin, seenMax := int64(math.MaxInt64), int64(math.MinInt64)
	for _, src := range s.srcs {
		s.info.Events += src.events
		first, last = min(first, src.first), max(last, src.last)
		seenMin, seenMax = min(seenMin, src.seenMin), max(seenMax, src.seenMax)
	}
	if s.info.Events == 0 {
		msg := "no bars in the window " + windowText(s.win)
		if seenMin <= seenMax {
			msg += ": the data covers " + formatTime(seenMin) + " to " + formatTime(seenMax)
		}
		return &Error{File: s.info.Source, Msg: msg}
	}
	s.info.From, s.info.To = time.Unix(0, first).UTC(), time.Unix(0, last).UTC()
	return nil
}

func windowText(w span) string {
	end := func(t int64, open int64) string {
		if t == open {
			return "-"
		}
		return formatTime(t)
	}
	return end(w.from, math.MinInt64) + ".." + end(w.to, math.MaxInt64)
}

// mergeResident merges the decoded files into the set's bars.
func (s *Set) mergeResident() error {
	if len(s.srcs) == 1 && len(s.srcs[0].decRuns) <= 1 {
		s.bars = exact(s.srcs[0].dec.Bars)
		s.srcs[0].dec = nil
		return nil
	}
	m := newMerger(s.memRuns(), len(s.symbols))
	defer m.close()
	bars, err := m.fill(makeBars(int(s.info.Events)), int(s.info.Events))
	if err != nil {
		return err
	}
	s.bars = bars
	for _, src := range s.srcs {
		src.dec = nil
	}
	return nil
}

// exact returns b in columns of exactly its length, copying them when
// they keep much more room (roomy).
func exact(b Bars) Bars {
	n := b.Len()
	if !roomy(cap(b.Time), n) {
		return b
	}
	return appendBars(makeBars(n), b, 0, n)
}

// roomy reports whether columns of room for room bars keep much more
// than n bars need: more than the margin of growFor's first estimate (a
// tenth), which a file of lines alike keeps.
func roomy(room, n int) bool { return room > n+n/8+64 }

// memRuns returns the runs of the decoded files.
func (s *Set) memRuns() []run {
	var runs []run
	for _, src := range s.srcs {
		if src.dec == nil {
			continue
		}
		for k, lo := range src.decRuns {
			hi := src.dec.Len()
			if k+1 < len(src.decRuns) {
				hi = src.decRuns[k+1]
			}
			runs = append(runs, &memRun{src: src, b: *src.dec.slice(lo, hi)})
		}
	}
	return runs
}

func (b *block) slice(i, j int) *block {
	nb := &block{Bars: b.Bars.Slice(i, j)}
	if len(b.pos) > 0 {
		nb.pos = b.pos[i:j]
	}
	return nb
}

// Info describes the set.
func (s *Set) Info() Info {
	info := s.info
	info.Symbols = slices.Clone(s.symbols)
	return info
}

// Window returns the window the set was opened with.
func (s *Set) Window() Window { return s.window }

// Symbols returns the symbol table: every symbol of the files (of the row
// groups read, for Parquet), sorted by name. Bars.Symbol indexes into it.
// Callers must not modify it.
func (s *Set) Symbols() []string { return s.symbols }

// Close closes the set's files. Streams of the set must be closed first.
func (s *Set) Close() error {
	var first error
	s.spillMu.Lock()
	if s.spilled != nil {
		first = s.spilled.close()
		s.spilled = nil
	}
	s.spillMu.Unlock()
	for _, src := range s.srcs {
		if src.fh != nil {
			if err := src.fh.Close(); err != nil && first == nil {
				first = err
			}
			src.fh = nil
		}
	}
	return first
}

// Digest returns a hash of the data the set replays: of every byte of
// every line file, and of the footer and every column chunk read of every
// Parquet file, with the files' names and the window. It changes when any
// byte of the data used changes. Bytes a replay has read are hashed as they
// stream; Digest reads only what no replay has (after a whole replay,
// little or nothing).
func (s *Set) Digest(ctx context.Context) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "stratbench data v2\nwindow %s\n", windowText(s.win))
	if s.memDigest != nil {
		fmt.Fprintf(h, "%s %x\n", s.info.Source, *s.memDigest)
	}
	for _, src := range s.srcs {
		d, err := src.fileDigest(ctx)
		if err != nil {
			return "", err
		}
		name := src.entry.name
		if name == "" {
			name = filepath.Base(src.path)
		}
		if src.entry.symbol != "" {
			name += " symbol=" + src.entry.symbol
		}
		fmt.Fprintf(h, "%s %d %x\n", name, src.format, d)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (src *source) fileDigest(ctx context.Context) ([sha256.Size]byte, error) {
	if src.format == formatParquet {
		return src.pq.digest, nil
	}
	src.digestMu.Lock()
	defer src.digestMu.Unlock()
	if !src.digestDone {
		// A Feather or freqtrade JSON file: hashed whole, once.
		h := sha256.New()
		r := io.NewSectionReader(src.fh, 0, src.size)
		buf := make([]byte, min(max(src.size, 1), 256<<10))
		for {
			if err := ctx.Err(); err != nil {
				return src.digest, err
			}
			n, err := r.Read(buf)
			h.Write(buf[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				return src.digest, pathError(src.path, err)
			}
		}
		h.Sum(src.digest[:0])
		src.digestDone = true
	}
	return src.digest, nil
}

// indexBudget bounds what a set keeps about its files besides the bars
// it decodes: Parquet row groups, column chunks and spans, the runs and
// marks of every file, the symbols. Data that would need more is refused
// (it would take more than that in memory whatever its number of bars).
const indexBudget = 32 << 20

// charge takes n bytes of the index budget for what path makes the set
// keep, or refuses it.
func (s *Set) charge(path string, n int64) error {
	if n > s.indexLeft {
		return &Error{File: path, Msg: "too much to index: what stratbench keeps of the data's files (row groups, pages, runs of time, symbols) " +
			"would take more than " + sizeText(indexBudget) + " of memory; use fewer, larger row groups (or files), or fewer places where time goes back"}
	}
	s.indexLeft -= n
	return nil
}

// where names a position in src: a line or a row.
func (src *source) where(pos int64) string {
	if src.format.rowFormat() {
		return "row " + itoa64(pos)
	}
	return "line " + itoa64(pos)
}

// errorAt is an error at pos (a line or row) of src.
func (src *source) errorAt(pos int64, column, msg string) *Error {
	if column == columnNames[colTimestamp] {
		column = src.columnName(colTimestamp)
	}
	e := &Error{File: src.path, Column: column, Msg: msg}
	if src.format.rowFormat() {
		e.Row = pos
	} else {
		e.Line = pos
	}
	return e
}

// symbolName names set symbol s.
func (src *source) symbolName(s int32) string { return src.set.symbols[s] }

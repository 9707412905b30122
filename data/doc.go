// Package data reads bar data for replay: CSV, JSON Lines, Parquet and
// Feather files, and folders of them (hive partitions, freqtrade's data
// folders, Nautilus catalogs), merged into one stream ordered by time, in
// memory that does not grow with the number of bars. Describe summarises
// data (stratbench data info) and Convert writes it as one sorted Parquet
// file (stratbench data convert).
//
// Open takes the paths and a window and returns a Set: what a replay needs
// to know before it starts (the symbol table, the number of bars in the
// window and their first and last time) and the data, checked. A Set's
// Stream replays the bars through a sliding window (Fill, Release), and
// Digest hashes the data used. Every error about the data is an *Error
// naming the file, the line or row, and the column. The sections below are
// written for docs/data.md.
//
// # Formats
//
// CSV files have a header row naming the columns timestamp, symbol, open,
// high, low, close and volume, in any order and any letter case; other
// columns are ignored. Fields may be quoted as in RFC 4180 (without line
// breaks inside quotes). JSON Lines files (.jsonl, .ndjson, .json) hold one
// object per line with the same keys; prices and volume may be JSON numbers
// or numeric strings, the timestamp a string or a number, and other keys
// are ignored. Blank lines are skipped. Timestamps are RFC 3339
// ("2026-09-30T12:00:00Z", "2026-09-30T14:00:00+02:00", fractional seconds
// allowed), "2026-09-30 12:00:00" (UTC, or with a zone after it), a bare
// date (midnight UTC), or unix time as an integer or decimal: below
// 100,000,000,000 it is seconds, above milliseconds. --from and --to take
// the same forms; both ends are inclusive.
//
// Parquet files (.parquet) have the same columns, found by name in any
// letter case; other columns are ignored. The timestamp is a TIMESTAMP of
// any unit (milliseconds, microseconds, nanoseconds; the legacy INT96 too),
// a DATE (midnight UTC), or an INT64 or INT32 of unix seconds or
// milliseconds, told apart by magnitude as in text. The symbol is a string
// column (dictionary-encoded or not); it may be left out when the file
// name is the symbol: SPY.parquet holds SPY's bars. Prices and volume are
// DOUBLE, FLOAT, INT64 or INT32 (signed or unsigned), or DECIMAL of any
// precision, read as the nearest float64, the same number the decimal
// written as text reads as. Columns may be nullable, but a null is an
// error. Any compression and encoding the format defines is read.
//
// Feather files (.feather, .arrow: Arrow IPC, what pandas' to_feather
// writes, LZ4 frame or zstd compressed or not) have the same columns: the
// timestamp a timestamp of any unit, a date, or an int64 or int32 of unix
// seconds or milliseconds; the symbol a string (utf8 or large utf8, not
// dictionary-encoded); prices and volume float64, float32, int64 or int32.
//
// A file with another extension is Parquet when it starts with PAR1,
// Feather when it starts with ARROW1, JSON Lines when it starts with "{",
// and CSV otherwise.
//
// # Folders and several paths
//
// A folder stands for every data file directly in it (.csv, .jsonl,
// .ndjson, .json, .parquet, .feather, .arrow, .json.gz; hidden files and
// other names are left out), and for those of its hive partitions: folders
// named key=value, walked recursively, as pyarrow, pandas, polars and
// duckdb write them. symbol=VALUE gives the symbol of the files below it
// (VALUE URL-decoded; a symbol column in them must agree), other keys are
// walked through; a partition folder or file given directly takes its
// symbol from its folders. Other folders are left out. The walk is bounded
// (16 partition levels, 10,000 files, 200,000 entries), refuses a symbolic
// link that leads out of the folder given, and refuses what is not a
// regular file.
//
// freqtrade's data folders hold PAIR-TIMEFRAME[-CANDLE].EXT files (EXT
// feather, parquet, json or json.gz): the pair comes from the name as
// freqtrade writes it (BTC_USDT-1m.feather is BTC/USDT,
// BTC_USDT_USDT-1h-futures.feather BTC/USDT:USDT), the time from the date
// column (the JSON formats are arrays of [ms, open, high, low, close,
// volume]). A folder of several timeframes needs Options.Timeframe; mark,
// index, premium index and funding rate candles are read only when given
// as files.
//
// A NautilusTrader catalog (the catalog, its data/bar folder, a bar type's
// folder, a bar file): ts_event is the time, the file's instrument_id the
// symbol, and the fixed-point prices and volumes are each read as the
// float64 nearest to their decimal value. An instrument with bars of two
// bar types is refused.
//
// One file per symbol is the usual layout; files may also hold several
// symbols, or a stretch of time each, and formats may be mixed. Several
// paths (--data repeated) are read as one data set. A file given twice,
// directly and through its folder say, is an error.
//
// # Replay order
//
// Bars replay by time. Bars of several symbols with the same timestamp
// replay in the order of the symbols' names (byte order, so "QQQ" before
// "SPY"): the order depends on the rows alone, never on how they are laid
// out in files, so a folder of per-symbol Parquet files replays exactly as
// one CSV of the same rows, whatever order that CSV lists them in. The
// symbol table (the report's symbols, the index of a bar's symbol) is in
// the same order.
//
// Each symbol's bars must be in strictly increasing time: within a file a
// row that repeats or goes back in time for its symbol is an error naming
// both rows; across files, two bars of one symbol with the same time are
// an error naming both files. stratbench never sorts a symbol's rows
// silently: Convert does, when asked (duckdb's partitioned writes do not
// keep the rows' order, and the error says so). Within a file, symbols may
// come interleaved (rows in time order) or one block after another.
//
// # Memory
//
// Data whose bars in the window fit the decode budget (64 MiB, about 1.29
// million bars at 52 bytes a bar) is decoded once, when it is opened, and
// replayed from memory; a sweep's runs share that one copy. Larger data
// streams: each replay reads the files again, a block at a time, merging
// them with a k-way merge by time, so memory is bounded by the number of
// streams times the block size, whatever the number of bars:
//
//   - a stream is a stretch of a file in which time never goes back: a
//     file in time order is one stream, a file laid out symbol after
//     symbol is one stream per symbol (at most 65,536 in all);
//   - a CSV or JSON Lines stream holds a 64 KiB read buffer and 1,024
//     decoded bars (about 130 KiB in all);
//   - a Parquet stream holds, for each column, one decoded page and, when
//     the column chunk has one, its dictionary (pyarrow writes
//     pages of about 1 MiB and dictionaries of up to 1 MiB), and 1,024
//     decoded bars: from a few hundred KiB for small files to about 8 MiB
//     for files of 200,000 minute bars written with pyarrow's defaults.
//   - a Feather stream holds, for each column, a buffer of 4 to 64 KiB and
//     its decompressor (an LZ4 frame's block: at most 4 MiB, 64 KiB as
//     pyarrow writes them; zstd windows over 8 MiB are refused), whatever
//     the size of a record batch; a freqtrade JSON stream a 64 KiB read
//     buffer (and gzip's window).
//     With more than 8 Parquet or Feather streams (a folder of per-symbol files),
//     the first stream spills them: it merges them 8 at a time, each
//     group into an unlinked temporary file of its bars in replay order
//     (64 bytes a bar), kept while the set is open, and every stream
//     merges the groups through a 64 KiB buffer each: memory is that of 8
//     Parquet streams while spilling, about 120 KiB a group after;
//   - the merged bars are read ahead by up to 4 chunks of 8,192 bars (a
//     goroutine reads while the strategy runs), and the replay holds the
//     bars between the oldest it still needs and the furthest it looks
//     ahead.
//
// --from and --to skip what lies outside the window without decoding it
// where the format allows: Parquet row groups whose time statistics lie
// outside the window are not read at all, nor Feather record batches the
// scan found outside it; a CSV, JSON Lines or plain freqtrade JSON stream
// starts at the last of its marks (one every 4,096 bars) before the window
// and stops at the first bar after it.
//
// # What is checked when
//
// Data that fits the budget is checked whole before anything runs: for
// CSV and JSON Lines every line of every file (also outside the window),
// for Parquet every row of the row groups the window needs. A bad row is
// an error of Open, naming the file, the line or row, and the column:
//
//	read bars data.csv line 12 field "close": not a number: "abc"
//	read bars SPY.parquet row 8131 column "close": not a finite number: NaN
//
// For data that streams, a CSV or JSON Lines file is still checked whole
// by Open, every line (values included, also outside the window): the file
// is read whole anyway for its timestamps and digest, so a bad row fails
// the same way whatever the file's size. For a streamed Parquet file, Open
// checks the structure before anything runs: its schema and column types,
// every timestamp and symbol of the row groups the window needs, and each
// symbol's time order; the prices and volumes (finite, prices > 0, volume
// >= 0, high >= max(open, close), low <= min(open, close)) of the bars in
// the window are checked as they stream, since checking them up front
// would mean decoding the file's value columns twice (when the streams are
// spilled, the first stream checks them all before it yields a bar, and
// Set.Stream returns what it finds). Also checked as the data streams, in
// every format: two files' bars of one symbol at the same time, and a file
// that changed since it was opened. A problem met while the data streams
// is returned by Stream.Fill as the same *Error, after the bars before it:
// the job fails with kind "data" (exit code 2).
//
// # One set, many replays
//
// A sweep opens its data once and replays it in each of its runs: Open
// the paths with the sweep's window, give every run the same *Set (the
// backtest's driver takes one: backtest.NewDriver), and Close the set
// after the last run has ended. Each run reads the set through a Stream
// of its own, so runs may replay it at the same time, each at its own
// pace. Data that fits the budget is decoded once, in Open, and every
// stream reads that one copy (it holds nothing of its own); larger data is
// streamed from the files by each stream, which holds its own read-ahead
// and block buffers: memory is then that of one stream times the runs in
// flight. The digest is shared too: what one replay hashed, no other
// reads again. A walk-forward, whose folds have windows of their own,
// opens a set per window.
//
// # Files that change
//
// A Set holds its files open from Open to Close: a file replaced while it
// is open (an editor's atomic save) is not seen, and a file changed in
// place is detected as it streams (an *Error). Stale reports whether the
// paths now hold other data than the set, so that watch mode opens (and
// decodes) data again only when it changed.
//
// # Digest
//
// Set.Digest hashes the data a replay uses: every byte of every CSV, JSON
// Lines, Feather and freqtrade JSON file, and the footer and every column
// chunk read of every Parquet file (row groups outside the window are not
// part of it), with the files' names (their path below a folder given, and
// a partition's symbol) and the window. It changes when any byte of that range
// changes. A replay hashes what it reads as it streams, so after a whole
// replay Digest reads little or nothing more.
//
// # Reading Parquet
//
// Parquet is read with github.com/parquet-go/parquet-go's page API: each
// column chunk is read page by page, and each page's values (or its
// dictionary's values and its indexes) are converted straight into the bar
// columns. parquet-go's row APIs (ReadFile, GenericReader) are 4 to 12
// times slower and are not used. Apache arrow-go reads as fast (its
// parallel table read) but brings 19 modules, gRPC among them, and a
// reader binary four times the size; parquet-go brings 10.
//
// # Reading Feather
//
// Feather is read by a reader of this package (feather.go): the footer and
// the batch headers when the file is opened, then each record batch's
// buffers of the bar columns as streams, decompressed as they are read.
// It adds 173 KB to the binary against 9 MB for arrow-go's ipc package,
// decodes as fast, and holds a few KiB per column whatever the batch's
// size (docs/ARCHITECTURE.md, "Bar data from other tools").
package data

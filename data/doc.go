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
// error. Every compression the format defines is read but LZO (none,
// snappy, gzip, brotli, zstd, LZ4_RAW, and the deprecated Hadoop-framed
// LZ4), and every encoding (dictionary, plain, RLE, byte-stream-split, the
// three delta encodings), in data pages of version 1 and 2. What a file
// says about itself is bounded before anything is allocated for it: a
// footer over 16 MiB is refused unread, and so is a page over 16 MiB
// (compressed or not) and a string value over 1 KiB; a page's values are
// decoded 1,024 at a time, whatever count the page declares.
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
// regular file (a named pipe, a socket or a device, naming the file and
// what it is); files are opened without blocking and checked before
// anything is read, so a pipe put in a file's place cannot block Open.
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
// replayed from memory; a sweep's runs share that one copy. It is all of
// the data or none of it: when some files do not fit, the bars decoded of
// the others are dropped and every file streams (decoded bars beside
// streams would hold the decode budget and the streams' at once). The decoded
// bars of several files (or of a file laid out symbol after symbol) are
// merged into one copy, 52 bytes a bar more: when that copy would not fit
// what is left of the budget, one file streams instead, and each replay
// merges the decoded files' bars with its stream. Larger data streams:
// each replay reads the files again, a block at a time, merging them with
// a k-way merge by time, so memory is bounded, whatever the number of bars
// or files:
//
//   - a stream is a stretch of a file in which time never goes back: a
//     file in time order is one stream, a file laid out symbol after
//     symbol is one stream per symbol (at most 65,536 a file);
//   - a CSV or JSON Lines stream holds the stretch between two of its
//     marks (256 KiB at most, and a line), a 64 KiB read buffer and 1,024
//     decoded bars: about 600 KiB at most. Open reads a file of 4 MiB or
//     more on every core, in chunks of 512 KiB and at most 16,384 lines
//     (about 1.7 MiB each with their parsed lines), as many at once as
//     workers + 3, and the 576 KiB being read: about 10 MiB on two cores,
//     20 MiB with eight workers;
//   - a Parquet stream holds, for each column, a span of pages (1 MiB, or
//     one larger page), one decompressed page and, when the column chunk
//     has one, its dictionary, and 1,024 decoded bars. Open reads every
//     page header of the row groups the window needs, so what a stream of
//     each file holds at most is known before anything streams (Set.need:
//     from a few hundred KiB for small files to about 20 MiB for pyarrow's
//     defaults, 1 MiB pages and dictionaries); a file whose stream alone
//     would exceed the stream budget is refused;
//   - a Feather stream holds, for each column, a buffer of 4 to 64 KiB and
//     its decompressor (an LZ4 frame's block: at most 4 MiB, 64 KiB as
//     pyarrow writes them; zstd windows over 8 MiB are refused), whatever
//     the size of a record batch, and is counted at its codec's most; a
//     freqtrade JSON stream a 64 KiB read buffer (and gzip's window);
//   - the streams of a replay hold at most the stream budget in all (64
//     MiB, Options.StreamBudget). When they would hold more (a folder of
//     thousands of files, a file of thousands of symbol blocks), the first
//     stream spills them: it merges them in groups that fit the budget,
//     each group into an unlinked temporary file of its bars in replay
//     order (64 bytes a bar), and the groups again while their readers
//     (about 130 KiB each) do not fit it, kept while the set is open; every
//     stream merges the last groups (spill.go);
//   - what the set keeps about its files besides bars (Parquet row groups,
//     chunks and spans, the runs and marks of every file, the symbols) is
//     charged to an index budget of 32 MiB: data that would need more is
//     an error of Open, before the memory is taken;
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
// that changed since it was opened (see Digest). A problem met while the
// data streams
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
// place is detected as it streams (an *Error), whatever its size and
// modification time say. Stale reports whether the paths now hold other
// data than the set, so that watch mode opens (and decodes) data again
// only when it changed.
//
// # Digest
//
// Set.Digest hashes the data a replay uses: every byte of every CSV, JSON
// Lines, Feather and freqtrade JSON file, and the footer and every column
// chunk read of every Parquet file (row groups outside the window are not
// part of it), with the files' names (their path below a folder given, and
// a partition's symbol) and the window. It changes when any byte of that
// range changes. For CSV, JSON Lines and Parquet it is computed by Open,
// which also hashes each stretch of a file (between two marks of a CSV or
// JSON Lines run, a span of a Parquet column chunk) with a seeded hash; a
// stream reads a stretch whole and checks it before it decodes a bar of
// it. A replay therefore reads exactly the bytes the digest covers, or
// fails with an *Error naming the file and the bytes: a file rewritten in
// place after Open, to the same size and with its modification time
// restored, cannot replay other bars under the same digest. (A Feather or
// freqtrade JSON file is hashed whole when Digest is first called, and its
// streams are not checked against it.)
//
// # Reading Parquet
//
// Parquet is read by a reader of this package's own: the footer is parsed
// from its Thrift encoding into what the bars need (thrift.go, pqmeta.go),
// pages are decompressed whole into a buffer of exactly their declared
// size (pqcodec.go), and their values are decoded a piece at a time
// straight into the bar columns (pqdecode.go, pqread.go, pqconv.go). It
// replaced parquet-go's page API, which allocated from what a file says
// about itself (a page of 30 million declared values, a footer of 200,000
// row groups: over a GiB each) and read LZ4_RAW pages from a stale buffer
// when its codec reallocated (parquet-go issue 608). Apache arrow-go reads
// as fast but brings 19 modules, gRPC among them, and a binary four times
// the size.
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

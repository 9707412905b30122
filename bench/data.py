#!/usr/bin/env python3
"""Read throughput and peak memory of stratbench's data layer (package data).

    python3 bench/data.py [--bars 1000000,10000000] [--symbols 2] [--folder-symbols 50]
                          [--runs 3] [--keep DIR]

For each bar count it generates deterministic 1-minute bars as CSV
(bench/gen_bars.py), converts them to Parquet with pyarrow (one file,
pyarrow's defaults: snappy, dictionaries, 1Mi-row row groups; the
interpreter of .venv-test, which ./test.sh installs, or --python), and
writes the same number of bars of --folder-symbols symbols as a folder of
one Parquet file per symbol (SYMBOL.parquet, no symbol column: the usual
layout, merged from that many streams at once). It builds
bench/readbars and replays each file with it the way a backtest driver
does (65,536 bars of lookahead, released as replayed), in two ways:

  - default budget: data that fits 64 MiB of decoded bars (1.29 million)
    is decoded and checked in Open and replayed from memory; more streams;
  - streamed (budget -1): every file streams, whatever its size.

It prints, for each file and way, the median over --runs of the time to
open (the checks and the scan before a replay), to stream, in total, the
throughput, the CPU time of the process, and its peak RSS (getrusage
maxrss: the whole process, Go runtime included).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bars", default="1000000,10000000")
    ap.add_argument("--symbols", type=int, default=2)
    ap.add_argument("--folder-symbols", type=int, default=50)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", help="folder for the data and the binary (reused between invocations)")
    ap.add_argument("--python", help="an interpreter with pyarrow (default: .venv-test/bin/python)")
    args = ap.parse_args()
    py = args.python or os.path.join(ROOT, ".venv-test", "bin", "python")
    work = args.keep or tempfile.mkdtemp(prefix="stratbench-data-bench-")
    os.makedirs(work, exist_ok=True)
    binary = os.path.join(work, "readbars")
    subprocess.run(["go", "build", "-o", binary, "./bench/readbars"], cwd=ROOT, check=True)

    rows = []
    for n in [int(x) for x in args.bars.split(",")]:
        csv = os.path.join(work, "bars-%d-%d.csv" % (n, args.symbols))
        pq = csv[:-4] + ".parquet"
        if not os.path.exists(csv):
            print("generating %d bars → %s" % (n, csv), file=sys.stderr)
            subprocess.run([sys.executable, os.path.join(HERE, "gen_bars.py"), str(n), csv,
                            "--symbols", str(args.symbols)], check=True)
        if not os.path.exists(pq):
            subprocess.run([py, "-c", CONVERT, csv, pq], check=True)
        paths = [csv, pq]
        if args.folder_symbols > 0:
            folder = os.path.join(work, "bars-%d-%d-folder" % (n, args.folder_symbols))
            if not os.path.exists(folder):
                src = os.path.join(work, "bars-%d-%d.csv" % (n, args.folder_symbols))
                if not os.path.exists(src):
                    print("generating %d bars of %d symbols → %s" % (n, args.folder_symbols, src), file=sys.stderr)
                    subprocess.run([sys.executable, os.path.join(HERE, "gen_bars.py"), str(n), src,
                                    "--symbols", str(args.folder_symbols)], check=True)
                subprocess.run([py, "-c", SPLIT, src, folder], check=True)
            paths.append(folder)
        for path in paths:
            for way, budget in (("default", 0), ("streamed", -1)):
                results = []
                for _ in range(args.runs):
                    out = subprocess.run([binary, "-budget", str(budget), path], check=True,
                                         capture_output=True, text=True).stdout
                    results.append(json.loads(out))
                med = lambda k: statistics.median(r[k] for r in results)
                rows.append((os.path.basename(path), n, way, results[0]["resident"], med("open_s"), med("stream_s"),
                             med("total_s"), n / med("total_s"), med("cpu_s"), max(r["peak_rss_kib"] for r in results) / 1024,
                             size_mib(path)))
    print("%-26s %10s %-9s %-8s %7s %8s %7s %11s %6s %9s %8s" % (
        "file", "bars", "budget", "resident", "open s", "stream s", "total s", "bars/s", "cpu s", "peak MiB", "file MiB"))
    for r in rows:
        print("%-26s %10d %-9s %-8s %7.2f %8.2f %7.2f %11.0f %6.2f %9.1f %8.1f" % r)
    return 0


CONVERT = """
import sys
import pyarrow as pa, pyarrow.csv as pc, pyarrow.parquet as pq
src, dst = sys.argv[1], sys.argv[2]
opts = pc.ConvertOptions(column_types={"timestamp": pa.timestamp("ns", tz="UTC")})
reader = pc.open_csv(src, convert_options=opts, read_options=pc.ReadOptions(block_size=64 << 20))
with pq.ParquetWriter(dst + ".tmp", reader.schema) as w:
    for batch in reader:
        w.write_batch(batch, row_group_size=1 << 20)
import os
os.replace(dst + ".tmp", dst)
"""

SPLIT = """
import os, sys
import pyarrow as pa, pyarrow.compute as pc, pyarrow.csv as pcsv, pyarrow.parquet as pq
src, dst = sys.argv[1], sys.argv[2]
opts = pcsv.ConvertOptions(column_types={"timestamp": pa.timestamp("ns", tz="UTC")})
t = pcsv.read_csv(src, convert_options=opts)
os.makedirs(dst + ".tmp")
for sym in pc.unique(t["symbol"]).to_pylist():
    part = t.filter(pc.equal(t["symbol"], sym)).drop_columns(["symbol"])
    pq.write_table(part, os.path.join(dst + ".tmp", sym + ".parquet"))
os.replace(dst + ".tmp", dst)
"""


def size_mib(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path)) / 2**20
    return os.path.getsize(path) / 2**20


if __name__ == "__main__":
    sys.exit(main())

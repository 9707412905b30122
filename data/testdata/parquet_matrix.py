"""Writes the rows of a stratbench CSV as Parquet in every way the usual
tools write it, for the tests of package data: one process, small files.

    python parquet_matrix.py SRC.csv OUTDIR

SRC.csv has the header timestamp,symbol,open,high,low,close,volume,
timestamps RFC 3339 with "Z" (whole seconds), prices with two decimals and
whole volumes. OUTDIR gets one file per variant and manifest.json, a list
of {"file": NAME, "expect": CSV or ""}: expect names a CSV of the bars as
pyarrow reads the file back, for the variants that do not hold the
source's values exactly (float32); "" means the file replays as SRC.csv.

Writers: pyarrow (every compression, dictionary / plain / byte-stream-split
/ delta encodings, large and view strings, every timestamp unit, zones and
none, INT96, float32, decimals as fixed-length bytes and as integers, page
v2, no statistics, blocks by symbol, small row groups and pages, columns
required or not), pandas (through pyarrow, its index written), polars
(every compression, no statistics, small row groups and pages) and duckdb
(every compression, Parquet v2, small row groups).
"""

import csv
import datetime
import decimal
import json
import os
import sys

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def seconds(s):
    dt = datetime.datetime.strptime(s[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return (dt - EPOCH) // datetime.timedelta(seconds=1)


def table(rows, unit="ns", tz="UTC", symbol_type=pa.string(), prices="f64", volume="f64"):
    secs = [seconds(r["timestamp"]) for r in rows]
    mul = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}[unit]
    cols = {
        "timestamp": pa.array([s * mul for s in secs], pa.int64()).cast(pa.timestamp(unit, tz=tz)),
        "symbol": pa.array([r["symbol"] for r in rows], symbol_type),
    }
    for c in ("open", "high", "low", "close"):
        vals = [r[c] for r in rows]
        if prices == "f64":
            cols[c] = pa.array([float(v) for v in vals], pa.float64())
        elif prices == "f32":
            cols[c] = pa.array([float(v) for v in vals], pa.float32())
        elif prices == "dec":
            cols[c] = pa.array([decimal.Decimal(v).quantize(decimal.Decimal("0.0001")) for v in vals], pa.decimal128(18, 4))
        elif prices == "dec256":
            cols[c] = pa.array([decimal.Decimal(v).quantize(decimal.Decimal("0.0001")) for v in vals], pa.decimal256(40, 4))
    vols = [r["volume"] for r in rows]
    cols["volume"] = pa.array([int(v) for v in vols], pa.int64()) if volume == "i64" else pa.array([float(v) for v in vols], pa.float64())
    return pa.table(cols)


def required(t):
    return t.cast(pa.schema([pa.field(f.name, f.type, nullable=False) for f in t.schema]))


def by_symbol(rows):
    return sorted(rows, key=lambda r: r["symbol"])  # stable: time order within a symbol


def expect_csv(path, out):
    """The bars of a written file as pyarrow reads them."""
    t = pq.read_table(path)
    ns = t.column("timestamp").cast(pa.timestamp("ns", tz="UTC")).cast(pa.int64()).to_pylist()
    cols = {c: t.column(c).to_pylist() for c in ("symbol", "open", "high", "low", "close", "volume")}
    with open(out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["timestamp", "symbol", "open", "high", "low", "close", "volume"])
        for i, v in enumerate(ns):
            secs, frac = divmod(v, 1_000_000_000)
            stamp = (EPOCH + datetime.timedelta(seconds=secs)).strftime("%Y-%m-%dT%H:%M:%S") + ".%09dZ" % frac
            w.writerow([stamp, cols["symbol"][i]] + [repr(float(cols[c][i])) for c in ("open", "high", "low", "close", "volume")])


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    rows = read_rows(src)
    manifest = []

    def done(name, expect=False):
        e = ""
        if expect:
            e = name + ".expect.csv"
            expect_csv(os.path.join(out, name), os.path.join(out, e))
        manifest.append({"file": name, "expect": e})

    def pa_write(name, t, expect=False, **kw):
        pq.write_table(t, os.path.join(out, name), **kw)
        done(name, expect)

    base = table(rows)
    # pyarrow: compressions
    for codec in ("none", "snappy", "gzip", "brotli", "zstd", "lz4"):
        pa_write("pa-%s.parquet" % codec, base, compression=codec, row_group_size=2000)
    # encodings
    pa_write("pa-plain.parquet", base, use_dictionary=False, compression="none")
    pa_write("pa-byte-stream-split.parquet", base, use_dictionary=["symbol"], compression="zstd",
             column_encoding={c: "BYTE_STREAM_SPLIT" for c in ("open", "high", "low", "close", "volume")})
    pa_write("pa-byte-stream-split-int.parquet", table(rows, volume="i64"), use_dictionary=False, compression="lz4",
             column_encoding={"timestamp": "BYTE_STREAM_SPLIT", "volume": "BYTE_STREAM_SPLIT", "open": "BYTE_STREAM_SPLIT",
                              "symbol": "PLAIN"})
    pa_write("pa-delta.parquet", table(rows, volume="i64"), use_dictionary=False, compression="snappy",
             column_encoding={"timestamp": "DELTA_BINARY_PACKED", "volume": "DELTA_BINARY_PACKED", "symbol": "DELTA_BYTE_ARRAY"})
    pa_write("pa-delta-length.parquet", base, use_dictionary=False, compression="lz4", data_page_version="2.0",
             column_encoding={"timestamp": "DELTA_BINARY_PACKED", "symbol": "DELTA_LENGTH_BYTE_ARRAY"})
    # strings
    pa_write("pa-large-string.parquet", table(rows, symbol_type=pa.large_string()), compression="zstd")
    pa_write("pa-string-view.parquet", table(rows, symbol_type=pa.string_view()), compression="lz4")
    # timestamps
    for unit in ("s", "ms", "us", "ns"):
        pa_write("pa-ts-%s.parquet" % unit, table(rows, unit=unit), compression="snappy")
    pa_write("pa-ts-new-york.parquet", table(rows, tz="America/New_York"), compression="snappy")
    pa_write("pa-ts-naive.parquet", table(rows, unit="us", tz=None), compression="snappy")
    pa_write("pa-int96.parquet", base, use_deprecated_int96_timestamps=True, compression="gzip")
    # values
    pa_write("pa-float32.parquet", table(rows, prices="f32"), expect=True, compression="brotli")
    pa_write("pa-decimal.parquet", table(rows, prices="dec"), compression="zstd")
    pa_write("pa-decimal-int.parquet", table(rows, prices="dec"), store_decimal_as_integer=True, compression="lz4")
    pa_write("pa-decimal256.parquet", table(rows, prices="dec256"), compression="snappy")
    # pages, groups, statistics, layout
    pa_write("pa-page-v2.parquet", base, data_page_version="2.0", compression="zstd")
    pa_write("pa-page-v2-lz4.parquet", required(base), data_page_version="2.0", compression="lz4", max_rows_per_page=100)
    pa_write("pa-no-statistics.parquet", base, write_statistics=False, row_group_size=700, compression="gzip")
    pa_write("pa-blocks.parquet", table(by_symbol(rows)), row_group_size=900, max_rows_per_page=128, compression="lz4")
    pa_write("pa-required.parquet", required(base), compression="lz4", row_group_size=1500)
    pa_write("pa-small-pages.parquet", base, compression="lz4", max_rows_per_page=37, row_group_size=1000, write_page_index=True)
    # pandas, through pyarrow: its index goes in a column of its own
    df = base.to_pandas()
    df.index = pd.RangeIndex(1000, 1000 + len(df))
    df.to_parquet(os.path.join(out, "pd-default.parquet"))
    done("pd-default.parquet")
    df.to_parquet(os.path.join(out, "pd-lz4.parquet"), compression="lz4")
    done("pd-lz4.parquet")

    # polars
    pdf = pl.from_arrow(base)
    for codec in ("uncompressed", "snappy", "gzip", "brotli", "zstd", "lz4"):
        name = "pl-%s.parquet" % codec
        pdf.write_parquet(os.path.join(out, name), compression=codec, row_group_size=2500)
        done(name)
    pdf.write_parquet(os.path.join(out, "pl-no-statistics.parquet"), statistics=False, compression="lz4")
    done("pl-no-statistics.parquet")
    pdf.write_parquet(os.path.join(out, "pl-small.parquet"), row_group_size=500, data_page_size=2048, compression="lz4")
    done("pl-small.parquet")
    pl.from_arrow(table(by_symbol(rows), unit="ms")).write_parquet(os.path.join(out, "pl-blocks-ms.parquet"), compression="zstd", row_group_size=1000)
    done("pl-blocks-ms.parquet")

    # duckdb
    con = duckdb.connect()
    con.register("bars", base)
    con.register("blocks", table(by_symbol(rows)))
    for codec in ("uncompressed", "snappy", "gzip", "brotli", "zstd", "lz4"):
        name = "dd-%s.parquet" % codec
        con.execute("COPY (SELECT * FROM bars) TO '%s' (FORMAT parquet, COMPRESSION %s)" % (os.path.join(out, name), codec))
        done(name)
    con.execute("COPY (SELECT * FROM bars) TO '%s' (FORMAT parquet, PARQUET_VERSION V2, COMPRESSION zstd)" % os.path.join(out, "dd-v2.parquet"))
    done("dd-v2.parquet")
    con.execute("COPY (SELECT * FROM blocks) TO '%s' (FORMAT parquet, ROW_GROUP_SIZE 1000, COMPRESSION lz4)" % os.path.join(out, "dd-blocks.parquet"))
    done("dd-blocks.parquet")

    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()

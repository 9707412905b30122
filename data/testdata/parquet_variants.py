"""Writes Parquet files of bars for the tests of package data, with pyarrow.

    python parquet_variants.py JOBS.json

JOBS.json is a list of jobs; each reads a stratbench CSV (header
timestamp,symbol,open,high,low,close,volume; timestamps RFC 3339 with "Z",
or dates) and writes it as Parquet the way the job says:

  src            the CSV to read
  out            the Parquet file to write, or with "split": a folder that
                 gets one SYMBOL.parquet per symbol, without a symbol column
  expect         optional: a CSV of the bars as pyarrow reads the written
                 file back (float32 prices widened, decimals as text,
                 timestamps in nanoseconds), the oracle of the test
  time           ns | us | ms | s | int_s | int_ms | int32_s | date | int96
  prices         f64 | f32 | i64 | u64 | dec | dec_int | dec_big
  symbol         dict | plain | none
  split          true: one file per symbol (see out)
  order          time (as in the CSV) | symbol (blocks by symbol, in name order)
  row_group_size rows per row group
  page_version   "1.0" | "2.0"
  compression    snappy | zstd | none
  encoding       plain | delta | split (timestamps DELTA_BINARY_PACKED,
                 floats BYTE_STREAM_SPLIT; without dictionaries)
  required       true: columns not nullable
  page_index     true: write the page index
  statistics     false: write no statistics
  max_rows_per_page  rows per page
  set            list of [row, column, value]: overwrite cells after the
                 conversion ("nan", "null", or a number), to make bad data
  string_column  the name of a column to write as text instead
"""

import csv
import datetime
import decimal
import json
import math
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def parse_ts(s):
    """Nanoseconds of an RFC 3339 'Z' timestamp or a date."""
    if len(s) == 10:
        s += "T00:00:00Z"
    date, rest = s[:19], s[19:-1]
    dt = datetime.datetime.strptime(date, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    secs = (dt - EPOCH) // datetime.timedelta(seconds=1)
    frac = int((rest[1:] + "000000000")[:9]) if rest.startswith(".") else 0
    return secs * 1_000_000_000 + frac


def fmt_ts(ns):
    secs, frac = divmod(ns, 1_000_000_000)
    dt = EPOCH + datetime.timedelta(seconds=secs)
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + ".%09dZ" % frac


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return rows


def price_array(values, kind):
    if kind == "f64":
        return pa.array([float(v) for v in values], pa.float64())
    if kind == "f32":
        return pa.array([float(v) for v in values], pa.float32())
    if kind == "i64":
        return pa.array([int(decimal.Decimal(v)) for v in values], pa.int64())
    if kind == "u64":
        return pa.array([int(decimal.Decimal(v)) for v in values], pa.uint64())
    if kind in ("dec", "dec_int"):
        return pa.array([decimal.Decimal(v).quantize(decimal.Decimal("0.0001")) for v in values], pa.decimal128(18, 4))
    if kind == "dec_big":
        return pa.array([decimal.Decimal(v).quantize(decimal.Decimal("0.000001")) for v in values], pa.decimal128(38, 6))
    raise ValueError(kind)


def time_array(ns, kind):
    if kind in ("ns", "us", "ms", "s"):
        div = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}[kind]
        return pa.array([v // div for v in ns], pa.timestamp(kind, tz="UTC"))
    if kind == "int96":
        return pa.array(ns, pa.timestamp("ns", tz="UTC"))
    if kind == "int_s":
        return pa.array([v // 1_000_000_000 for v in ns], pa.int64())
    if kind == "int32_s":
        return pa.array([v // 1_000_000_000 for v in ns], pa.int32())
    if kind == "int_ms":
        return pa.array([v // 1_000_000 for v in ns], pa.int64())
    if kind == "date":
        return pa.array([datetime.date(1970, 1, 1) + datetime.timedelta(days=v // 86_400_000_000_000) for v in ns], pa.date32())
    raise ValueError(kind)


def build(rows, job, with_symbol=True):
    ns = [parse_ts(r["timestamp"]) for r in rows]
    cols = {"timestamp": time_array(ns, job.get("time", "ns"))}
    if with_symbol:
        sym = pa.array([r["symbol"] for r in rows], pa.string())
        cols["symbol"] = sym
    prices = job.get("prices", "f64")
    for c in ("open", "high", "low", "close"):
        cols[c] = price_array([r[c] for r in rows], prices)
    cols["volume"] = price_array([r["volume"] for r in rows], "i64" if prices in ("i64", "u64") else prices)
    for row, col, value in job.get("set", []):
        values = cols[col].to_pylist()
        if value == "null":
            values[row] = None
        elif value == "nan":
            values[row] = float("nan")
        else:
            values[row] = type(values[row])(value) if values[row] is not None else value
        cols[col] = pa.array(values, cols[col].type)
    if job.get("string_column"):
        name = job["string_column"]
        cols[name] = pa.array([str(v) for v in cols[name].to_pylist()], pa.string())
    table = pa.table(cols)
    if job.get("required"):
        table = table.cast(pa.schema([pa.field(f.name, f.type, nullable=False) for f in table.schema]))
    return table


def write(table, path, job):
    kw = {
        "row_group_size": job.get("row_group_size", 1 << 20),
        "data_page_version": job.get("page_version", "1.0"),
        "compression": job.get("compression", "snappy"),
        "write_page_index": bool(job.get("page_index")),
        "write_statistics": job.get("statistics", True),
    }
    if job.get("max_rows_per_page"):
        kw["max_rows_per_page"] = job["max_rows_per_page"]
    if job.get("time") == "int96":
        kw["use_deprecated_int96_timestamps"] = True
    if job.get("prices") == "dec_int":
        kw["store_decimal_as_integer"] = True
    enc = job.get("encoding", "dict")
    sym = job.get("symbol", "dict")
    if enc == "dict":
        kw["use_dictionary"] = True if sym == "dict" else [c for c in table.column_names if c != "symbol"]
    else:
        kw["use_dictionary"] = ["symbol"] if sym == "dict" and "symbol" in table.column_names else False
        if enc in ("delta", "split"):
            colenc = {}
            for f in table.schema:
                if (pa.types.is_timestamp(f.type) and job.get("time") != "int96") or pa.types.is_int64(f.type):
                    colenc[f.name] = "DELTA_BINARY_PACKED"
                elif enc == "split" and (pa.types.is_floating(f.type)):
                    colenc[f.name] = "BYTE_STREAM_SPLIT"
            kw["column_encoding"] = colenc
    pq.write_table(table, path, **kw)


def expect_rows(path, symbol=None):
    """The bars of a written file as pyarrow reads them."""
    t = pq.read_table(path)
    out = []
    names = t.column_names
    cols = {n: t.column(n) for n in names}
    ts = cols["timestamp"]
    if pa.types.is_timestamp(ts.type):
        ns = ts.cast(pa.timestamp("ns", tz="UTC")).cast(pa.int64()).to_pylist()
    elif pa.types.is_date32(ts.type):
        ns = [v * 86_400_000_000_000 for v in ts.cast(pa.int32()).to_pylist()]
    else:
        raw = ts.to_pylist()
        ns = [v * (1_000_000 if abs(v) >= 100_000_000_000 else 1_000_000_000) for v in raw]
    syms = cols["symbol"].to_pylist() if "symbol" in cols else [symbol] * t.num_rows
    vals = {c: cols[c].to_pylist() for c in ("open", "high", "low", "close", "volume")}
    for i in range(t.num_rows):
        row = [fmt_ts(ns[i]), syms[i]]
        for c in ("open", "high", "low", "close", "volume"):
            v = vals[c][i]
            if isinstance(v, float):
                row.append(repr(v) if math.isfinite(v) else str(v))
            else:
                row.append(str(v))
        out.append(row)
    return out


def main():
    with open(sys.argv[1]) as f:
        jobs = json.load(f)
    for job in jobs:
        rows = read_csv(job["src"])
        if job.get("order") == "symbol":
            rows.sort(key=lambda r: r["symbol"])  # stable: time order within a symbol
        expected = []
        if job.get("split"):
            os.makedirs(job["out"], exist_ok=True)
            for sym in sorted({r["symbol"] for r in rows}):
                path = os.path.join(job["out"], sym + ".parquet")
                write(build([r for r in rows if r["symbol"] == sym], job, with_symbol=False), path, job)
                expected += expect_rows(path, sym)
        else:
            write(build(rows, job, with_symbol=job.get("symbol", "dict") != "none"), job["out"], job)
            if job.get("expect"):
                expected = expect_rows(job["out"], job.get("file_symbol"))
        if job.get("expect"):
            with open(job["expect"], "w", newline="") as f:
                w = csv.writer(f, lineterminator="\n")
                w.writerow(["timestamp", "symbol", "open", "high", "low", "close", "volume"])
                w.writerows(expected)


if __name__ == "__main__":
    main()

"""Writes bars as other tools lay them out, for the tests of package data.

    python layouts.py JOBS.json

JOBS.json is a list of jobs; each reads a stratbench CSV (see
parquet_variants.py; timestamps on whole microseconds) and writes its rows
the way the job says:

  kind "hive"       a partitioned dataset in the folder "out", written by
                    "writer" as people call it:
                      pyarrow  pyarrow.dataset.write_dataset(partitioning=KEYS,
                               partitioning_flavor="hive")
                      pandas   DataFrame.to_parquet(partition_cols=KEYS)
                      duckdb   COPY ... TO (FORMAT parquet, PARTITION_BY (KEYS))
                      polars   DataFrame.write_parquet(partition_by=KEYS)
                    "keys": the partition columns, among symbol, year,
                    month (derived from the timestamp), e.g. ["year", "symbol"]
  kind "freqtrade"  freqtrade's data folder "out": one file per pair,
                    PAIR-TIMEFRAME[-futures].EXT with the pair written as
                    freqtrade's misc.pair_to_filename writes it, by the code
                    of freqtrade's data handlers (freqtrade/data/history/
                    datahandlers): "format" feather (to_feather,
                    compression lz4 at level 9), parquet (to_parquet), json
                    (to_json(orient="values"), date as unix ms) or jsongz;
                    "timeframe" the name (default 1m); "futures": true puts
                    the files in out/futures/ with the -futures suffix, as
                    freqtrade does in futures mode. The symbols of the CSV
                    are the pairs.
  kind "feather"    one Arrow IPC (Feather V2) file "out" written with
                    pyarrow.feather.write_feather: "compression" lz4 |
                    zstd | uncompressed, "time" ns | us | ms | s | int_ms |
                    date, "symbol" string | large_string | category | none,
                    "prices" f64 | f32 | i64, "chunksize" rows per record
                    batch
"""

import datetime
import json
import os
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.feather as feather

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parquet_variants import parse_ts, read_csv  # noqa: E402

COLUMNS = ["date", "open", "high", "low", "close", "volume"]  # freqtrade's DEFAULT_DATAFRAME_COLUMNS


def frame(rows):
    """The rows as a DataFrame: timestamp (datetime64[ns, UTC]), symbol, floats."""
    df = pd.DataFrame({
        "timestamp": pd.to_datetime([parse_ts(r["timestamp"]) for r in rows], unit="ns", utc=True).astype("datetime64[ns, UTC]"),
        "symbol": [r["symbol"] for r in rows],
    })
    for c in ("open", "high", "low", "close", "volume"):
        df[c] = [float(r[c]) for r in rows]
    return df


def hive(rows, job):
    df = frame(rows)
    df["year"] = df["timestamp"].dt.year
    df["month"] = df["timestamp"].dt.month
    keys = job["keys"]
    df = df[["timestamp", "symbol", "open", "high", "low", "close", "volume"] +
            [k for k in ("year", "month") if k in keys]]
    out = job["out"]
    writer = job["writer"]
    if writer == "pyarrow":
        ds.write_dataset(pa.Table.from_pandas(df, preserve_index=False), out, format="parquet",
                         partitioning=keys, partitioning_flavor="hive")
    elif writer == "pandas":
        df.to_parquet(out, partition_cols=keys)
    elif writer == "duckdb":
        import duckdb
        con = duckdb.connect()
        con.register("bars", df)
        con.execute("COPY (SELECT * FROM bars ORDER BY timestamp) TO '%s' (FORMAT parquet, PARTITION_BY (%s))" % (out, ", ".join(keys)))
    elif writer == "polars":
        import polars as pl
        pl.from_pandas(df).write_parquet(out, partition_by=keys)
    else:
        raise ValueError(writer)


def pair_to_filename(pair):
    """freqtrade.misc.pair_to_filename."""
    for ch in ["/", " ", ".", "@", "$", "+", ":"]:
        pair = pair.replace(ch, "_")
    return pair


def freqtrade(rows, job):
    df = frame(rows).rename(columns={"timestamp": "date"})
    fmt = job.get("format", "feather")
    timeframe = job.get("timeframe", "1m")
    datadir = job["out"]
    candle = ""
    if job.get("futures"):
        datadir = os.path.join(datadir, "futures")
        candle = "-futures"
    os.makedirs(datadir, exist_ok=True)
    ext = {"feather": "feather", "parquet": "parquet", "json": "json", "jsongz": "json.gz"}[fmt]
    for pair, data in df.groupby("symbol", sort=True):
        filename = os.path.join(datadir, "%s-%s%s.%s" % (pair_to_filename(pair), timeframe.replace("M", "Mo"), candle, ext))
        data = data[COLUMNS]
        # As freqtrade's FeatherDataHandler, ParquetDataHandler and
        # JsonDataHandler store them (ohlcv_store).
        if fmt == "feather":
            data.reset_index(drop=True).loc[:, COLUMNS].to_feather(filename, compression_level=9, compression="lz4")
        elif fmt == "parquet":
            data.reset_index(drop=True).loc[:, COLUMNS].to_parquet(filename)
        else:
            _data = data.copy()
            _data["date"] = _data["date"].astype(np.int64) // 1000 // 1000
            _data.reset_index(drop=True).loc[:, COLUMNS].to_json(
                filename, orient="values", compression="gzip" if fmt == "jsongz" else None)


def feather_file(rows, job):
    ns = [parse_ts(r["timestamp"]) for r in rows]
    t = job.get("time", "ns")
    if t in ("ns", "us", "ms", "s"):
        div = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}[t]
        ts = pa.array([v // div for v in ns], pa.timestamp(t, tz="UTC"))
    elif t == "int_ms":
        ts = pa.array([v // 1_000_000 for v in ns], pa.int64())
    elif t == "date":
        ts = pa.array([datetime.date(1970, 1, 1) + datetime.timedelta(days=v // 86_400_000_000_000) for v in ns], pa.date32())
    else:
        raise ValueError(t)
    cols = {"timestamp": ts}
    sym = job.get("symbol", "string")
    names = [r["symbol"] for r in rows]
    if sym == "string":
        cols["symbol"] = pa.array(names, pa.string())
    elif sym == "large_string":
        cols["symbol"] = pa.array(names, pa.large_string())
    elif sym == "category":
        cols["symbol"] = pa.array(names, pa.string()).dictionary_encode()
    prices = job.get("prices", "f64")
    typ = {"f64": pa.float64(), "f32": pa.float32(), "i64": pa.int64()}[prices]
    for c in ("open", "high", "low", "close", "volume"):
        vals = [float(r[c]) for r in rows]
        if prices == "i64":
            vals = [int(v) for v in vals]
        cols[c] = pa.array(vals, typ)
    table = pa.table(cols)
    feather.write_feather(table, job["out"], compression=job.get("compression", "lz4"),
                          chunksize=job.get("chunksize", 64 * 1024))


def main():
    with open(sys.argv[1]) as f:
        jobs = json.load(f)
    for job in jobs:
        rows = read_csv(job["src"])
        {"hive": hive, "freqtrade": freqtrade, "feather": feather_file}[job["kind"]](rows, job)


if __name__ == "__main__":
    main()

"""Computes, for tearsheet_test.go, what quantstats 0.0.86 says of a run's
period returns and what a hand computation says of its closed trades.

Input (argv[1], JSON): {"times": [unix seconds], "returns": [...],
"periods": periods per year, "window": rolling Sharpe window,
"trades": path of the trades record (trades.csv.gz)}. Output on stdout (JSON): the figures."""
import csv
import gzip
import json
import math
import sys

import pandas as pd
import quantstats as qs

spec = json.load(open(sys.argv[1]))
idx = pd.to_datetime(spec["times"], unit="s")
r = pd.Series(spec["returns"], index=idx, dtype="float64")
p = spec["periods"]


def f(x):
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x


out = {
    "cagr": f(qs.stats.cagr(r, periods=p)),
    "volatility": f(qs.stats.volatility(r, periods=p)),
    "sharpe": f(qs.stats.sharpe(r, periods=p)),
    "sortino": f(qs.stats.sortino(r, periods=p)),
    "calmar": f(qs.stats.calmar(r, periods=p)),
    "max_drawdown": f(-qs.stats.max_drawdown(r)),
    "ulcer": f(qs.stats.ulcer_index(r)),
    "skew": f(qs.stats.skew(r)),
    "kurtosis": f(qs.stats.kurtosis(r)),
    "var95": f(qs.stats.value_at_risk(r)),
    "cvar95": f(qs.stats.conditional_value_at_risk(r)),
    "best": f(qs.stats.best(r)),
    "worst": f(qs.stats.worst(r)),
    "rolling_sharpe": [f(v) for v in qs.stats.rolling_sharpe(r, rolling_period=spec["window"], periods_per_year=p)],
}
monthly = r.groupby([r.index.year, r.index.month]).apply(lambda x: (1 + x).prod() - 1)
out["monthly"] = [f(v) for v in monthly.values]

# The trades, by hand.
# The record is gzip'd CSV (records/trades.csv.gz): Python's gzip module reads it.
with (gzip.open(spec["trades"], "rt") if spec["trades"].endswith(".gz") else open(spec["trades"])) as f:
    rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
pnl = [float(t["net_pnl"]) for t in rows]
ret = [float(t["return"]) for t in rows]
wins = [x for x in pnl if x > 0]
losses = [-x for x in pnl if x < 0]
n = len(pnl)
mean = sum(pnl) / n
std = math.sqrt(sum((x - mean) ** 2 for x in pnl) / (n - 1))
srt = sorted(ret)
held = [(pd.Timestamp(t["exit_time"]) - pd.Timestamp(t["entry_time"])).total_seconds() for t in rows]
out["trades"] = {
    "count": n,
    "win_rate": len(wins) / n,
    "profit_factor": sum(wins) / sum(losses),
    "payoff": (sum(wins) / len(wins)) / (sum(losses) / len(losses)),
    "expectancy": mean,
    "avg_return": sum(ret) / n,
    "median_return": srt[n // 2] if n % 2 else (srt[n // 2 - 1] + srt[n // 2]) / 2,
    "best": max(ret),
    "worst": min(ret),
    "avg_holding_s": sum(held) / n,
    "sqn": math.sqrt(n) * mean / std,
}
json.dump(out, sys.stdout)

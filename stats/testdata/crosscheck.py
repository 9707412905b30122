"""An independent computation of stratbench's stats package, with numpy and scipy.

Reads the JSON file named by argv[1]:
  matrix: path of T*N little-endian float64, column-major (run j's returns at j*T .. j*T+T-1)
  t, n, blocks: the matrix's shape and CSCV's block count
  cdf_x, ppf_p: points for the normal distribution and quantile functions
  percentile_sets: lists of values, each for numpy.percentile at 5, 25, 50, 75, 95
  paper: the DSR paper's example (sr, v, n, t, skew, kurt)
and prints one JSON document of the results. Written from the papers' definitions, not from the Go code:
the moments are scipy's (skew and kurtosis with bias=True, kurtosis not excess), the Sharpe ratio is
mean / std(ddof=1), CSCV cuts the rows after the first T mod S into S equal blocks, takes every
itertools.combinations(range(S), S/2) as the in-sample blocks, and ranks with scipy.stats.rankdata
(method='average').
"""

import itertools
import json
import math
import sys

import numpy as np
from scipy import stats
from scipy.special import ndtr, ndtri


def psr(sr, sr_star, t, skew, kurt):
    return float(stats.norm.cdf((sr - sr_star) * math.sqrt(t - 1) / math.sqrt(1 - skew * sr + (kurt - 1) / 4 * sr**2)))


def expected_max_sharpe(n, v):
    g = np.euler_gamma
    return math.sqrt(v) * ((1 - g) * stats.norm.ppf(1 - 1 / n) + g * stats.norm.ppf(1 - 1 / (n * math.e)))


def sharpe(x):
    return x.mean(axis=0) / x.std(axis=0, ddof=1)


def cscv(m, s):
    t, n = m.shape
    rows = t // s
    m = m[t - rows * s:]
    blocks = [m[b * rows:(b + 1) * rows] for b in range(s)]
    lambdas, chosen, is_sr, oos_sr, ranks = [], [], [], [], []
    overfit = loss = 0
    for combo in itertools.combinations(range(s), s // 2):
        rest = [b for b in range(s) if b not in combo]
        ins = np.concatenate([blocks[b] for b in combo])
        out = np.concatenate([blocks[b] for b in rest])
        r_in, r_out = sharpe(ins), sharpe(out)
        best = int(np.argmax(r_in))
        rank = float(stats.rankdata(r_out, method="average")[best])
        omega = rank / (n + 1)
        lam = math.log(omega / (1 - omega))
        lambdas.append(lam)
        chosen.append(best)
        is_sr.append(float(r_in[best]))
        oos_sr.append(float(r_out[best]))
        ranks.append(rank)
        overfit += lam <= 0
        loss += out[:, best].mean() < 0
    c = len(lambdas)
    return {"pbo": overfit / c, "oos_loss": loss / c, "lambdas": lambdas, "chosen": chosen,
            "in_sample": is_sr, "out_of_sample": oos_sr, "ranks": ranks, "skipped": t - rows * s}


def main():
    with open(sys.argv[1]) as f:
        inp = json.load(f)
    t, n = inp["t"], inp["n"]
    m = np.fromfile(inp["matrix"], dtype="<f8").reshape(n, t).T  # T x N
    out = {"numpy": np.__version__, "scipy": __import__("scipy").__version__}

    means = m.mean(axis=0)
    stds = m.std(axis=0, ddof=1)
    skews = stats.skew(m, axis=0, bias=True)
    kurts = stats.kurtosis(m, axis=0, fisher=False, bias=True)
    srs = means / stds
    out["mean"], out["std"] = means.tolist(), stds.tolist()
    out["skew"], out["kurt"], out["sharpe"] = skews.tolist(), kurts.tolist(), srs.tolist()
    out["psr0"] = [psr(srs[j], 0.0, t, skews[j], kurts[j]) for j in range(n)]

    best = int(np.argmax(srs))
    v = float(np.var(srs, ddof=1))
    sr0 = expected_max_sharpe(n, v)
    out["dsr"] = {"best": best, "variance": v, "threshold": sr0, "dsr": psr(srs[best], sr0, t, skews[best], kurts[best])}

    out["cscv"] = cscv(m, inp["blocks"])

    out["cdf"] = [float(ndtr(x)) for x in inp["cdf_x"]]
    out["ppf"] = [float(ndtri(p)) for p in inp["ppf_p"]]
    out["percentiles"] = [np.percentile(np.array(vals), [5, 25, 50, 75, 95]).tolist() for vals in inp["percentile_sets"]]

    p = inp["paper"]
    p_sr0 = expected_max_sharpe(p["n"], p["v"])
    out["paper"] = {"sr0": p_sr0, "dsr": psr(p["sr"], p_sr0, p["t"], p["skew"], p["kurt"])}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()

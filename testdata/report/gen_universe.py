"""Writes a CSV of NSYM symbols (S000, S001, ...) x NTS one-minute timestamps of
random-walk closes: python3 gen_universe.py NSYM NTS PATH."""
import sys, random
nsym, nts, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
r = random.Random(1)
syms = ["S%03d" % i for i in range(nsym)]
px = [100.0]*nsym
with open(path, "w") as f:
    f.write("timestamp,symbol,open,high,low,close,volume\n")
    for t in range(nts):
        ts = 1767225600 + t*60
        for j,s in enumerate(syms):
            px[j] *= 1 + r.gauss(0, 0.002)
            p = round(px[j], 4)
            f.write(f"{ts},{s},{p},{p},{p},{p},100\n")

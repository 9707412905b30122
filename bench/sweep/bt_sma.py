"""The backtrader side of bench/sweep_bench.py backtrader: the same SMA
crossover (regime form, all-in market orders filled at the next open) as
backtest/testdata/sma_cross.py, optimised over the same 12-combination
grid with cerebro.optstrategy.

    PY bt_sma.py DATA.csv MAXCPUS

Prints one JSON line: the wall time and the final value per combination."""
import json
import sys
import time

import backtrader as bt


class SMACross(bt.Strategy):
    params = (("fast", 10), ("slow", 30))

    def __init__(self):
        self.fast = bt.indicators.SMA(self.data.close, period=self.p.fast)
        self.slow = bt.indicators.SMA(self.data.close, period=self.p.slow)

    def next(self):
        if not self.position and self.fast[0] > self.slow[0]:
            qty = int(0.99 * self.broker.getcash() / self.data.close[0])
            if qty > 0:
                self.buy(size=qty)
        elif self.position and self.fast[0] < self.slow[0]:
            self.sell(size=self.position.size)

    def stop(self):
        self.final = self.broker.getvalue()


def main():
    path, maxcpus = sys.argv[1], int(sys.argv[2])
    start = time.perf_counter()
    cerebro = bt.Cerebro(optreturn=False, maxcpus=maxcpus, stdstats=False)
    data = bt.feeds.GenericCSVData(dataname=path, dtformat="%Y-%m-%dT%H:%M:%SZ", timeframe=bt.TimeFrame.Minutes,
                                   datetime=0, open=2, high=3, low=4, close=5, volume=6, openinterest=-1)
    cerebro.adddata(data)
    cerebro.broker.setcash(100000.0)
    cerebro.optstrategy(SMACross, fast=[5, 10, 15], slow=[20, 30, 40, 50])
    runs = cerebro.run()
    finals = sorted(((r[0].p.fast, r[0].p.slow, r[0].final) for r in runs))
    print(json.dumps({"seconds": time.perf_counter() - start, "runs": len(finals), "finals": finals}))


if __name__ == "__main__":
    main()

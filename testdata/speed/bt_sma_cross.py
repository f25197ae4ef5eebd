#!/usr/bin/env python3
"""backtrader's side of speed.sh: the SMA crossover of examples/sma_cross.js (fast 10,
slow 30, 10 shares, commission 0.1%) on one CSV file, default runonce mode, no
analyzers. Prints the final value and the seconds from reading the CSV to the end of
the run (interpreter start-up and imports excluded, as in ../../../shared/reference)."""
import os
import sys
import time

sys.path.insert(0, os.environ.get("BACKTRADER", "/tmp/bt-py"))
import backtrader as bt  # noqa: E402


class SmaCross(bt.Strategy):
    params = dict(fast=10, slow=30, size=10)

    def __init__(self):
        self.cross = bt.ind.CrossOver(bt.ind.SMA(self.data.close, period=self.p.fast),
                                      bt.ind.SMA(self.data.close, period=self.p.slow))

    def next(self):
        if self.position.size == 0:
            if self.cross[0] > 0:
                self.buy(size=self.p.size)
        elif self.position.size > 0 and self.cross[0] < 0:
            self.close()


t0 = time.perf_counter()
cerebro = bt.Cerebro(stdstats=False)
cerebro.broker.setcash(10000.0)
cerebro.broker.setcommission(commission=0.001)
cerebro.adddata(bt.feeds.GenericCSVData(dataname=sys.argv[1], dtformat="%Y-%m-%d", datetime=0, open=1, high=2,
                                        low=3, close=4, volume=5, openinterest=-1, headers=True))
cerebro.addstrategy(SmaCross)
cerebro.run()
print("%.6f %r" % (time.perf_counter() - t0, cerebro.broker.getvalue()))

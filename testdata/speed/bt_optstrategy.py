#!/usr/bin/env python3
"""backtrader's side of a parameter study: `cerebro.optstrategy` over an SMA crossover grid,
to compare with `backtestd sweep` (docs/studies.md). Not run by CI.

The strategy is bt_sma_cross.py's (examples/sma_cross.js): buy 10 shares when flat and the
fast SMA crosses above the slow one, close the long position when it crosses below; cash
10,000, commission 0.1%. Every combination of --fast and --slow (start:stop:step, stop
included; by default fast 2..51 by 1 and slow 60..250 by 10, 1,000 combinations) runs on one
CSV file up to --to (inclusive) with backtrader's fastest settings: preload, runonce,
optdatas and optreturn (the results come back as bare parameters and analyzers), no
observers (stdstats=False), on --maxcpus processes (default all cores; 1 runs them in this
process, without a pool). Each run has the daily Sharpe ratio analyzer of
../backtrader/gen.py (daily returns, x sqrt(252), no risk-free rate; the engine's
`sharpe_ratio`, which sweep ranks by by default) and a tiny analyzer keeping the broker's
final value.

Prints one JSON line: the combinations run, the bars per run, the seconds from reading the
CSV to the end of the last run (interpreter start-up and imports excluded, as in
bt_sma_cross.py), the processes and the combination with the highest final value, to check
against sweep's results for the same grid (`--objective final_value`).

Usage, from the repository root, with backtrader's source (mementum/backtrader, pure
Python, e.g. 1.9.78.123, commit b853d7c9) unpacked as described in ../backtrader/README.md:

    python3 testdata/speed/bt_optstrategy.py --backtrader /tmp/bt-py [--limit 20]
    BACKTRADER=/tmp/bt-py python3 testdata/speed/bt_optstrategy.py --maxcpus 1

and the service's side of the same study:

    go run ./cmd/backtestd sweep --strategy examples/sma_cross.js \\
        --data ../shared/reference/data/orcl.csv --to 2009-12-31 \\
        --param fast=2:51:1 --param slow=60:250:10

--limit N runs only the first N combinations of the grid (fast varies slowest).
"""
import argparse
import datetime
import itertools
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.environ.get("BACKTESTD_REFERENCE_DIR", os.path.join(HERE, "..", "..", "..", "shared",
                                                                             "reference")), "data", "orcl.csv")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description="Time backtrader's optstrategy on an SMA crossover grid.")
    ap.add_argument("--data", default=DATA, help="CSV bars (date,open,high,low,close,volume; default %(default)s)")
    ap.add_argument("--from", dest="fromdate", default=None, help="first date used, YYYY-MM-DD (default: the file's first)")
    ap.add_argument("--to", default="2009-12-31", help="last date used, YYYY-MM-DD, inclusive (default %(default)s)")
    ap.add_argument("--fast", default="2:51:1", help="fast SMA periods, start:stop:step, stop included")
    ap.add_argument("--slow", default="60:250:10", help="slow SMA periods, start:stop:step, stop included")
    ap.add_argument("--maxcpus", type=int, default=None, help="processes (default: all cores)")
    ap.add_argument("--limit", type=int, default=None, help="run only the first N combinations")
    ap.add_argument("--backtrader", default=os.environ.get("BACKTRADER", "/tmp/bt-py"),
                    help="directory holding backtrader's source (default $BACKTRADER or /tmp/bt-py)")
    return ap.parse_args(argv)


# backtrader must be importable before the classes below are defined at module level, where
# multiprocessing's pickling finds them (a worker that imports this file gets the same argv).
sys.path.insert(0, parse_args().backtrader)
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


class FinalValue(bt.Analyzer):
    """The broker's value at the end of the run and the bars the strategy saw: with
    optreturn the strategy itself does not come back from the run."""

    def stop(self):
        self.rets["final_value"] = self.strategy.broker.getvalue()
        self.rets["bars"] = len(self.strategy)


def span(s):
    """start:stop:step, stop included, as sweep's --param."""
    start, stop, step = (int(x) for x in s.split(":"))
    return list(range(start, stop + 1, step))


def main():
    a = parse_args()
    fast, slow = span(a.fast), span(a.slow)
    todate = datetime.datetime.strptime(a.to, "%Y-%m-%d").date()  # a date: backtrader ends it at the session end
    fromdate = datetime.datetime.strptime(a.fromdate, "%Y-%m-%d") if a.fromdate else None

    t0 = time.perf_counter()
    cerebro = bt.Cerebro(stdstats=False, maxcpus=a.maxcpus, optreturn=True, optdatas=True, preload=True,
                         runonce=True)
    cerebro.broker.setcash(10000.0)
    cerebro.broker.setcommission(commission=0.001)
    cerebro.adddata(bt.feeds.GenericCSVData(dataname=a.data, dtformat="%Y-%m-%d", datetime=0, open=1, high=2,
                                            low=3, close=4, volume=5, openinterest=-1, headers=True, todate=todate,
                                            fromdate=fromdate))
    cerebro.optstrategy(SmaCross, fast=fast, slow=slow)
    if a.limit is not None:
        # optstrategy queued the product of the values (fast outer, slow inner): keep its head
        cerebro.strats[-1] = list(itertools.islice(cerebro.strats[-1], a.limit))
    cerebro.addanalyzer(bt.analyzers.SharpeRatio, _name="sharpe_d", timeframe=bt.TimeFrame.Days, factor=252,
                        annualize=True, riskfreerate=0.0)
    cerebro.addanalyzer(FinalValue, _name="final")
    runs = cerebro.run()
    seconds = time.perf_counter() - t0

    best, bars = None, set()
    for run in runs:
        r = run[0]
        fin = r.analyzers.final.get_analysis()
        bars.add(fin["bars"])
        if best is None or fin["final_value"] > best["final_value"]:
            best = dict(fast=r.params.fast, slow=r.params.slow, final_value=fin["final_value"],
                        sharpe=r.analyzers.sharpe_d.get_analysis()["sharperatio"])
    print(json.dumps(dict(tool="backtrader optstrategy", combinations=len(runs),
                          bars=bars.pop() if len(bars) == 1 else sorted(bars), seconds=round(seconds, 3),
                          maxcpus=a.maxcpus or os.cpu_count(), best=best)))


if __name__ == "__main__":
    main()

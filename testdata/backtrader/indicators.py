#!/usr/bin/env python3
"""Makes backtrader fixtures for the engine's indicators: every line of each indicator
below, bar by bar (null during its warm-up), on the shared market data. Not run by CI;
internal/jsrt's TestIndicatorParity compares the engine's values with them to 1e-9
relative, and their warm-up bar for bar.

    BACKTRADER=/tmp/bt-py python3 testdata/backtrader/indicators.py
"""
import json
import math
import os
import sys

sys.path.insert(0, os.environ.get("BACKTRADER", "/tmp/bt-py"))
import backtrader as bt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BARS = 1500  # the first bars of each file are kept: enough for every warm-up and regime
DATA = os.environ.get("BACKTESTD_REFERENCE_DIR", os.path.join(HERE, "..", "..", "..", "shared", "reference"))
DATA = os.path.join(DATA, "data")

# name -> (backtrader indicator, its params, {our line name: backtrader line name}, input)
# input "close" feeds the close, "data" the whole feed.
INDICATORS = {
    "DEMA": (bt.ind.DEMA, dict(period=30), {"dema": "dema"}, "close"),
    "TEMA": (bt.ind.TEMA, dict(period=30), {"tema": "tema"}, "close"),
    "HMA": (bt.ind.HMA, dict(period=30), {"hma": "hma"}, "close"),
    "ZLEMA": (bt.ind.ZLEMA, dict(period=30), {"zlema": "zlema"}, "close"),
    "TRIX": (bt.ind.TRIX, dict(period=15), {"trix": "trix"}, "close"),
    "KAMA": (bt.ind.KAMA, dict(period=30, fast=2, slow=30), {"kama": "kama"}, "close"),
    "CCI": (bt.ind.CCI, dict(period=20, factor=0.015), {"cci": "cci"}, "data"),
    "WilliamsR": (bt.ind.WilliamsR, dict(period=14), {"percR": "percR"}, "data"),
    "Aroon": (bt.ind.AroonUpDownOscillator, dict(period=14), {"up": "aroonup", "down": "aroondown", "osc": "aroonosc"}, "data"),
    "UltimateOscillator": (bt.ind.UltimateOscillator, dict(p1=7, p2=14, p3=28), {"uo": "uo"}, "data"),
    "DMI": (bt.ind.DirectionalMovement, dict(period=14), {"plusDI": "plusDI", "minusDI": "minusDI", "adx": "adx", "adxr": "adxr"}, "data"),
    "ParabolicSAR": (bt.ind.ParabolicSAR, dict(af=0.02, afmax=0.20), {"psar": "psar"}, "data"),
    "Ichimoku": (bt.ind.Ichimoku, dict(tenkan=9, kijun=26, senkou=52, senkou_lead=26),
                 {"tenkan": "tenkan_sen", "kijun": "kijun_sen", "senkouA": "senkou_span_a", "senkouB": "senkou_span_b"}, "data"),
}


class Record(bt.Strategy):
    def __init__(self):
        self.inds = {}
        for name, (cls, params, lines, inp) in INDICATORS.items():
            src = self.data.close if inp == "close" else self.data
            self.inds[name] = (cls(src, **params), lines)
        self.values = {name: {ours: [] for ours in lines} for name, (_, _, lines, _) in INDICATORS.items()}

    def prenext(self):
        self.next()

    def next(self):
        for name, (ind, lines) in self.inds.items():
            for ours, theirs in lines.items():
                v = getattr(ind.lines, theirs)[0]
                self.values[name][ours].append(None if math.isnan(v) else v)


def run(data):
    cerebro = bt.Cerebro(stdstats=False)
    cerebro.adddata(bt.feeds.GenericCSVData(dataname=os.path.join(DATA, data), dtformat="%Y-%m-%d", datetime=0, open=1,
                                            high=2, low=3, close=4, volume=5, openinterest=-1, headers=True))
    cerebro.addstrategy(Record)
    strat = cerebro.run()[0]
    out = dict(engine="backtrader %s" % bt.__version__, data=data, bars=BARS,
               indicators={name: dict(params=params, lines={k: v[:BARS] for k, v in strat.values[name].items()})
                           for name, (_, params, _, _) in INDICATORS.items()})
    path = os.path.join(HERE, "indicators", "%s.json" % data[:-4])
    with open(path, "w") as f:
        json.dump(out, f)
    print("%s: %d indicators, %d bars" % (os.path.relpath(path), len(INDICATORS), BARS))


if __name__ == "__main__":
    for data in sys.argv[1:] or ["orcl.csv", "nvda.csv"]:
        run(data)

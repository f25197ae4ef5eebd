#!/usr/bin/env python3
"""Reads backtrader's own indicator tests (tests/test_ind_*.py: each checks an indicator's
lines at three bars, formatted '%f', on tests/datas/2006-day-001.txt) and writes them as
a table, indicators/bttests/tests.json, with that data file beside it. Not run by CI;
internal/jsrt's TestBacktraderIndicatorTests runs the table against the registry.

    BACKTRADER=/tmp/bt-py python3 testdata/backtrader/indicators_bttests.py
"""
import glob
import importlib
import inspect
import json
import os
import shutil
import sys

BT = os.environ.get("BACKTRADER", "/tmp/bt-py")
sys.path.insert(0, BT)
sys.path.insert(0, os.path.join(BT, "tests"))
import backtrader as bt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "indicators", "bttests")


def canonical(cls):
    while cls.__dict__.get("aliased"):
        cls = cls.__bases__[0]
    return cls.__name__


def value(v):
    if inspect.isclass(v):
        return canonical(v)
    return v


def main():
    tests = []
    for path in sorted(glob.glob(os.path.join(BT, "tests", "test_ind_*.py"))):
        name = os.path.basename(path)[:-3]
        mod = importlib.import_module(name)
        src = open(path).read()
        kinds = mod.chkind if isinstance(mod.chkind, list) else [mod.chkind]
        t = dict(test=name, cls=canonical(kinds[0]), also=[canonical(k) for k in kinds[1:]],
                 lines=list(kinds[0].lines.getlinealiases()),
                 args={k: value(v) for k, v in getattr(mod, "chkargs", {}).items()},
                 datas=mod.chkdatas, minperiod=mod.chkmin,
                 # each line's three values; a list where backtrader accepts any of them
                 vals=[[list(v) if isinstance(v, tuple) else v for v in line] for line in mod.chkvals])
        # test_ind_envelope and test_ind_oscillator give the indicator an SMA of the data
        # (self.p.inddata = [btind.MovAv.SMA(self.data)]), not the data
        if "inddata" in src:
            assert "btind.MovAv.SMA(self.data)" in src, name
            t["input"] = "SMA(30)"
        tests.append(t)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "tests.json"), "w") as f:
        json.dump(dict(engine="backtrader %s" % bt.__version__, data="2006-day-001.txt", tests=tests), f, indent=1)
        f.write("\n")
    shutil.copy(os.path.join(BT, "datas", "2006-day-001.txt"), os.path.join(OUT, "2006-day-001.txt"))
    print("%d tests" % len(tests))


if __name__ == "__main__":
    main()

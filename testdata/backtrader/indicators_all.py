#!/usr/bin/env python3
"""Makes backtrader fixtures for every indicator class `backtrader.indicators` exports (and
the Fractal study): each class's parameters, lines, aliases and minimum period, and every
line of it bar by bar (null during its warm-up) over the first 1,500 bars of the shared
market data, with its default parameters and with a few other sets. Not run by CI;
internal/jsrt's TestRegistryParity compares the engine's values with them.

    BACKTRADER=/tmp/bt-py /usr/bin/python3 testdata/backtrader/indicators_all.py

Writes indicators/all/<data>.json.gz for orcl and nvda (one feed each) and
indicators/all/orcl_nvda.json.gz (the indicators of two feeds: OLS, cointegration). Needs
numpy, pandas and statsmodels (Debian's python3-numpy, python3-pandas, python3-statsmodels)
for Hurst, OLS and CointN.
"""
import gzip
import inspect
import json
import math
import os
import sys

sys.path.insert(0, os.environ.get("BACKTRADER", "/tmp/bt-py"))
import backtrader as bt  # noqa: E402
import backtrader.indicators as btind  # noqa: E402
import backtrader.studies  # noqa: E402,F401  (the Fractal study)

HERE = os.path.dirname(os.path.abspath(__file__))
BARS = 750  # the data files are cut to their first bars: enough for every warm-up and regime
DATA = os.environ.get("BACKTESTD_REFERENCE_DIR", os.path.join(HERE, "..", "..", "..", "shared", "reference"))
DATA = os.path.join(DATA, "data")
OUT = os.path.join(HERE, "indicators", "all")

# Base classes with no lines of their own or that need a subclass's function: listed in
# the fixtures' "abstract" with the reason, no values.
ABSTRACT = {
    "Indicator": "base class of every indicator: no lines",
    "PeriodN": "base class of indicators with a period: no lines",
    "OperationN": "base class: a subclass provides the function, no lines",
    "BaseApplyN": "base class of ApplyN: no lines",
    "MovingAverageBase": "base class of the moving averages: no lines",
    "OscillatorMixIn": "mix-in that makes the *Oscillator classes: no lines",
}

# Names `backtrader.indicators` exports that are module variables leaking from loops
# (`for movav in ...`, `newcls = type(...)`), not names of a class.
LEAKED = {"movav", "newcls"}

# Classes that take two feeds (`_mindatas = 2`): computed on orcl and nvda together.
TWO_FEEDS = {"OLS_Slope_InterceptN", "OLS_TransformationN", "OLS_BetaN", "CointN"}

# Classes whose inputs are two lines of the feed rather than the feed.
TWO_LINES = {"CrossOver", "CrossUp", "CrossDown", "NonZeroDifference", "Oscillator"}

# Functions a fixture passes as parameters, by the name the fixture records.
FUNCS = {"max": max, "min": min, "sum": math.fsum}


def funcname(f):
    for k, v in FUNCS.items():
        if f is v:
            return k
    return getattr(f, "__name__", repr(f))


# Cases besides the defaults: class -> list of (params, positional args after the datas).
# Parameters that are functions are given by name (FUNCS) and recorded so.
EXTRA = {
    "ApplyN": [(dict(period=5, func="max"), ()), (dict(period=10, func="sum"), ())],
    "FindFirstIndex": [(dict(period=10, _evalfunc="max"), ())],
    "FindLastIndex": [(dict(period=10, _evalfunc="min"), ())],
    "FindFirstIndexHighest": [(dict(period=10), ())],
    "FindFirstIndexLowest": [(dict(period=10), ())],
    "FindLastIndexHighest": [(dict(period=10), ())],
    "FindLastIndexLowest": [(dict(period=10), ())],
    "ReduceN": [(dict(period=5, function="max"), ())],
    "WeightedAverage": [(dict(period=5, weights=[1.0, 2.0, 3.0, 4.0, 5.0], coef=1.0 / 15.0), ())],
    "Highest": [(dict(period=14), ())],
    "Lowest": [(dict(period=14), ())],
    "SumN": [(dict(period=14), ())],
    "AllN": [(dict(period=3), ())],
    "AnyN": [(dict(period=3), ())],
    "Average": [(dict(period=10), ())],
    "ExponentialSmoothing": [(dict(period=10), ()), (dict(period=10, alpha=0.3), ())],
    # alpha is a line here: the feed's low over its high, which lies in (0, 1]
    "ExponentialSmoothingDynamic": [(dict(period=10, alpha="low/high"), ())],
    "Accum": [(dict(seed=100.0), ())],
    "UpDay": [(dict(period=3), ())],
    "DownDay": [(dict(period=3), ())],
    "UpDayBool": [(dict(period=3), ())],
    "DownDayBool": [(dict(period=3), ())],
    "SimpleMovingAverage": [(dict(period=15), ())],
    "ExponentialMovingAverage": [(dict(period=15), ())],
    "SmoothedMovingAverage": [(dict(period=15), ())],
    "WeightedMovingAverage": [(dict(period=15), ())],
    "DoubleExponentialMovingAverage": [(dict(period=15), ())],
    "TripleExponentialMovingAverage": [(dict(period=15), ())],
    "HullMovingAverage": [(dict(period=15), ())],
    "ZeroLagExponentialMovingAverage": [(dict(period=15), ())],
    "AdaptiveMovingAverage": [(dict(period=15, fast=3, slow=20), ())],
    "DicksonMovingAverage": [(dict(period=15, gainlimit=30, hperiod=5), ())],
    "ZeroLagIndicator": [(dict(period=15, gainlimit=30), ())],
    "SimpleMovingAverageEnvelope": [(dict(period=15, perc=5.0), ())],
    "ExponentialMovingAverageEnvelope": [(dict(period=15, perc=1.0), ())],
    "Envelope": [(dict(perc=4.0), ())],
    "SimpleMovingAverageOscillator": [(dict(period=15), ())],
    "RelativeStrengthIndex": [(dict(period=10), ()), (dict(period=10, safediv=True, lookback=3), ()),
                              (dict(movav="ExponentialMovingAverage"), ())],
    "RSI_SMA": [(dict(period=10), ())],
    "RSI_EMA": [(dict(period=10), ())],
    "RelativeMomentumIndex": [(dict(period=14, lookback=3), ())],
    "LaguerreRSI": [(dict(period=6, gamma=0.7), ())],
    "LaguerreFilter": [(dict(gamma=0.7), ())],
    "StochasticFast": [(dict(period=10, period_dfast=5), ())],
    "Stochastic": [(dict(period=10, period_dfast=5, period_dslow=5), ()),
                   (dict(movav="ExponentialMovingAverage"), ())],
    "StochasticFull": [(dict(period=10, period_dfast=5, period_dslow=5), ())],
    "MACD": [(dict(period_me1=5, period_me2=15, period_signal=5), ())],
    "MACDHisto": [(dict(period_me1=5, period_me2=15, period_signal=5), ())],
    "BollingerBands": [(dict(period=10, devfactor=1.5), ()), (dict(movav="ExponentialMovingAverage"), ())],
    "BollingerBandsPct": [(dict(period=10, devfactor=1.5), ())],
    "AverageTrueRange": [(dict(period=10), ()), (dict(movav="SimpleMovingAverage"), ())],
    "StandardDeviation": [(dict(period=10), ())],
    "MeanDeviation": [(dict(period=10), ())],
    "DirectionalMovement": [(dict(period=10), ())],
    "CommodityChannelIndex": [(dict(period=10, factor=0.02), ())],
    "PercentagePriceOscillator": [(dict(period1=5, period2=15, period_signal=5), ())],
    "PriceOscillator": [(dict(period1=5, period2=15), ())],
    "KnowSureThing": [(dict(rp1=5, rp2=10, rp3=15, rp4=20, rsignal=5), ())],
    "TrueStrengthIndicator": [(dict(period1=15, period2=7), ())],
    "PivotPoint": [(dict(open=True), ()), (dict(close=True), ())],
    "FibonacciPivotPoint": [(dict(open=True, level1=0.5), ())],
    "DemarkPivotPoint": [(dict(open=True), ())],
    "Ichimoku": [(dict(tenkan=7, kijun=22, senkou=44, senkou_lead=22, chikou=22), ())],
    "HurstExponent": [(dict(period=100), ()), (dict(period=60, lag_start=5, lag_end=20), ())],
    "PercentRank": [(dict(period=20), ())],
    "Momentum": [(dict(period=5), ())],
    "RateOfChange": [(dict(period=5), ())],
    "PercentChange": [(dict(period=5), ())],
    "Vortex": [(dict(period=7), ())],
    "ParabolicSAR": [(dict(af=0.03, afmax=0.3), ())],
    "AroonUpDownOscillator": [(dict(period=25), ())],
    "UltimateOscillator": [(dict(p1=5, p2=10, p3=20), ())],
    "WilliamsR": [(dict(period=10), ())],
    "TrixSignal": [(dict(period=10, sigperiod=5), ())],
    "haDelta": [(dict(period=5, autoheikin=False), ())],
    "DV2": [(dict(period=50, maperiod=3), ())],
    "DetrendedPriceOscillator": [(dict(period=10), ())],
    "PrettyGoodOscillator": [(dict(period=10), ())],
    "AwesomeOscillator": [(dict(fast=3, slow=20), ())],
    "AccelerationDecelerationOscillator": [(dict(period=3), ())],
    "Fractal": [(dict(period=7, bardist=0.02, shift_to_potential_fractal=3), ())],
    "OLS_Slope_InterceptN": [(dict(period=30), ())],
    "OLS_TransformationN": [(dict(period=30), ())],
    "CointN": [(dict(period=30), ()), (dict(period=30, trend="ct"), ())],
}

# Parameters that name a function in the defaults of a class: ReduceN's is positional.
POSITIONAL = {"ReduceN": ["function"]}
# The cases of classes with a required function are only those in EXTRA.
NEEDS_FUNC = {"ExponentialSmoothingDynamic", "ApplyN", "FindFirstIndex", "FindLastIndex", "ReduceN", "WeightedAverage"}


def exported():
    """Canonical class name -> (class, aliases), for every Indicator subclass exported."""
    names = {}
    for n in dir(btind):
        c = getattr(btind, n)
        if not (inspect.isclass(c) and issubclass(c, bt.Indicator)) or n in LEAKED:
            continue
        canon = c
        while canon.__dict__.get("aliased"):
            canon = canon.__bases__[0]
        names.setdefault(canon.__name__, (canon, set()))[1].add(n)
    names["Fractal"] = (bt.studies.Fractal, {"Fractal"})
    out = {}
    for name, (cls, ns) in sorted(names.items()):
        out[name] = (cls, sorted(ns - {name}))
    return out


def jsonvalue(v):
    if inspect.isclass(v):
        return v.__dict__.get("aliased") or v.__name__
    if callable(v):
        return funcname(v)
    if isinstance(v, tuple):
        return list(v)
    return v


def kind(v):
    if inspect.isclass(v):
        return "movav"
    if callable(v):
        return "func"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "str"
    if isinstance(v, (list, tuple)):
        return "list"
    return "none"


def describe(name, cls, aliases):
    params = [dict(name=k, default=jsonvalue(v), kind=kind(v)) for k, v in cls.params._getitems()]
    for p in params:
        if p["kind"] == "none" and p["name"] in ("func", "_evalfunc"):
            p["kind"] = "func"
    return dict(module=cls.__module__.replace("backtrader.", ""), aliases=aliases,
                lines=list(cls.lines.getlinealiases()), params=params)


def resolve(params):
    """Fixture params (functions and moving averages by name) to backtrader's."""
    out = {}
    for k, v in params.items():
        if isinstance(v, str) and v in FUNCS:
            v = FUNCS[v]
        elif isinstance(v, str) and hasattr(btind, v) and inspect.isclass(getattr(btind, v)):
            v = getattr(btind, v)
        elif isinstance(v, list):
            v = tuple(v)
        out[k] = v
    return out


def cases(classes, pair):
    """(case id, class name, params, inputs) for every case of the run."""
    out = []
    for name, (cls, _) in classes.items():
        if name in ABSTRACT or (name in TWO_FEEDS) != pair:
            continue
        sets = [] if name in NEEDS_FUNC else [{}]
        sets += [p for p, _ in EXTRA.get(name, [])]
        for i, params in enumerate(sets):
            inputs = ["data0", "data1"] if pair else ["close", "open"] if name in TWO_LINES else ["data"]
            out.append(("%s#%d" % (name, i) if i else name, name, params, inputs))
    return out


def build(strategy, name, cls, params, inputs):
    params = resolve(params)
    args = []
    for inp in inputs:
        if inp == "data":
            args.append(strategy.data)
        elif inp == "data0":
            args.append(strategy.datas[0])
        elif inp == "data1":
            args.append(strategy.datas[1])
        else:
            args.append(getattr(strategy.data, inp))
    if params.get("alpha") == "low/high":
        params["alpha"] = strategy.data.low / strategy.data.high
    for p in POSITIONAL.get(name, []):
        args.append(params.pop(p))
    return cls(*args, **params)


class Record(bt.Strategy):
    params = (("cases", None), ("classes", None))

    def __init__(self):
        self.inds = {}
        self.errors = {}
        for cid, name, params, inputs in self.p.cases:
            try:
                self.inds[cid] = build(self, name, self.p.classes[name][0], params, inputs)
            except Exception as e:  # recorded: e.g. OLS_BetaN calls pandas.ols, gone from pandas
                self.errors[cid] = "%s: %s" % (type(e).__name__, e)
        self.seen = {cid: [[] for _ in ind.lines] for cid, ind in self.inds.items()}

    def prenext(self):
        self.next()

    def next(self):
        for cid, ind in self.inds.items():
            for i, line in enumerate(ind.lines):
                self.seen[cid][i].append(line[0])


def value(v):
    return None if v is None or math.isnan(v) else v


def differs(a, b):
    if (a is None) != (b is None):
        return True
    return a is not None and abs(a - b) > 1e-9 * max(1.0, abs(a), abs(b))


def run(files, case, classes, runonce):
    """One case in a run of its own: a division by zero in one indicator (backtrader raises
    it) or HeikinAshi (which turns runonce off for the whole run) leaves the others be."""
    cerebro = bt.Cerebro(stdstats=False, runonce=runonce)
    for f in files:
        cerebro.adddata(bt.feeds.GenericCSVData(dataname=f, dtformat="%Y-%m-%d", datetime=0, open=1, high=2, low=3,
                                                close=4, volume=5, openinterest=-1, headers=True))
    cerebro.addstrategy(Record, cases=[case], classes=classes)
    try:
        return cerebro.run()[0], None
    except Exception as e:  # recorded: backtrader itself cannot compute this case on the data
        return None, "%s: %s" % (type(e).__name__, e)


def cut(data, tmp, start):
    """The first BARS rows of the data file from the date start on, in a file of its own."""
    with open(os.path.join(DATA, data)) as f:
        rows = f.read().splitlines()
    rows = rows[:1] + [r for r in rows[1:] if r[:10] >= start][:BARS]
    path = os.path.join(tmp, data)
    with open(path, "w") as f:
        f.write("\n".join(rows) + "\n")
    return path


def main(datas, tmp):
    # two feeds from a date both have, so that their bars match one for one
    start = "2000-01-01" if len(datas) == 2 else ""
    files = [cut(d, tmp, start) for d in datas]
    classes = exported()
    cs = cases(classes, len(datas) == 2)
    out_cases = []
    for c in cs:
        cid, name, params, inputs = c
        case = dict(id=cid, cls=name, params=params, inputs=inputs)
        once, err = run(files, c, classes, True)
        if err is None and cid in once.errors:
            err = once.errors[cid]
        nxt, nerr = (None, err) if err else run(files, c, classes, False)
        if err or nerr:
            case["error"] = err or nerr
            out_cases.append(case)
            continue
        ind = once.inds[cid]
        case["minperiod"] = ind._minperiod
        lines = {}
        nextlines = {}
        for i, lname in enumerate(classes[name][0].lines.getlinealiases()):
            arr = [value(v) for v in list(ind.lines[i].array)[:BARS]]
            arr += [None] * (BARS - len(arr))
            lines[lname] = arr
            seen = [value(v) for v in nxt.seen[cid][i][:BARS]]
            if any(differs(a, b) for a, b in zip(arr, seen)):
                nextlines[lname] = seen
        case["lines"] = lines
        if nextlines:
            # what a strategy reads at [0] bar by bar (runonce=False) where it differs from
            # the line as it stands after the run: lines written into past bars or ahead
            case["next_lines"] = nextlines
        out_cases.append(case)
    used = {name for _, name, _, _ in cs}
    out = dict(engine="backtrader %s" % bt.__version__, datas=datas, start=start or None, bars=BARS,
               classes={n: describe(n, c, a) for n, (c, a) in classes.items() if n in used},
               abstract=ABSTRACT if len(datas) == 1 else {}, cases=out_cases)
    name = "_".join(d[:-4] for d in datas)
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "%s.json.gz" % name)
    # gzip (about a fifth of the JSON), with no name or time in its header so that a run
    # that changes nothing writes the same bytes
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
        f.write(json.dumps(out, separators=(",", ":")).encode() + b"\n")
    print("%s: %d classes, %d cases, %d errors" % (os.path.relpath(path), len(out["classes"]), len(out_cases),
                                                    sum(1 for c in out_cases if "error" in c)))


if __name__ == "__main__":
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for datas in ([["orcl.csv"], ["nvda.csv"], ["orcl.csv", "nvda.csv"]]):
            main(datas, tmp)

#!/usr/bin/env python3
"""Expected figures of TestRiskGroup (internal/engine/riskstats_test.go).

Each function transcribes the quantstats function of the same name (ranaroussi/quantstats,
quantstats/stats.py at fbd10da) and the pandas reductions it calls (Series.std, skew,
kurtosis, quantile), in plain Python so the script runs without numpy or pandas:

    python3 internal/engine/testdata/riskstats.py

Returns are the curve's returns per bar, the first against the initial cash; periods is
252 (daily bars). value_at_risk is the historical 5% quantile (the issue asks for it), where
quantstats uses a normal distribution; expected_shortfall is quantstats'
conditional_value_at_risk over that value.
"""
import math

PERIODS = 252


def mean(r):
    return sum(r) / len(r)


def std(r):  # pandas Series.std, ddof=1
    m = mean(r)
    return math.sqrt(sum((x - m) ** 2 for x in r) / (len(r) - 1))


def quantile(r, q):  # pandas Series.quantile, linear interpolation
    s = sorted(r)
    h = (len(s) - 1) * q
    lo = math.floor(h)
    if lo + 1 >= len(s):
        return s[-1]
    return s[lo] + (h - lo) * (s[lo + 1] - s[lo])


def zero_fperr(x):
    return 0.0 if abs(x) < 1e-14 else x


def skew(r):  # pandas nanops.nanskew
    n = len(r)
    if n < 3:
        return None
    m = mean(r)
    m2 = zero_fperr(sum((x - m) ** 2 for x in r))
    m3 = zero_fperr(sum((x - m) ** 3 for x in r))
    if m2 == 0:
        return 0.0
    return (n * (n - 1) ** 0.5 / (n - 2)) * (m3 / m2 ** 1.5)


def kurtosis(r):  # pandas nanops.nankurt
    n = len(r)
    if n < 4:
        return None
    m = mean(r)
    m2 = sum((x - m) ** 2 for x in r)
    m4 = sum((x - m) ** 4 for x in r)
    adj = 3 * (n - 1) ** 2 / ((n - 2) * (n - 3))
    num = zero_fperr(n * (n + 1) * (n - 1) * m4)
    den = zero_fperr((n - 2) * (n - 3) * m2 ** 2)
    if den == 0:
        return 0.0
    return num / den - adj


def drawdown_series(r):  # stats.to_drawdown_series: prices from 1, phantom baseline 1
    prices, g = [], 1.0
    for x in r:
        g *= 1 + x
        prices.append(g)
    ext = [1.0] + prices
    out, peak = [], -math.inf
    for p in ext:
        peak = max(peak, p)
        out.append(p / peak - 1)
    return out[1:]


def max_drawdown(r):  # stats.max_drawdown (the phantom point included in the minimum)
    return min([0.0] + drawdown_series(r))


def cagr(r):  # stats.cagr
    total = 1.0
    for x in r:
        total *= 1 + x
    total -= 1
    years = len(r) / PERIODS
    return abs(total + 1.0) ** (1.0 / years) - 1


def sortino(r):
    down = math.sqrt(sum(x * x for x in r if x < 0) / len(r))
    if down == 0:
        return None
    return mean(r) / down * math.sqrt(PERIODS)


def calmar(r):
    dd = max_drawdown(r)
    return None if dd == 0 else cagr(r) / abs(dd)


def omega(r):
    if len(r) < 2:
        return None
    num = sum(x for x in r if x > 0)
    den = -sum(x for x in r if x < 0)
    return num / den if den > 0 else None


def value_at_risk(r):
    return quantile(r, 0.05)


def expected_shortfall(r):  # stats.conditional_value_at_risk over the historical VaR
    v = value_at_risk(r)
    below = [x for x in r if x < v]
    return mean(below) if below else v


def tail_ratio(r):
    lo = quantile(r, 0.05)
    return None if lo == 0 else abs(quantile(r, 0.95) / lo)


def ulcer_index(r):
    dd = drawdown_series(r)
    return math.sqrt(sum(d * d for d in dd) / (len(r) - 1))


def kelly_criterion(r):
    wins = [x for x in r if x > 0]
    losses = [x for x in r if x < 0]
    if not wins or not losses:
        return None  # payoff_ratio is NaN
    payoff = mean(wins) / abs(mean(losses))
    nonzero = [x for x in r if x != 0]
    win_prob = len(wins) / len(nonzero)
    return (payoff * win_prob - (1 - win_prob)) / payoff


def probabilistic_sharpe_ratio(r):
    base = mean(r) / std(r)
    sk, ku = skew(r), kurtosis(r)
    n = len(r)
    sigma = math.sqrt((1 + 0.5 * base ** 2 - sk * base + ((ku - 3) / 4) * base ** 2) / (n - 1))
    return 0.5 * math.erfc(-(base / sigma) / math.sqrt(2))


def consecutive(r, sign):
    best = run = 0
    for x in r:
        run = run + 1 if x * sign > 0 else 0
        best = max(best, run)
    return best


def recovery_factor(r):
    dd = max_drawdown(r)
    return None if dd == 0 else abs(sum(r)) / abs(dd)


CASES = {
    "mixed": (100.0, [101, 99, 102, 102, 98, 103, 105, 104]),
    "first bar a loss": (100.0, [95, 97, 96, 99, 101]),
}

for name, (cash, values) in CASES.items():
    prev, r = cash, []
    for v in values:
        r.append(v / prev - 1)
        prev = v
    print(f"{name}:")
    for key, f in [
        ("sortino_ratio", sortino), ("calmar_ratio", calmar), ("omega_ratio", omega),
        ("value_at_risk", value_at_risk), ("expected_shortfall", expected_shortfall),
        ("tail_ratio", tail_ratio), ("ulcer_index", ulcer_index),
        ("kelly_criterion", kelly_criterion), ("skew", skew), ("kurtosis", kurtosis),
        ("probabilistic_sharpe_ratio", probabilistic_sharpe_ratio),
        ("max_consecutive_wins", lambda r: consecutive(r, 1)),
        ("max_consecutive_losses", lambda r: consecutive(r, -1)),
        ("recovery_factor", recovery_factor),
    ]:
        print(f"  {key}: {f(r)!r}")

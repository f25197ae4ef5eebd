#!/usr/bin/env python3
"""Writes N daily bars (weekdays from 1700-01-01) of a seeded random walk as CSV to
stdout, for speed.sh."""
import datetime
import random
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
random.seed(7)
d, p, out = datetime.date(1700, 1, 1), 100.0, ["date,open,high,low,close,volume"]
while len(out) <= n:
    if d.weekday() < 5:
        o, c = p, max(1.0, p * (1 + random.gauss(0, 0.01)))
        h, lo = max(o, c) * (1 + abs(random.gauss(0, 0.003))), min(o, c) * (1 - abs(random.gauss(0, 0.003)))
        out.append("%s,%.4f,%.4f,%.4f,%.4f,%d" % (d.isoformat(), o, h, lo, c, random.randint(1000, 100000)))
        p = c
    d += datetime.timedelta(days=1)
sys.stdout.write("\n".join(out) + "\n")

#!/usr/bin/env python3
"""Writes data/ESH1.csv … data/ESH2.csv, five quarterly futures contracts for the chain and
rollover fixtures (gen.py's chain_* and rollover_*): each holds orcl's bars (the shared
data) from 100 days before the previous contract's expiry (the third Friday of its month)
to its own expiry, prices 0.5% higher per later contract (contango), its volume rising from
5% of orcl's to all of it over 140 days and falling to a tenth over the 5 days before its
expiry, so that the next contract's volume overtakes it on the Tuesday of the expiry week. Deterministic: run it again and nothing changes.

    BACKTESTD_REFERENCE_DIR=/work/shared/reference python3 testdata/backtrader/futures_data.py
"""
import calendar
import csv
import datetime
import os

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.environ.get("BACKTESTD_REFERENCE_DIR", os.path.join(HERE, "..", "..", "..", "shared", "reference"))

CONTRACTS = [("H1", 2001, 3), ("M1", 2001, 6), ("U1", 2001, 9), ("Z1", 2001, 12), ("H2", 2002, 3)]


def third_friday(y, m):
    return datetime.date(y, m, 21 - (calendar.weekday(y, m, 1) + 2) % 7)


def main():
    with open(os.path.join(REF, "data", "orcl.csv")) as f:
        rows = list(csv.DictReader(f))
    expiries = [third_friday(y, m) for _, y, m in CONTRACTS]
    for k, (code, _, _) in enumerate(CONTRACTS):
        exp = expiries[k]
        prev = expiries[k - 1] if k else exp - datetime.timedelta(days=91)
        start = prev - datetime.timedelta(days=100)
        scale = 1 + 0.005 * k
        out = []
        for r in rows:
            d = datetime.date.fromisoformat(r["date"])
            if d < start or d > exp:
                continue
            w = min(1.0, 0.05 + 0.95 * (d - start).days / 140.0)
            left = (exp - d).days
            if left < 5:
                w = min(w, 0.1 + 0.9 * left / 5.0)
            out.append([r["date"]] + ["%.6f" % (float(r[c]) * scale) for c in ("open", "high", "low", "close")]
                       + [str(int(float(r["volume"]) * w) // 100)])
        with open(os.path.join(HERE, "data", "ES%s.csv" % code), "w", newline="") as f:
            wr = csv.writer(f, lineterminator="\n")
            wr.writerow(["date", "open", "high", "low", "close", "volume"])
            wr.writerows(out)
        print("ES%s: %d bars, %s to %s" % (code, len(out), out[0][0], out[-1][0]))


if __name__ == "__main__":
    main()

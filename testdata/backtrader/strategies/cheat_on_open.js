/**
 * Cheat-on-open, the twin of testdata/backtrader/gen.py's CheatOnOpen: nextOpen sees the
 * new bar's open before the broker runs, with the indicators still at the previous bar,
 * and a market order it places fills at that same open; exits placed in next() fill at
 * the next open as usual.
 * period: moving-average period
 * size: shares per entry
 */
class CheatOnOpen extends Strategy {
  static params = { period: 20, size: 10 };

  init() {
    this.sma = ind.SMA(this.data.close, this.p.period);
  }

  nextOpen() {
    if (this.position.size === 0 && this.data.open[0] > this.sma[0]) this.buy({ size: this.p.size });
  }

  next() {
    if (this.position.size > 0 && this.data.close[0] < this.sma[0]) this.close();
  }
}

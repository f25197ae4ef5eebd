/**
 * Cheat-on-close, the twin of testdata/backtrader/gen.py's CheatOnClose: with
 * broker.setCoc(true), an SMA crossover's market orders fill at the signal bar's close,
 * dated that bar.
 * p1: fast moving-average period
 * p2: slow moving-average period
 * size: shares per entry
 */
class CheatOnClose extends Strategy {
  static params = { p1: 10, p2: 30, size: 10 };

  init() {
    this.broker.setCoc(true);
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.p1), ind.SMA(this.data.close, this.p.p2));
  }

  next() {
    if (this.cross[0] > 0 && this.position.size === 0) this.buy({ size: this.p.size });
    else if (this.cross[0] < 0 && this.position.size !== 0) this.close();
  }
}

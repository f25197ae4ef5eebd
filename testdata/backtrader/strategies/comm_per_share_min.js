/**
 * Per-share commission with a minimum per fill part, the twin of
 * testdata/backtrader/gen.py's CommPerShareMin: a crossover trading 50 and 200 shares in
 * turn, so the minimum applies to the small trades and the per-share rate to the large
 * ones; reversals pay it on both parts.
 * fast: fast moving-average period
 * slow: slow moving-average period
 * per_share: commission per share
 * minimum: least commission per fill part
 */
class CommPerShareMin extends Strategy {
  static params = { fast: 10, slow: 30, per_share: 0.01, minimum: 1.0 };

  init() {
    this.broker.setCommission({ commission: this.p.per_share, commtype: 'fixed', minimum: this.p.minimum });
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow));
    this.n = 0;
  }

  next() {
    if (this.cross[0] === 0) return;
    this.n++;
    const size = this.n % 2 ? 50 : 200;
    this.orderTargetSize({ target: this.cross[0] > 0 ? size : -size });
  }
}

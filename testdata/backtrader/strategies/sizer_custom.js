/**
 * Sized by a function of its own (backtrader's TenthSizer in gen.py): a tenth of the
 * cash in whole shares for a buy, the position for a sell, the twin of testdata/backtrader/gen.py's SizerCustom: a moving-average crossover that
 * never sizes its own orders: buy() on a cross up when flat, sell() on a cross down when
 * long (a percent or all-in sizer sizes a sell that closes a position to the position).
 * fast: fast moving-average period
 * slow: slow moving-average period
 */
class SizerCustom extends Strategy {
  static params = { fast: 10, slow: 30 };

  init() {
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow));
    this.setSizer(({ cash, data, isBuy, position }) => (isBuy ? Math.trunc((cash * 0.1) / data.close[0]) : position.size));
  }

  next() {
    if (this.position.size === 0 && this.cross[0] > 0) this.buy();
    else if (this.position.size > 0 && this.cross[0] < 0) this.sell();
  }
}

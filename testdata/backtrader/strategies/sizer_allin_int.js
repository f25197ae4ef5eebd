/**
 * All the cash in whole shares at the signal close (backtrader's AllInSizerInt): a buy
 * that the next open makes too dear is rejected (Margin), the twin of testdata/backtrader/gen.py's SizerAllInInt: a moving-average crossover that
 * never sizes its own orders: buy() on a cross up when flat, sell() on a cross down when
 * long (a percent or all-in sizer sizes a sell that closes a position to the position).
 * fast: fast moving-average period
 * slow: slow moving-average period
 */
class SizerAllInInt extends Strategy {
  static params = { fast: 10, slow: 30 };

  init() {
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow));
    this.setSizer({ type: 'allin', whole: true });
  }

  next() {
    if (this.position.size === 0 && this.cross[0] > 0) this.buy();
    else if (this.position.size > 0 && this.cross[0] < 0) this.sell();
  }
}

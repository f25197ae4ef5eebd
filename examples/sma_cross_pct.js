/**
 * Moving-average crossover that invests a share of the cash: on a bullish
 * cross buy int(pct * cash / close) shares, close on a bearish cross.
 * fast: period of the fast simple moving average, in bars
 * slow: period of the slow simple moving average, in bars
 * size: unused fixed size, kept for parity with SmaCross
 * pct: fraction of the broker's cash to invest on each entry (0.95 = 95%)
 */
class SmaCrossPct extends Strategy {
  static params = { fast: 10, slow: 30, size: 10, pct: 0.95 };

  init() {
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast),
                               ind.SMA(this.data.close, this.p.slow));
  }

  next() {
    const size = this.position.size;
    if (size === 0) {
      if (this.cross[0] > 0) {
        const shares = Math.trunc(this.p.pct * this.broker.cash / this.data.close[0]);
        if (shares > 0) this.buy({ size: shares });
      }
    } else if (size > 0 && this.cross[0] < 0) {
      this.close();
    }
  }
}

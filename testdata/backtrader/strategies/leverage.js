/**
 * Leverage, the twin of testdata/backtrader/gen.py's Leverage: with a commission scheme of
 * leverage 2, an SMA crossover buys twice what 95% of the cash pays for (a long position
 * takes its value over the leverage in cash) and closes on the cross down.
 * p1: fast moving-average period
 * p2: slow moving-average period
 * leverage: the scheme's leverage
 */
class Leverage extends Strategy {
  static params = { p1: 10, p2: 30, leverage: 2.0 };

  init() {
    this.broker.setCommission({ commission: 0.001, leverage: this.p.leverage });
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.p1), ind.SMA(this.data.close, this.p.p2));
  }

  next() {
    if (this.cross[0] > 0 && this.position.size === 0) {
      this.buy({ size: Math.trunc((this.broker.getCash() * this.p.leverage * 0.95) / this.data.close[0]) });
    } else if (this.cross[0] < 0 && this.position.size !== 0) {
      this.close();
    }
  }
}

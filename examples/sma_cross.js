/**
 * Moving-average crossover: buy a fixed number of shares when the fast SMA
 * crosses above the slow SMA, close the position when it crosses below.
 * fast: period of the fast simple moving average, in bars
 * slow: period of the slow simple moving average, in bars
 * size: number of shares bought on each entry
 */
class SmaCross extends Strategy {
  static params = { fast: 10, slow: 30, size: 10 };

  init() {
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast),
                               ind.SMA(this.data.close, this.p.slow));
  }

  next() {
    const size = this.position.size;
    if (size === 0) {
      if (this.cross[0] > 0) this.buy({ size: this.p.size });
    } else if (size > 0 && this.cross[0] < 0) {
      this.close();
    }
  }
}

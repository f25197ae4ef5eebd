/**
 * Mean reversion on a z-score computed with lines: how many standard deviations the
 * close stands from its moving average. Buy when it falls below -entry, sell when it
 * comes back above -exit. The z-score is an indicator made of other indicators
 * (ind.Sub, ind.Div) and an own one (ind.Apply) filters out bars with a wide range.
 * period: bars of the moving average and standard deviation
 * entry: z-score below which to buy (as a positive number)
 * exit: z-score above which to sell (as a positive number; 0 is the average)
 * max_range: largest (high - low) / low of the signal bar, as a fraction
 * size: number of shares bought on each entry
 */
class ZScoreRevert extends Strategy {
  static params = { period: 20, entry: 2, exit: 0, max_range: 0.05, size: 10 };

  init() {
    const c = this.data.close;
    this.z = ind.Div(ind.Sub(c, ind.SMA(c, this.p.period)), ind.StdDev(c, this.p.period));
    this.range = ind.Apply([this.data.high, this.data.low], (h, l) => (h - l) / l);
  }

  next() {
    if (this.position.size === 0) {
      if (this.z[0] < -this.p.entry && this.range[0] <= this.p.max_range) this.buy({ size: this.p.size });
    } else if (this.z[0] > -this.p.exit) {
      this.close();
    }
  }
}

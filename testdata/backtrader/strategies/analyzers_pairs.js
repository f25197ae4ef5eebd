/**
 * examples/pairs.js for the analyzers fixture (testdata/backtrader/gen.py AnalyzersPairs): the spread is
 * the first close minus `ratio` times the second; when its z-score is beyond `entry`
 * the strategy sells the dear leg and buys the cheap one, and closes both when the
 * z-score comes back within `exit`. With one feed it only says so in the log.
 * period: bars of the spread's moving average and standard deviation
 * ratio: units of the second feed per unit of the first
 * entry: z-score beyond which a pair trade opens
 * exit: z-score within which it closes
 * size: units of the first feed per trade
 */
class AnalyzersPairs extends Strategy {
  static params = { period: 30, ratio: 0.5, entry: 2, exit: 0.5, size: 10 };

  init() {
    this.pair = this.datas.length >= 2;
    if (!this.pair) {
      this.log('pairs needs two data feeds; nothing to trade', 'WARNING');
      return;
    }
    const [a, b] = this.datas;
    const spread = ind.Sub(a.close, ind.Mul(this.p.ratio, b.close));
    this.z = ind.Div(ind.Sub(spread, ind.SMA(spread, this.p.period)), ind.StdDev(spread, this.p.period));
  }

  next() {
    if (!this.pair) return;
    const [a, b] = this.datas;
    const size = this.p.size;
    const other = Math.round(size * this.p.ratio);
    const held = this.getPosition(a).size;
    if (held === 0) {
      if (this.z[0] > this.p.entry) {
        this.sell({ data: a, size });
        this.buy({ data: b, size: other });
      } else if (this.z[0] < -this.p.entry) {
        this.buy({ data: a, size });
        this.sell({ data: b, size: other });
      }
    } else if (Math.abs(this.z[0]) < this.p.exit) {
      this.close({ data: a });
      this.close({ data: b });
    }
  }
}

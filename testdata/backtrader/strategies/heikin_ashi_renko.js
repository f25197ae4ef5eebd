/**
 * The twin of testdata/backtrader/gen.py's HeikinAshiRenko: examples/heikin_ashi.js on
 * Heikin-Ashi candles made into Renko bricks of 1.0 (two filters in turn on one feed).
 * size: shares bought
 * period: SMA period, on the bricks' closes
 */
class HeikinAshiRenko extends Strategy {
  static params = { size: 10, period: 10 };
  static filters = [{ filter: 'HeikinAshi' }, { filter: 'Renko', size: 1.0 }];

  init() {
    this.sma = ind.SMA(this.data.close, this.p.period);
  }

  next() {
    const d = this.data;
    const green = d.close[0] > d.open[0];
    if (this.position.size === 0 && green && d.close[-1] > d.open[-1] && d.close[0] > this.sma[0]) {
      this.buy({ size: this.p.size });
    } else if (this.position.size !== 0 && !green) {
      this.close();
    }
  }
}

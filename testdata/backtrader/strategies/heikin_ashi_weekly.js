/**
 * The twin of testdata/backtrader/gen.py's HeikinAshiWeekly: examples/weekly_trend.js on
 * Heikin-Ashi candles, the weekly bars resampled from the candles.
 * wperiod: weekly SMA period
 * dperiod: daily SMA period
 * size: shares bought
 */
class HeikinAshiWeekly extends Strategy {
  static params = { wperiod: 10, dperiod: 20, size: 10 };
  static filters = { filter: 'HeikinAshi' };
  static resample = { timeframe: 'weeks' };

  init() {
    const weekly = this.datas[1];
    this.wsma = ind.SMA(weekly.close, this.p.wperiod);
    this.dsma = ind.SMA(this.data.close, this.p.dperiod);
    this.cross = ind.CrossOver(this.data.close, this.dsma);
  }

  next() {
    if (this.position.size === 0 && this.datas[1].close[0] > this.wsma[0] && this.cross[0] > 0) {
      this.buy({ size: this.p.size });
    } else if (this.position.size !== 0 && this.data.close[0] < this.dsma[0]) {
      this.close();
    }
  }
}

/**
 * Daily entries filtered by the weekly trend. Weekly bars are resampled from the daily
 * feed (static resample: this.datas[1]). Buys when the last weekly close is above its
 * SMA and the daily close crosses above its own SMA; sells when the daily close falls
 * under that SMA.
 * wperiod: weekly SMA period
 * dperiod: daily SMA period
 * size: shares bought
 */
class WeeklyTrend extends Strategy {
  static params = { wperiod: 10, dperiod: 20, size: 10 };
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

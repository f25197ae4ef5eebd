/**
 * Weekly bars rebuilt day by day (static replay, backtrader's cerebro.replaydata, after
 * its samples/data-replay): next() runs on every daily bar, this.data[0] is the week as
 * it stands (its open, high and low so far, today's close), this.data[-1] the last
 * finished week, and the SMA counts weeks with the unfinished one included. Long when the
 * close crosses above that SMA; out when it falls under the last finished week's low.
 * Orders fill against the daily bars.
 * period: SMA period, in weeks
 * size: shares bought
 */
class ReplayWeekly extends Strategy {
  static params = { period: 10, size: 10 };
  static replay = { timeframe: 'weeks' };

  init() {
    this.sma = ind.SMA(this.data.close, this.p.period);
    this.cross = ind.CrossOver(this.data.close, this.sma);
  }

  next() {
    if (this.position.size === 0 && this.cross[0] > 0) {
      this.buy({ size: this.p.size });
    } else if (this.position.size !== 0 && this.data.close[0] < this.data.low[-1]) {
      this.close();
    }
  }
}

/**
 * Breakouts of the last completed two-month bar, the twin of testdata/backtrader/gen.py's
 * TwoMonthBreakout (months resampled with compression 2, this.datas[1]): long `size` shares
 * when the daily close rises above that bar's high, out when it falls under its low.
 * size: shares bought
 */
class TwoMonthBreakout extends Strategy {
  static params = { size: 10 };
  static resample = { timeframe: 'months', compression: 2 };

  next() {
    if (this.position.size === 0 && this.data.close[0] > this.datas[1].high[0]) {
      this.buy({ size: this.p.size });
    } else if (this.position.size !== 0 && this.data.close[0] < this.datas[1].low[0]) {
      this.close();
    }
  }
}

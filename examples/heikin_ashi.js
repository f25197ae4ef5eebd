/**
 * Trend following on Heikin-Ashi candles (backtrader's bt.filters.HeikinAshi: static
 * filters rewrites this.data, and orders fill at the candles' prices). Long after two
 * green candles in a row (close above open) closing above the SMA of the candles' closes;
 * out at market on the first red candle.
 * size: shares bought
 * period: SMA period, on the candles' closes
 */
class HeikinAshiTrend extends Strategy {
  static params = { size: 10, period: 10 };
  static filters = { filter: 'HeikinAshi' };

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

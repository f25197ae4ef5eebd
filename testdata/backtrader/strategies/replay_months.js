/**
 * The twin of testdata/backtrader/gen.py's ReplayMonths: two-month bars replayed day by
 * day (static replay, compression 2). A buy Limit at the unfinished bar's low plus a
 * tenth of its range when the RSI of the bars is under `low`, valid `days` days; the
 * position is closed at market when the bar's high exceeds the previous bar's high.
 * period: RSI period, in two-month bars
 * low: the RSI must be under this to enter
 * size: shares bought
 * days: days the entry stays valid
 */
class ReplayMonths extends Strategy {
  static params = { period: 6, low: 50.0, size: 10, days: 10 };
  static replay = { timeframe: 'months', compression: 2 };

  init() {
    this.rsi = ind.RSI(this.data.close, this.p.period);
    this.live = null;
  }

  notifyOrder(order) {
    if (this.live !== null && order.ref === this.live.ref && !order.alive()) this.live = null;
  }

  next() {
    const d = this.data;
    if (this.position.size === 0) {
      if (this.live === null && this.rsi[0] < this.p.low) {
        this.live = this.buy({ exectype: 'Limit', price: d.low[0] + (d.high[0] - d.low[0]) / 10.0, size: this.p.size, valid: this.p.days });
      }
    } else if (d.high[0] > d.high[-1]) {
      this.close();
    }
  }
}

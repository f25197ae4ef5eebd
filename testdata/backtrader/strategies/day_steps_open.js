/**
 * The twin of testdata/backtrader/gen.py's DayStepsOpen, after backtrader's
 * samples/daysteps: the BarReplayer_Open filter delivers each day first as its open
 * alone, then whole, and next() runs on both. At the open (the data's length has grown),
 * flat with nothing pending and the open above the SMA of the closes (the day as it
 * stands), a buy Limit `off` under the open, good till filled; in a position, a close at
 * market when the day opens under the previous day's low (filled at the next day's
 * open). On the whole day, in a position, a close at market when the close falls under
 * the SMA.
 * period: SMA period, in days
 * size: shares bought
 * off: the Limit's distance under the open, a fraction of it
 */
class DayStepsOpen extends Strategy {
  static params = { period: 10, size: 10, off: 0.005 };
  static filters = { filter: 'BarReplayer_Open' };

  init() {
    this.sma = ind.SMA(this.data.close, this.p.period);
    this.lcontrol = 0;
    this.order = null;
  }

  notifyOrder(order) {
    if (this.order !== null && order.ref === this.order.ref && !order.alive()) this.order = null;
  }

  next() {
    const d = this.data;
    const opening = d.length > this.lcontrol;
    this.lcontrol = d.length;
    if (this.order !== null) return;
    if (opening) {
      if (this.position.size === 0 && d.open[0] > this.sma[0]) {
        this.order = this.buy({ exectype: 'Limit', price: d.open[0] * (1.0 - this.p.off), size: this.p.size });
      } else if (this.position.size !== 0 && d.open[0] < d.low[-1]) {
        this.order = this.close();
      }
    } else if (this.position.size !== 0 && d.close[0] < this.sma[0]) {
      this.order = this.close();
    }
  }
}

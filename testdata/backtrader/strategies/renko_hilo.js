/**
 * The twin of testdata/backtrader/gen.py's RenkoHilo: examples/renko.js on Renko bricks
 * of 0.5 decided on the high and low (hilo), aligned to 0.5, the first open not rounded
 * (roundstart false). The stop stays 1.0 under the entry brick's bottom.
 * size: shares bought
 * period: RSI period, in bricks
 * top: the RSI must be under this to enter
 */
class RenkoHilo extends Strategy {
  static params = { size: 10, period: 14, top: 70.0 };
  static filters = { filter: 'Renko', hilo: true, size: 0.5, align: 0.5, roundstart: false };

  init() {
    this.rsi = ind.RSI(this.data.close, this.p.period);
    this.guard = null;
  }

  notifyOrder(order) {
    if (order.status === 'Completed' && order.isBuy()) {
      this.guard = this.sell({ exectype: 'Stop', price: this.data.open[0] - 1.0, size: order.executed.size });
    } else if (this.guard !== null && order.ref === this.guard.ref && !order.alive()) {
      this.guard = null;
    }
  }

  next() {
    const d = this.data;
    const rising = d.close[0] > d.open[0];
    if (this.position.size === 0) {
      if (rising && d.close[-1] > d.open[-1] && this.rsi[0] < this.p.top) this.buy({ size: this.p.size });
    } else if (!rising) {
      if (this.guard !== null) this.cancel(this.guard);
      this.close();
    }
  }
}

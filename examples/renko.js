/**
 * Renko bricks (backtrader's bt.filters.Renko, after its samples/renko: an RSI on the
 * bricks). static filters turns this.data into bricks of 1.0: a bar that does not reach
 * the next brick is dropped, so next() runs once a brick. Long after two rising bricks
 * with the RSI under `top`; a sell Stop one brick under the entry brick's bottom protects
 * the position, which is closed at market on a falling brick.
 * size: shares bought
 * period: RSI period, in bricks
 * top: the RSI must be under this to enter
 */
class RenkoBricks extends Strategy {
  static params = { size: 10, period: 14, top: 70.0 };
  static filters = { filter: 'Renko', size: 1.0 };

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

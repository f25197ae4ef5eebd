/**
 * Trend entry with a trailing stop: buy when the close crosses above its moving average;
 * once filled, protect the position with a sell StopTrail that follows the close up at a
 * fixed percentage and never moves down, so the exit locks in gains as the trend runs.
 * period: moving-average period of the entry signal
 * size: number of shares bought on each entry
 * trail: distance of the trailing stop below the close, as a fraction (0.05 is 5%)
 */
class TrailingStop extends Strategy {
  static params = { period: 30, size: 10, trail: 0.05 };

  init() {
    this.cross = ind.CrossOver(this.data.close, ind.SMA(this.data.close, this.p.period));
    this.stop = null;
  }

  next() {
    if (this.position.size === 0 && this.stop === null && this.cross[0] > 0) {
      this.buy({ size: this.p.size });
    }
  }

  notifyOrder(order) {
    if (order.status === 'Completed' && order.isBuy()) {
      this.stop = this.sell({ exectype: 'StopTrail', trailpercent: this.p.trail, size: order.executed.size });
    } else if (this.stop !== null && order.ref === this.stop.ref && !order.alive()) {
      this.stop = null;
    }
  }
}

/**
 * Trailing stop by percent, the twin of testdata/backtrader/gen.py's TrailPercent: every
 * `every` bars when flat with no live order, buy at market; when the buy fills, a sell
 * StopTrail `trailpercent` below the close, which follows the close up and never down.
 * size: shares bought
 * every: enter on bars whose count is a multiple of this
 * trailpercent: distance of the stop below the close, as a fraction
 */
class TrailPercent extends Strategy {
  static params = { size: 10, every: 5, trailpercent: 0.03 };

  init() {
    this.live = null;
  }

  notifyOrder(order) {
    if (order.status === 'Completed' && order.isBuy()) {
      this.live = this.sell({ exectype: 'StopTrail', trailpercent: this.p.trailpercent, size: order.executed.size });
    } else if (this.live !== null && order.ref === this.live.ref && !order.alive()) {
      this.live = null;
    }
  }

  next() {
    if (this.position.size === 0 && this.live === null && this.data.length % this.p.every === 0) {
      this.buy({ size: this.p.size });
    }
  }
}

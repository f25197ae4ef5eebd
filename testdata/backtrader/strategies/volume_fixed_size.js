/**
 * Volume-limited fills, the twin of testdata/backtrader/gen.py's VolumeFixedSize (backtrader's
 * samples/volumefilling), filler FixedSize: each bar fills at most fill units: buy `size` when flat,
 * close when long, `opbreak` bars after the last order completed; an order a bar cannot
 * fill whole is Partial, and fills on over the next bars.
 * size: units per order
 * opbreak: bars to wait after an order completed
 * fill: most units a bar fills (fixedsize)
 */
class VolumeFixedSize extends Strategy {
  static params = { size: 30, opbreak: 3, fill: 7 };

  init() {
    this.broker.setFiller({ type: 'fixedsize', size: this.p.fill });
    this.doop = 0;
  }

  notifyOrder(order) {
    if (order.status === 'Completed') this.doop = -this.p.opbreak;
  }

  next() {
    if (this.doop === 0) {
      if (this.position.size === 0) this.buy({ size: this.p.size });
      else this.close();
    }
    this.doop++;
  }
}

/**
 * Volume-limited fills, the twin of testdata/backtrader/gen.py's VolumeBarPerc (backtrader's
 * samples/volumefilling), filler FixedBarPerc: each bar fills perc percent of its volume in whole units: buy `size` when flat,
 * close when long, `opbreak` bars after the last order completed; an order a bar cannot
 * fill whole is Partial, and fills on over the next bars.
 * size: units per order
 * opbreak: bars to wait after an order completed
 * fill: most units a bar fills (fixedsize)
 * perc: percent of the bar's volume a bar fills
 */
class VolumeBarPerc extends Strategy {
  static params = { size: 200, opbreak: 3, fill: 7, perc: 0.0004 };

  init() {
    this.broker.setFiller({ type: 'fixedbarperc', perc: this.p.perc });
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

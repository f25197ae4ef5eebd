/**
 * Volume-limited fills, the twin of testdata/backtrader/gen.py's VolumeBarPoint (backtrader's
 * samples/volumefilling), filler BarPointPerc: the bar volume spread over its range in steps of minmov, perc percent of one step: buy `size` when flat,
 * close when long, `opbreak` bars after the last order completed; an order a bar cannot
 * fill whole is Partial, and fills on over the next bars.
 * size: units per order
 * opbreak: bars to wait after an order completed
 * fill: most units a bar fills (fixedsize)
 * minmov: price step the bar's range is divided in
 * perc: percent of one step's volume a bar fills
 */
class VolumeBarPoint extends Strategy {
  static params = { size: 200, opbreak: 3, fill: 7, minmov: 0.01, perc: 0.05 };

  init() {
    this.broker.setFiller({ type: 'barpointperc', minmov: this.p.minmov, perc: this.p.perc });
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

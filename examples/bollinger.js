/**
 * Bollinger-band reversion: buy when the close drops below the lower band,
 * close the position when it rises above the middle band.
 * period: bars in the moving average and standard deviation
 * devfactor: width of the bands in standard deviations
 * size: number of shares bought on each entry
 */
class BollingerRevert extends Strategy {
  static params = { period: 20, devfactor: 2.0, size: 10 };

  init() {
    this.bb = ind.BollingerBands(this.data.close, this.p.period, this.p.devfactor);
  }

  next() {
    const close = this.data.close[0];
    if (this.position.size === 0 && close < this.bb.bot[0]) {
      this.buy({ size: this.p.size });
    } else if (this.position.size > 0 && close > this.bb.mid[0]) {
      this.close();
    }
  }

  notifyOrder(order) {
    if (order.status === 'Margin') this.log(`order ${order.ref} rejected: not enough cash`, 'WARNING');
  }
}

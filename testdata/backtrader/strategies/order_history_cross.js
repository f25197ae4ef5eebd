/**
 * An order history (notify false: notifyOrder never sees its orders) under a long-only
 * crossover of the strategy's own; both share the position, and the history's orders are
 * this strategy's (the first).
 * fast: period of the fast moving average
 * slow: period of the slow moving average
 * size: shares bought on a cross up
 */
class OrderHistoryCross extends Strategy {
  static params = { fast: 10, slow: 30, size: 2 };

  init() {
    this.broker.addOrderHistory([
      ['2005-02-01', 1, 2984.63], ['2005-03-04', -1, 3079.93], ['2005-03-08', 1, 3113.82],
      ['2005-03-22', -1, 3040.55], ['2005-04-08', 1, 3092.07], ['2005-04-20', -1, 2957.92],
      ['2005-05-13', 1, 2991.71], ['2005-08-19', -1, 3284.35], ['2005-08-22', 1, 3328.84],
      ['2005-08-25', -1, 3293.69], ['2005-09-12', 1, 3361.1], ['2005-10-18', -1, 3356.73],
      ['2005-11-09', 1, 3361.92], ['2006-01-24', -1, 3544.78],
    ], { notify: false });
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow));
    this.held = 0;
  }

  notifyOrder(order) {
    if (order.exectype === 'Historical') throw new Error('a history added with notify false is not notified');
  }

  next() {
    if (this.cross[0] > 0 && !this.held) {
      this.buy({ size: this.p.size });
      this.held = this.p.size;
    } else if (this.cross[0] < 0 && this.held) {
      this.sell({ size: this.held });
      this.held = 0;
    }
  }
}

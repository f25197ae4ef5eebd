/**
 * Close orders on 5-minute bars, the twin of testdata/backtrader/gen.py's
 * OrderCloseIntraday (backtrader's samples/order-close with its dice replaced by a count):
 * every `every` bars with no live order, a Close order buys when flat or closes the
 * position. It fills at its session's last close, dated that bar, and executes on the
 * next session's first bar, where its trade is dated.
 * every: place an order on bars whose count is a multiple of this
 * size: units bought
 */
class OrderCloseIntraday extends Strategy {
  static params = { every: 37, size: 1 };

  init() {
    this.order = null;
  }

  notifyOrder(order) {
    if (this.order !== null && order.ref === this.order.ref && !order.alive()) this.order = null;
  }

  next() {
    if (this.order === null && this.data.length % this.p.every === 0) {
      if (this.position.size !== 0) this.order = this.close({ exectype: 'Close' });
      else this.order = this.buy({ exectype: 'Close', size: this.p.size });
    }
  }
}

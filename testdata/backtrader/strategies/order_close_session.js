/**
 * The twin of testdata/backtrader/gen.py's OrderCloseSession: OrderCloseIntraday with the
 * session ending at 17:30, the time of each session's last bar, so a Close order fills on
 * that bar at its close; setEosBar(true) is kept as backtrader keeps set_eosbar.
 * every: place an order on bars whose count is a multiple of this
 * size: units bought
 */
class OrderCloseSession extends Strategy {
  static params = { every: 37, size: 1 };

  init() {
    this.data.setSessionEnd('17:30');
    this.broker.setEosBar(true);
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

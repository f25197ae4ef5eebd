/**
 * Order validity, the twin of testdata/backtrader/gen.py's ValidOrders: every `every` bars
 * when flat with no live order, a buy Limit `limit_pct` of the close, valid in turn for
 * the day ('Day': on daily bars it expires on the next bar), for `days` days, until the
 * date `days` later, or good till cancelled; a filled entry is closed at market after
 * `hold` bars.
 * size: shares bought
 * every: place an entry on bars whose count is a multiple of this
 * limit_pct: entry limit as a multiple of the close
 * days: validity in days
 * hold: bars a position is held
 */
class ValidOrders extends Strategy {
  static params = { size: 10, every: 3, limit_pct: 0.99, days: 4, hold: 2 };

  init() {
    this.live = null;
    this.count = 0;
    this.filled = null;
  }

  notifyOrder(order) {
    if (this.live !== null && order.ref === this.live.ref && !order.alive()) {
      this.live = null;
      if (order.status === 'Completed') this.filled = this.data.length;
    }
  }

  next() {
    const n = this.data.length;
    if (this.position.size !== 0) {
      if (this.filled !== null && n - this.filled >= this.p.hold) {
        this.close();
        this.filled = null;
      }
      return;
    }
    if (this.live === null && n % this.p.every === 0) {
      const kind = this.count % 4;
      this.count++;
      const later = new Date(this.data.datetime[0].getTime() + this.p.days * 86400000).toISOString().slice(0, 10);
      const valid = ['Day', { days: this.p.days }, later, undefined][kind];
      this.live = this.buy({ exectype: 'Limit', price: this.data.close[0] * this.p.limit_pct, size: this.p.size, valid });
    }
  }
}

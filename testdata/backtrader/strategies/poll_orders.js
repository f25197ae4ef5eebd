/**
 * Polling orders, the twin of testdata/backtrader/gen.py's PollOrders: no notifyOrder at
 * all; the strategy polls the order it keeps (status, alive(), executed.price), which is
 * live as in backtrader. Every `every` bars when flat, a buy Limit `limit_pct` of the
 * close; once it has filled, a sell Limit `target` above its executed price; an order
 * unfilled after `hold` bars is cancelled, and a position left without an exit is closed.
 * size: shares bought
 * every: enter on bars whose count is a multiple of this
 * limit_pct: entry limit as a multiple of the close
 * target: exit limit as a multiple of the entry's executed price
 * hold: bars an unfilled order waits before it is cancelled
 */
class PollOrders extends Strategy {
  static params = { size: 10, every: 4, limit_pct: 0.99, target: 1.02, hold: 3 };

  init() {
    this.order = null;
    this.placed = 0;
  }

  next() {
    const o = this.order;
    const n = this.data.length;
    if (o !== null && o.alive()) {
      if (n - this.placed >= this.p.hold) this.cancel(o);
      return;
    }
    if (this.position.size === 0) {
      if (n % this.p.every === 0) {
        this.order = this.buy({ exectype: 'Limit', price: this.data.close[0] * this.p.limit_pct, size: this.p.size });
        this.placed = n;
      }
    } else if (o !== null && o.status === 'Completed' && o.isBuy()) {
      this.order = this.sell({ exectype: 'Limit', price: o.executed.price * this.p.target, size: this.position.size });
      this.placed = n;
    } else {
      this.order = this.close();
      this.placed = n;
    }
  }
}

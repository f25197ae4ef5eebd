/**
 * Cancels of orders not yet accepted, the twin of testdata/backtrader/gen.py's
 * CancelUnaccepted: every `every` bars when flat, buy at market; when the buy fills, a
 * protective stop is placed from notifyOrder and next() of the same bar cancels it at once.
 * The broker has not accepted it yet, so the cancel is ignored (a WARNING says so) and the
 * stop stays live. After `hold` bars the stop is cancelled for real and the position closed.
 * size: shares bought
 * every: enter on bars whose count is a multiple of this
 * stop_pct: stop price as a multiple of the fill price
 * hold: bars before the stop is cancelled and the position closed
 */
class CancelUnaccepted extends Strategy {
  static params = { size: 10, every: 6, stop_pct: 0.98, hold: 4 };

  init() {
    this.guard = null;
    this.placed = null;
  }

  notifyOrder(order) {
    if (order.status === 'Completed' && order.isBuy()) {
      this.guard = this.sell({ exectype: 'Stop', price: order.executed.price * this.p.stop_pct, size: order.executed.size });
      this.placed = this.data.length;
    } else if (this.guard !== null && order.ref === this.guard.ref && !order.alive()) {
      this.guard = null;
    }
  }

  next() {
    const n = this.data.length;
    if (this.guard !== null && this.placed === n) {
      this.cancel(this.guard); // not yet accepted: ignored
    } else if (this.guard !== null && n - this.placed >= this.p.hold) {
      this.cancel(this.guard);
      this.close();
    } else if (this.position.size === 0 && this.guard === null && n % this.p.every === 0) {
      this.buy({ size: this.p.size });
    }
  }
}

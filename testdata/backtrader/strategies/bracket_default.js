/**
 * Default brackets, the twin of testdata/backtrader/gen.py's BracketDefault: every `every`
 * bars when flat with no live orders, buyBracket with its defaults (as backtrader's
 * buy_bracket: the entry is a Limit order at the signal bar's close) and a stop and a
 * target `band` below and above the close; an entry still unfilled after `hold` bars is
 * cancelled with its children.
 * size: shares bought
 * every: enter on bars whose count is a multiple of this
 * band: distance of the stop and the target from the close, as a fraction
 * hold: bars an unfilled entry waits before it is cancelled
 */
class BracketDefault extends Strategy {
  static params = { size: 10, every: 5, band: 0.03, hold: 3 };

  init() {
    this.live = new Set();
    this.entry = null;
    this.waiting = false; // the entry is neither filled nor cancelled
    this.placed = 0;
  }

  notifyOrder(order) {
    if (!order.alive()) this.live.delete(order.ref);
    if (this.entry !== null && order.ref === this.entry.ref && !order.alive()) this.waiting = false;
  }

  next() {
    const n = this.data.length;
    if (this.waiting && n - this.placed >= this.p.hold) {
      this.cancel(this.entry);
      this.waiting = false;
    } else if (this.position.size === 0 && this.live.size === 0 && n % this.p.every === 0) {
      const c = this.data.close[0];
      const orders = this.buyBracket({ size: this.p.size, stopprice: c * (1 - this.p.band), limitprice: c * (1 + this.p.band) });
      this.entry = orders[0];
      this.waiting = true;
      this.placed = n;
      for (const o of orders) this.live.add(o.ref);
    }
  }
}

/**
 * Market-entry brackets, the twin of testdata/backtrader/gen.py's BracketMarket: every
 * `every` bars when flat with no live orders, a bracket entered at market with its stop
 * and target `band` below and above the signal close.
 * size: shares bought
 * every: enter on bars whose count is a multiple of this
 * band: distance of the stop and the target from the close, as a fraction
 */
class BracketMarket extends Strategy {
  static params = { size: 10, every: 5, band: 0.03 };

  init() {
    this.live = new Set();
  }

  notifyOrder(order) {
    if (!order.alive()) this.live.delete(order.ref);
  }

  next() {
    if (this.position.size === 0 && this.live.size === 0 && this.data.length % this.p.every === 0) {
      const c = this.data.close[0];
      const orders = this.buyBracket({ size: this.p.size, exectype: 'Market', stopprice: c * (1 - this.p.band), limitprice: c * (1 + this.p.band) });
      for (const o of orders) this.live.add(o.ref);
    }
  }
}

/**
 * Trailing stop-limit by amount on the short side, the twin of testdata/backtrader/gen.py's
 * TrailAmountLimit: every `every` bars when flat with no live order, sell at market; when
 * the sell fills, a buy StopTrailLimit `amount` above the close whose limit lies `offset`
 * above its stop, both following the close down. One unfilled after `hold` bars is
 * cancelled and the position closed at market.
 * size: shares sold
 * every: enter on bars whose count is a multiple of this
 * amount: distance of the stop above the close
 * offset: distance of the limit above the stop
 * hold: bars the trailing order may wait
 */
class TrailAmountLimit extends Strategy {
  static params = { size: 10, every: 6, amount: 1.5, offset: 0.5, hold: 12 };

  init() {
    this.live = null;
    this.placed = 0;
  }

  notifyOrder(order) {
    if (order.status === 'Completed' && order.isSell() && this.position.size < 0) {
      const c = this.data.close[0];
      this.live = this.buy({ exectype: 'StopTrailLimit', price: c, plimit: c + this.p.offset, trailamount: this.p.amount, size: -order.executed.size });
      this.placed = this.data.length;
    } else if (this.live !== null && order.ref === this.live.ref && !order.alive()) {
      this.live = null;
    }
  }

  next() {
    const n = this.data.length;
    if (this.live !== null && this.live.status === 'Accepted' && n - this.placed >= this.p.hold) {
      this.cancel(this.live);
      this.close();
    } else if (this.position.size === 0 && this.live === null && n % this.p.every === 0) {
      this.sell({ size: this.p.size });
    }
  }
}

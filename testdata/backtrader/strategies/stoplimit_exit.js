/**
 * StopLimit exits, the twin of testdata/backtrader/gen.py's StopLimitExit: enters long at
 * market every `every` bars when flat, then exits with a sell StopLimit whose limit lies
 * above its stop, replaced after `hold` bars unfilled.
 * size: shares bought
 * every: enter on bars whose count is a multiple of this
 * stop_pct: stop price as a multiple of the close
 * limit_pct: limit price as a multiple of the stop
 * hold: bars an unfilled exit waits before it is cancelled and placed again
 */
class StopLimitExit extends Strategy {
  static params = { size: 10, every: 7, stop_pct: 0.99, limit_pct: 1.005, hold: 5 };

  init() {
    this.exit = null;
    this.placed = 0;
  }

  notifyOrder(order) {
    if (this.exit !== null && order.ref === this.exit.ref && !order.alive()) this.exit = null;
  }

  next() {
    const n = this.data.length;
    if (this.position.size === 0) {
      if (this.exit === null && n % this.p.every === 0) this.buy({ size: this.p.size });
    } else if (this.exit === null) {
      const stop = this.data.close[0] * this.p.stop_pct;
      this.exit = this.sell({ exectype: 'StopLimit', price: stop, plimit: stop * this.p.limit_pct, size: this.position.size });
      this.placed = n;
    } else if (n - this.placed >= this.p.hold) {
      this.cancel(this.exit);
    }
  }
}

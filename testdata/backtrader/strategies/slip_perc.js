/**
 * Percentage slippage, the twin of testdata/backtrader/gen.py's SlipPerc: backtrader's
 * set_slippage_perc defaults (open, limit and match on, out off); entries at market, long
 * and short in turn, exits by Limit, Stop and StopLimit in turn, each cancelled after
 * `hold` bars.
 * size: shares per entry
 * every: enter on bars whose count is a multiple of this
 * perc: slippage as a fraction of the price
 * target: distance of the Limit exit, as a fraction of the close
 * stop: distance of the Stop and StopLimit exits, as a fraction of the close
 * hold: bars an exit waits before it is cancelled
 */
class SlipPerc extends Strategy {
  static params = { size: 10, every: 4, perc: 0.004, target: 0.02, stop: 0.015, hold: 6 };

  init() {
    this.broker.setSlippagePerc(this.p.perc);
    this.live = null;
    this.placed = 0;
    this.n = 0;
  }

  next() {
    const pos = this.position.size;
    const n = this.data.length;
    if (this.live !== null) {
      if (this.live.status === 'Accepted' && n - this.placed >= this.p.hold) this.cancel(this.live);
      return;
    }
    if (pos === 0) {
      if (n % this.p.every === 0) {
        this.n++;
        this.live = this.n % 2 ? this.buy({ size: this.p.size }) : this.sell({ size: this.p.size });
        this.placed = n;
      }
      return;
    }
    const c = this.data.close[0];
    const long = pos > 0;
    const size = Math.abs(pos);
    const exit = (o) => (long ? this.sell(o) : this.buy(o));
    const kind = this.n % 3;
    if (kind === 0) {
      this.live = exit({ exectype: 'Limit', price: long ? c * (1 + this.p.target) : c * (1 - this.p.target), size });
    } else if (kind === 1) {
      this.live = exit({ exectype: 'Stop', price: long ? c * (1 - this.p.stop) : c * (1 + this.p.stop), size });
    } else {
      const price = long ? c * (1 - this.p.stop) : c * (1 + this.p.stop);
      this.live = exit({ exectype: 'StopLimit', price, plimit: price * (long ? 0.995 : 1.005), size });
    }
    this.placed = n;
  }

  notifyOrder(order) {
    if (this.live !== null && order.ref === this.live.ref && !order.alive()) this.live = null;
  }
}

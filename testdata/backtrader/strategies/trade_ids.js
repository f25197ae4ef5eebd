/**
 * Trades told apart by tradeid, the twin of testdata/backtrader/gen.py's TradeIds: tradeid 1
 * follows an SMA(10)/SMA(30) crossover with 10 shares, tradeid 2 holds 5 shares for `hold`
 * bars every `every` bars, tradeid 3 sells 3 shares every `every3` bars and buys them back
 * `hold` bars later, tradeid 4 is a limit-entry bracket valid `days` days.
 * every: bars between tradeid 2's entries
 * hold: bars tradeids 2 and 3 hold
 * every3: bars between tradeid 3's sales
 * bracket_every: bars between brackets
 * days: validity of each bracket's orders
 */
class TradeIds extends Strategy {
  static params = { every: 13, hold: 6, every3: 29, bracket_every: 41, days: 3 };

  init() {
    const c = this.data.close;
    this.cross = ind.CrossOver(ind.SMA(c, 10), ind.SMA(c, 30));
    this.t1 = false;
    this.t2At = null;
    this.t3At = null;
    this.live4 = new Set();
  }

  notifyOrder(order) {
    if (!order.alive()) this.live4.delete(order.ref);
  }

  next() {
    const n = this.data.length;
    if (this.cross[0] > 0 && !this.t1) {
      this.buy({ size: 10, tradeid: 1 });
      this.t1 = true;
    } else if (this.cross[0] < 0 && this.t1) {
      this.sell({ size: 10, tradeid: 1 });
      this.t1 = false;
    }
    if (this.t2At === null && n % this.p.every === 0) {
      this.buy({ size: 5, tradeid: 2 });
      this.t2At = n;
    } else if (this.t2At !== null && n - this.t2At >= this.p.hold) {
      this.sell({ size: 5, tradeid: 2 });
      this.t2At = null;
    }
    if (this.t3At === null && n % this.p.every3 === 0) {
      this.sell({ size: 3, tradeid: 3 });
      this.t3At = n;
    } else if (this.t3At !== null && n - this.t3At >= this.p.hold) {
      this.buy({ size: 3, tradeid: 3 });
      this.t3At = null;
    }
    if (this.live4.size === 0 && n % this.p.bracket_every === 0) {
      const c = this.data.close[0];
      const orders = this.buyBracket({ size: 4, price: c * 0.99, stopprice: c * 0.95, limitprice: c * 1.05,
        valid: { days: this.p.days }, tradeid: 4 });
      for (const o of orders) this.live4.add(o.ref);
    }
  }
}

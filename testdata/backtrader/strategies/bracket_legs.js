/**
 * A bracket whose legs have arguments of their own, the twin of testdata/backtrader/gen.py's
 * BracketLegs (backtrader's samples/bracket with buy_bracket): the entry valid `limdays`
 * days, the stop and the target valid `limdays2` days through stopargs and limitargs.
 * p1: fast moving-average period
 * p2: slow moving-average period
 * limit: entry distance under the close, as a fraction
 * limdays: days the entry is valid
 * limdays2: days the exits are valid
 */
class BracketLegs extends Strategy {
  static params = { p1: 5, p2: 15, limit: 0.005, limdays: 3, limdays2: 1000 };

  init() {
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.p1), ind.SMA(this.data.close, this.p.p2));
    this.orefs = [];
  }

  notifyOrder(order) {
    if (!order.alive()) this.orefs = this.orefs.filter((r) => r !== order.ref);
  }

  next() {
    if (this.orefs.length > 0 || this.position.size !== 0 || !(this.cross[0] > 0)) return;
    const close = this.data.close[0];
    const p1 = close * (1.0 - this.p.limit);
    const orders = this.buyBracket({
      price: p1, valid: this.p.limdays,
      stopprice: p1 - 0.02 * close, stopargs: { valid: this.p.limdays2 },
      limitprice: p1 + 0.02 * close, limitargs: { valid: this.p.limdays2 },
    });
    this.orefs = orders.map((o) => o.ref);
  }
}

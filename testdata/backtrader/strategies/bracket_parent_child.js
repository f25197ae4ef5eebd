/**
 * Parent and child orders built by hand, the twin of testdata/backtrader/gen.py's
 * BracketParentChild (backtrader's samples/bracket): on an SMA crossover up when flat with
 * no live order, a buy Limit under the close valid `limdays` days held with
 * transmit: false, then a sell Stop and a sell Limit, its children (parent), valid
 * `limdays2` days; the last one sends the three.
 * p1: fast moving-average period
 * p2: slow moving-average period
 * limit: entry distance under the close, as a fraction
 * limdays: days the entry is valid
 * limdays2: days the exits are valid
 */
class BracketParentChild extends Strategy {
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
    const o1 = this.buy({ exectype: 'Limit', price: p1, valid: this.p.limdays, transmit: false });
    const o2 = this.sell({ exectype: 'Stop', price: p1 - 0.02 * close, valid: this.p.limdays2, parent: o1, transmit: false });
    const o3 = this.sell({ exectype: 'Limit', price: p1 + 0.02 * close, valid: this.p.limdays2, parent: o1 });
    this.orefs = [o1.ref, o2.ref, o3.ref];
  }
}

/**
 * Breakout with protective exits: buy when the close breaks above the
 * highest high of the previous bars; once filled, place a stop-loss and a
 * take-profit that cancel each other (OCO).
 * period: number of previous bars whose highest high must be broken
 * size: number of shares bought on each breakout
 * stop_pct: stop-loss price as a multiple of the entry fill price
 * target_pct: take-profit price as a multiple of the entry fill price
 */
class BracketOrders extends Strategy {
  static params = { period: 20, size: 10, stop_pct: 0.95, target_pct: 1.1 };

  init() {
    // highest high of the previous `period` bars (excluding the current one)
    this.hh = ind.Highest(ind.Delay(this.data.high, 1), this.p.period);
  }

  next() {
    if (this.position.size === 0 && this.data.close[0] > this.hh[0]) {
      this.buy({ size: this.p.size });
    }
  }

  notifyOrder(order) {
    if (order.status !== 'Completed' || !order.isBuy()) return;
    // The entry's fill price: a market order fills at the open of this bar. (Like
    // backtrader's, order.executed.price is an average, size*price/size, which can
    // differ from the fill price in the last digit.)
    const fill = this.data.open[0];
    const size = order.executed.size;
    const stop = this.sell({ exectype: 'Stop', price: fill * this.p.stop_pct, size });
    this.sell({ exectype: 'Limit', price: fill * this.p.target_pct, size, oco: stop });
  }
}

/**
 * backtrader's samples/order-history with --order-history: an empty strategy, the orders
 * coming from an order history added with notify true; each finished order is logged as
 * the sample prints it (date, size, price) and each closed trade's net profit.
 */
class OrderHistory extends Strategy {
  init() {
    this.broker.addOrderHistory([
      ['2005-02-01', 1, 2984.63], ['2005-03-04', -1, 3079.93], ['2005-03-08', 1, 3113.82],
      ['2005-03-22', -1, 3040.55], ['2005-04-08', 1, 3092.07], ['2005-04-20', -1, 2957.92],
      ['2005-05-13', 1, 2991.71], ['2005-08-19', -1, 3284.35], ['2005-08-22', 1, 3328.84],
      ['2005-08-25', -1, 3293.69], ['2005-09-12', 1, 3361.1], ['2005-10-18', -1, 3356.73],
      ['2005-11-09', 1, 3361.92], ['2006-01-24', -1, 3544.78], ['2006-02-06', 1, 3678.87],
      ['2006-03-13', -1, 3801.03], ['2006-03-20', 1, 3833.25], ['2006-04-13', -1, 3777.24],
      ['2006-05-02', 1, 3839.24], ['2006-05-16', -1, 3711.46], ['2006-06-30', 1, 3592.01],
      ['2006-07-21', -1, 3580.53], ['2006-08-01', 1, 3687.82], ['2006-09-14', -1, 3809.08],
      ['2006-09-25', 1, 3815.13], ['2006-12-01', -1, 3993.03], ['2006-12-18', 1, 4140.99],
    ], { notify: true });
  }

  notifyOrder(order) {
    if (!order.alive()) this.log(`${order.executed.date},${order.executed.size},${order.executed.price}`);
  }

  notifyTrade(trade) {
    if (trade.isclosed) this.log(`profit ${trade.pnlcomm}`);
  }

  next() {}
}

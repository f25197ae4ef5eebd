/**
 * Credit interest kept out of the commissions, the twin of testdata/backtrader/gen.py's
 * CreditInterestNoPnl: CreditInterest's crossover with interest on longs and shorts and
 * `this.broker.setInt2Pnl(false)` (backtrader's broker.set_int2pnl(False)): the interest
 * is taken from the cash, but no closing fill's commission or trade's pnlcomm carries it.
 * p1: fast moving-average period
 * p2: slow moving-average period
 * stake: units long or short
 * interest: yearly interest rate
 * interest_long: whether long positions pay interest too
 */
class CreditInterestNoPnl extends Strategy {
  static params = { p1: 10, p2: 30, stake: 10, interest: 0.03, interest_long: true };

  init() {
    this.broker.setCommission({ commission: 0.001, interest: this.p.interest, interestLong: this.p.interest_long });
    this.broker.setInt2Pnl(false);
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.p1), ind.SMA(this.data.close, this.p.p2));
  }

  next() {
    if (this.cross[0] > 0) this.orderTargetSize({ target: this.p.stake });
    else if (this.cross[0] < 0) this.orderTargetSize({ target: -this.p.stake });
  }
}

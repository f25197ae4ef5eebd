/**
 * Credit interest, the twin of testdata/backtrader/gen.py's CreditInterest (backtrader's
 * samples/credit-interest): an SMA crossover long and short with a commission scheme
 * charging `interest` a year on open short positions (and long ones with interest_long),
 * by calendar day, added to the commission of the fill that closes them.
 * p1: fast moving-average period
 * p2: slow moving-average period
 * stake: units long or short
 * interest: yearly interest rate
 * interest_long: whether long positions pay interest too
 */
class CreditInterest extends Strategy {
  static params = { p1: 10, p2: 30, stake: 10, interest: 0.05, interest_long: false };

  init() {
    this.broker.setCommission({ commission: 0.001, interest: this.p.interest, interestLong: this.p.interest_long });
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.p1), ind.SMA(this.data.close, this.p.p2));
  }

  next() {
    if (this.cross[0] > 0) this.orderTargetSize({ target: this.p.stake });
    else if (this.cross[0] < 0) this.orderTargetSize({ target: -this.p.stake });
  }
}

/**
 * samples/signals-strategy with --signal shortonly and a shortexit signal: short when the
 * close is under its moving average, covered when the fast average rises over the slow;
 * the signals added in init() with signalAdd, sized by a FixedSize sizer.
 * smaperiod: period of the moving average (the slow one of the exit)
 * exitperiod: period of the exit's fast moving average
 * stake: shares an order
 */
class SignalsShortExit extends Strategy {
  static params = { smaperiod: 30, exitperiod: 5, stake: 5 };

  init() {
    const c = this.data.close;
    const slow = ind.SMA(c, this.p.smaperiod);
    this.setSizer({ type: 'fixed', stake: this.p.stake });
    this.signalAdd('short', c.sub(slow));
    this.signalAdd('shortexit', ind.SMA(c, this.p.exitperiod).sub(slow));
  }
}

/**
 * A long signal (the close against its moving average) and a short one (the fast average
 * against the slow), accumulating and concurrent: a long is added to on every bar both
 * stay long, left when the close falls under its average, reversed when the fast average
 * falls under the slow.
 * smaperiod: period of the moving average (the slow one of the short signal)
 * exitperiod: period of the short signal's fast moving average
 * stake: shares an order
 */
class SignalsAccumulate extends Strategy {
  static params = { smaperiod: 30, exitperiod: 5, stake: 10 };
  static signals = [
    { type: 'long', line: (s) => s.data.close.sub(ind.SMA(s.data.close, s.p.smaperiod)) },
    { type: 'short', line: (s) => ind.SMA(s.data.close, s.p.exitperiod).sub(ind.SMA(s.data.close, s.p.smaperiod)) },
  ];
  static signalOptions = { accumulate: true, concurrent: true };

  init() {
    this.setSizer({ type: 'fixed', stake: this.p.stake });
  }
}

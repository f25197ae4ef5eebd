/**
 * signals_data with concurrent signal orders: while an entry waits for its feed's next bar,
 * the next bar's signals may place another.
 * smaperiod: period of the moving average
 * stake: shares an order
 */
class SignalsDataConcurrent extends Strategy {
  static params = { smaperiod: 30, stake: 3 };
  static signals = [
    { type: 'longshort', line: (s) => s.data0.close.sub(ind.SMA(s.data0.close, s.p.smaperiod)) },
  ];
  static signalOptions = { data: 1, concurrent: true };

  init() {
    this.setSizer({ type: 'fixed', stake: this.p.stake });
  }
}

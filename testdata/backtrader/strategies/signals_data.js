/**
 * A longshort signal of the first feed's close against its moving average, trading the
 * second feed (signalOptions.data, by symbol): an entry made before a day the second feed
 * lacks waits a day longer, and meanwhile no signal order is placed.
 * smaperiod: period of the moving average
 * stake: shares an order
 */
class SignalsData extends Strategy {
  static params = { smaperiod: 30, stake: 3 };
  static signals = [
    { type: 'longshort', line: (s) => s.data0.close.sub(ind.SMA(s.data0.close, s.p.smaperiod)) },
  ];
  static signalOptions = { data: 'nvda_gaps' };

  init() {
    this.setSizer({ type: 'fixed', stake: this.p.stake });
  }
}

/**
 * backtrader's samples/signals-strategy as it runs by default: one longshort signal, the
 * close minus its moving average; one share an order (the default sizer).
 * smaperiod: period of the moving average
 */
class SignalsLongShort extends Strategy {
  static params = { smaperiod: 30 };
  static signals = [
    { type: 'longshort', line: (s) => s.data.close.sub(ind.SMA(s.data.close, s.p.smaperiod)) },
  ];
}

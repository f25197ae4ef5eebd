/**
 * Trades by signals, as backtrader's samples/signals-strategy with --signal longonly
 * --exitsignal longexit: long when the close is above its moving average, out when the
 * fast average falls under the slow one. No next(): the signals place the orders.
 * smaperiod: period of the moving average (the slow one of the exit)
 * exitperiod: period of the exit's fast moving average
 */
// A signal is a line: above 0 says long, under 0 short.
const smaClose = (data, period) => data.close.sub(ind.SMA(data.close, period));
const smaExit = (data, p1, p2) => ind.SMA(data.close, p1).sub(ind.SMA(data.close, p2));

class SmaSignals extends Strategy {
  static params = { smaperiod: 30, exitperiod: 5 };
  static signals = [
    { type: 'long', line: (s) => smaClose(s.data, s.p.smaperiod) },
    { type: 'longexit', line: (s) => smaExit(s.data, s.p.exitperiod, s.p.smaperiod) },
  ];
}

/**
 * nextStart with feeds of two timeframes, the twin of testdata/backtrader/gen.py's
 * MultiFrameNextStart (backtrader's tests/test_data_multiframe.py): a daily and a weekly
 * feed, no resampling, an SMA on each. nextStart runs on every daily bar of the week in
 * which the weekly feed reaches its period-th bar and sells 1 each time; the bar after the
 * last, a buy Limit at 1.0 (open to the end) of as many shares as that last nextStart's
 * bar number (backtrader's minimum period of the strategy), a bar later one of as many as
 * the next() calls so far (nextStart's default calls next).
 * period: the SMAs' period
 */
class MultiFrameNextStart extends Strategy {
  static params = { period: 30 };

  init() {
    ind.SMA(this.data0.close, this.p.period);
    ind.SMA(this.data1.close, this.p.period);
    this.chkmin = 0;
    this.nextcalls = 0;
  }

  nextStart() {
    this.chkmin = this.data.length;
    this.sell({ data: this.data0, size: 1 });
    super.nextStart();
  }

  next() {
    this.nextcalls++;
    const n = this.data.length;
    if (n === this.chkmin + 1) {
      this.buy({ data: this.data0, size: this.chkmin, exectype: 'Limit', price: 1.0 });
    } else if (n === this.chkmin + 2) {
      this.buy({ data: this.data0, size: this.nextcalls, exectype: 'Limit', price: 1.0 });
    }
  }
}

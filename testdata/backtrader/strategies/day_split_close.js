/**
 * The twin of testdata/backtrader/gen.py's DaySplitClose: the DaySplitter_Close filter
 * delivers each day as two bars, its open, high and low (the close their average, at the
 * session start, half the volume) and then its close alone (at the session end, the
 * rest), as backtrader's replaydata(timeframe=Days) of the split feed does. On the first
 * part (an odd length), flat, when its close is above the SMA of the parts' closes and
 * its volume above the previous day's first part's, a market buy, filled at the same
 * day's close; in a position, a close part under the SMA closes it at the next day's
 * open.
 * period: SMA period, in parts (two a day)
 * size: shares bought
 */
class DaySplitClose extends Strategy {
  static params = { period: 10, size: 10 };
  static filters = { filter: 'DaySplitter_Close' };

  init() {
    this.sma = ind.SMA(this.data.close, this.p.period);
  }

  next() {
    const d = this.data;
    if (d.length % 2 === 1) {
      if (this.position.size === 0 && d.close[0] > this.sma[0] && d.volume[0] > d.volume[-2]) {
        this.buy({ size: this.p.size });
      }
    } else if (this.position.size !== 0 && d.close[0] < this.sma[0]) {
      this.close();
    }
  }
}

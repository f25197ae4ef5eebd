/**
 * The twin of testdata/backtrader/gen.py's DaySplitSession: day_split_close.js with the
 * session 09:30-16:00, the times of the two parts of each day, and closevol 0.3 (70% of
 * the volume in the first part, the open, high and low with their average as the close;
 * the rest in the second, the close alone). On the first part, flat, when its close is
 * above the SMA of the parts' closes and its volume above the previous day's first
 * part's, a market buy, filled at the same day's close; in a position, a close part
 * under the SMA closes it at the next day's open.
 * period: SMA period, in parts (two a day)
 * size: shares bought
 */
class DaySplitSession extends Strategy {
  static params = { period: 10, size: 10 };
  static filters = { filter: 'DaySplitter_Close', closevol: 0.3, sessionstart: '09:30', sessionend: '16:00' };

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

/**
 * The twin of testdata/backtrader/gen.py's SessionFillerCross, after backtrader's
 * samples/data-filler: the SessionFiller filter fills the 5-minute bars missing inside
 * the 09:00-17:30 sessions, at their starts and at their ends with the last close, and an
 * SMA crossover runs over the filled bars.
 * fast: fast SMA period, in bars
 * slow: slow SMA period, in bars
 * size: contracts bought
 */
class SessionFillerCross extends Strategy {
  static params = { fast: 5, slow: 20, size: 1 };
  static filters = { filter: 'SessionFiller', minutes: 5, sessionstart: '09:00', sessionend: '17:30', fill_vol: 0 };

  init() {
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow));
  }

  next() {
    if (this.position.size === 0 && this.cross[0] > 0) {
      this.buy({ size: this.p.size });
    } else if (this.position.size !== 0 && this.cross[0] < 0) {
      this.close();
    }
  }
}

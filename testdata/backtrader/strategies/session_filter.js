/**
 * The twin of testdata/backtrader/gen.py's SessionFilterCross: the SessionFilter filter
 * drops the 5-minute bars before 10:00 and after 16:00 (both ends kept), and an SMA
 * crossover runs over the rest.
 * fast: fast SMA period, in bars
 * slow: slow SMA period, in bars
 * size: contracts bought
 */
class SessionFilterCross extends Strategy {
  static params = { fast: 5, slow: 20, size: 1 };
  static filters = { filter: 'SessionFilter', sessionstart: '10:00', sessionend: '16:00' };

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

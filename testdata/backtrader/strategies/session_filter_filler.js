/**
 * The twin of testdata/backtrader/gen.py's SessionFilterFiller: SessionFilter drops the
 * 5-minute bars outside the session 10:00-15:55, then SessionFiller fills the bars
 * missing inside it (es_min5_gaps lacks some) at the last close, and an SMA crossover
 * runs over the result.
 * fast: fast SMA period, in bars
 * slow: slow SMA period, in bars
 * size: contracts bought
 */
class SessionFilterFiller extends Strategy {
  static params = { fast: 5, slow: 20, size: 1 };
  static filters = [
    { filter: 'SessionFilter', sessionstart: '10:00', sessionend: '15:55' },
    { filter: 'SessionFiller', minutes: 5, sessionstart: '10:00', sessionend: '15:55', fill_vol: 0 },
  ];

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

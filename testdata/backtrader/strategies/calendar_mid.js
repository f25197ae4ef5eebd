/**
 * The twin of testdata/backtrader/gen.py's CalendarMid: calendar_days.js on Heikin-Ashi
 * candles, the missing days filled at the last candle's high-low midpoint
 * (CalendarDays fill_price -1).
 * fast: fast SMA period, in calendar days
 * slow: slow SMA period, in calendar days
 * size: shares bought
 */
class CalendarMid extends Strategy {
  static params = { fast: 7, slow: 28, size: 10 };
  static filters = [{ filter: 'HeikinAshi' }, { filter: 'CalendarDays', fill_price: -1, fill_vol: 0 }];

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

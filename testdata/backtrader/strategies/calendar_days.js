/**
 * The twin of testdata/backtrader/gen.py's CalendarCross, after backtrader's
 * samples/calendar-days: the CalendarDays filter fills the missing calendar days with
 * bars at the last close (and, as backtrader, the date of the bar after a gap, before
 * that bar), and an SMA crossover runs over calendar days. Orders placed on a Friday
 * fill on Saturday's filler bar.
 * fast: fast SMA period, in calendar days
 * slow: slow SMA period, in calendar days
 * size: shares bought
 */
class CalendarCross extends Strategy {
  static params = { fast: 7, slow: 28, size: 10 };
  static filters = { filter: 'CalendarDays', fill_price: 0, fill_vol: 0 };

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

/**
 * The twin of testdata/backtrader/gen.py's WeekDaysCross: backtrader's
 * samples/weekdays-filler WeekDaysFiller, a data filter written in the strategy file, adds
 * a bar at the last close for each weekday (Monday to Friday) without one, stamped at the
 * session end; an SMA crossover then runs over weekdays.
 * fast: fast SMA period, in weekdays
 * slow: slow SMA period, in weekdays
 * size: shares bought
 */

// backtrader's WeekDaysFiller, line by line: call(data) is its __call__. Volumes here are
// whole numbers, so a filled bar has volume 0 where backtrader's takes the last close.
class WeekDaysFiller {
  constructor(data, p) {
    this.fillclose = p.fillclose ?? true; // backtrader's default, false, fills NaN prices: refused here
    this.lastdt = null;                   // the last date seen, in ms at midnight UTC
  }

  call(data) {
    const DAY = 86400000;
    const dt = Math.floor(data.datetime[0].getTime() / DAY) * DAY; // the bar's date
    for (let d = this.lastdt === null ? dt : this.lastdt + DAY; d < dt; d += DAY) {
      const wd = new Date(d).getUTCDay();
      if (wd >= 1 && wd <= 5) { // Mon-Fri
        const c = this.fillclose ? this.lastclose : NaN;
        data.add2stack({ datetime: data.sessionEnd(new Date(d)), open: c, high: c, low: c, close: c, volume: 0 });
      }
    }
    this.lastdt = dt;
    this.lastclose = data.close[0];
    data.save2stack(true); // the bar itself after the fillers, and out of the stream
    return true;           // the bars are on the stack (new and original)
  }
}

class WeekDaysCross extends Strategy {
  static params = { fast: 5, slow: 20, size: 10 };
  static filters = { filter: WeekDaysFiller, fillclose: true };

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

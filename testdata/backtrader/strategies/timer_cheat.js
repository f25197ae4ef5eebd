/**
 * Cheat timers, the twin of testdata/backtrader/gen.py's TimerCheat: on Mondays (weekcarry)
 * a timer with cheat: true runs before the broker and buys `size` shares when flat and the
 * open is above the moving average (read one bar behind, as in nextOpen); the order fills
 * at that bar's open, which needs cheat-on-open (an empty nextOpen). A plain timer one hour
 * before the session end of the 10th and the 20th of the month (monthcarry off) closes the
 * position at the next open. Every call is logged as "timer <tid> <when>".
 * size: shares bought
 * period: moving-average period
 */
class TimerCheat extends Strategy {
  static params = { size: 10, period: 10 };

  init() {
    this.sma = ind.SMA(this.data.close, this.p.period);
    this.addTimer({ when: 'session_start', weekdays: [1], weekcarry: true, cheat: true });
    this.addTimer({ when: 'session_end', offset: { hours: -1 }, monthdays: [10, 20], monthcarry: false });
  }

  nextOpen() {}

  notifyTimer(timer, when) {
    this.log(`timer ${timer.tid} ${when.toISOString().slice(0, 19)}`);
    if (timer.tid === 0) {
      if (this.position.size === 0 && this.data.open[0] > this.sma[0]) this.buy({ size: this.p.size });
    } else if (this.position.size) {
      this.close();
    }
  }
}

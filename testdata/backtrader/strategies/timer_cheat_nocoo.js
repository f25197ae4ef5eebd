/**
 * Cheat timers without cheat-on-open, the twin of testdata/backtrader/gen.py's
 * TimerCheatNoCoo: the timers with cheat: true run before the broker (the data at the new
 * bar, the moving average one bar behind), but with no nextOpen() a market order made there
 * fills at the next bar's open, as one made in next(). On Mondays (weekcarry) buy `size`
 * shares when flat and the open is above the moving average; on the 10th and the 20th
 * (monthcarry off) sell the position with a Limit at the bar's open, which the broker tries
 * on that same bar. A plain timer at the session end of Fridays only logs. Every call is
 * logged as "timer <tid> <when>".
 * size: shares bought
 * period: moving-average period
 */
class TimerCheatNoCoo extends Strategy {
  static params = { size: 10, period: 10 };

  init() {
    this.sma = ind.SMA(this.data.close, this.p.period);
    this.addTimer({ when: 'session_start', weekdays: [1], weekcarry: true, cheat: true });
    this.addTimer({ when: 'session_start', monthdays: [10, 20], monthcarry: false, cheat: true });
    this.addTimer({ when: 'session_end', weekdays: [5] });
  }

  notifyTimer(timer, when) {
    this.log(`timer ${timer.tid} ${when.toISOString().slice(0, 19)}`);
    if (timer.tid === 0) {
      if (this.position.size === 0 && this.data.open[0] > this.sma[0]) this.buy({ size: this.p.size });
    } else if (timer.tid === 1 && this.position.size) {
      this.sell({ size: this.position.size, exectype: 'Limit', price: this.data.open[0] });
    }
  }
}

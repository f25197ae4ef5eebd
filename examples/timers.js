/**
 * A monthly investment plan run by timers (backtrader's add_timer; the strategy of
 * testdata/backtrader/strategies/timer_monthly.js under another name): at the session start of the 1st and the 15th of each month (monthcarry:
 * the next trading day when the day has no bar) buy `size` shares; at the session end of
 * each Wednesday (weekcarry: the next trading day of the week when Wednesday has no bar)
 * sell half the position once it holds `most` shares or more. A third timer at 15:30 plus
 * 30 minutes on Mondays and Fridays only logs. Every call is logged as "timer <tid> <when>".
 * size: shares bought on each plan day
 * most: position from which a Wednesday sells half
 */
class MonthlyPlan extends Strategy {
  static params = { size: 10, most: 40 };

  init() {
    this.addTimer({ when: 'session_start', monthdays: [1, 15], monthcarry: true });
    this.addTimer({ when: 'session_end', weekdays: [3], weekcarry: true });
    this.addTimer({ when: '15:30', offset: { minutes: 30 }, weekdays: [1, 5] });
  }

  notifyTimer(timer, when) {
    this.log(`timer ${timer.tid} ${when.toISOString().slice(0, 19)}`);
    if (timer.tid === 0) this.buy({ size: this.p.size });
    else if (timer.tid === 1 && this.position.size >= this.p.most) this.sell({ size: Math.floor(this.position.size / 2) });
  }
}

/**
 * The twin of testdata/backtrader/gen.py's DayStepsClose: backtrader's
 * samples/pinkfish-challenge DayStepsCloseFilter, a data filter written in the strategy
 * file, run as backtrader runs filters by default (preloaded): each day is put on the
 * stack as its open-high-low part, and the next day's call writes the day's whole bar,
 * stamped at the session end, over it; last() hands over the final day. The strategy
 * therefore sees whole days. Flat, when the high is the highest of highperiod days, a buy
 * at market; sellafter bars later a sell.
 * highperiod: bars of the highest high
 * sellafter: bars held
 * size: shares bought
 */

// backtrader's DayStepsCloseFilter, line by line: call(data) is its __call__.
class DayStepsCloseFilter {
  constructor(data, p) {
    this.cvol = p.cvol ?? 0.5; // 0 -> 1 amount of volume to keep for close
    this.pendingbar = null;
  }

  call(data) {
    const closebar = data.bar(0); // a copy of the new bar
    const ohlbar = { ...closebar };
    ohlbar.volume = Math.trunc(closebar.volume * (1.0 - this.cvol));
    ohlbar.datetime = data.sessionStart(closebar.datetime);
    closebar.datetime = data.sessionEnd(closebar.datetime);

    data.backwards(); // remove the copied bar from the stream
    // overwrite the new data bar with the pending one, except at the start
    if (this.pendingbar !== null) data.updatebar(this.pendingbar);
    this.pendingbar = closebar;
    data.add2stack(ohlbar); // the open bar to the stack for processing
    return false;           // the length of the stream was not changed
  }

  last(data) {
    if (this.pendingbar !== null) {
      data.backwards();                // remove the delivered open bar
      data.add2stack(this.pendingbar); // add the remaining one
      this.pendingbar = null;
      return true;
    }
    return false;
  }
}

class DayStepsClose extends Strategy {
  static params = { highperiod: 20, sellafter: 2, size: 10 };
  static filters = { filter: DayStepsCloseFilter };

  init() {
    this.highest = ind.Highest(this.data.high, this.p.highperiod);
    this.inmarket = 0;
  }

  next() {
    if (this.position.size === 0) {
      if (this.data.high[0] === this.highest[0]) {
        this.buy({ size: this.p.size });
        this.inmarket = this.data.length;
      }
    } else if (this.data.length - this.inmarket >= this.p.sellafter) {
      this.sell({ size: this.position.size });
    }
  }
}

/**
 * The twin of testdata/backtrader/gen.py's DaySplitReplay, after backtrader's
 * samples/pinkfish-challenge: each daily bar split in two by DaySplitter_Close and
 * replayed to days, so the two parts form one day bar (the length counts days, the
 * close part completes the day with its close and both volumes). On a day's first part
 * (the length grown), flat, when the high is the highest high of `highperiod` days, a
 * buy at market (filled at the day's close part); `sellafter` days after the entry a
 * sell at market.
 * highperiod: days of the highest high
 * sellafter: days held
 * size: shares bought
 */
class DaySplitReplay extends Strategy {
  static params = { highperiod: 20, sellafter: 2, size: 10 };
  static filters = { filter: 'DaySplitter_Close' };
  static replay = { timeframe: 'days' };

  init() {
    this.highest = ind.Highest(this.data.high, this.p.highperiod);
    this.lcontrol = 0;
    this.inmarket = 0;
  }

  next() {
    const d = this.data;
    if (this.position.size === 0) {
      if (d.length > this.lcontrol && d.high[0] === this.highest[0]) {
        this.buy({ size: this.p.size });
        this.inmarket = d.length;
      }
    } else if (d.length - this.inmarket >= this.p.sellafter) {
      this.sell({ size: this.position.size });
    }
    this.lcontrol = d.length;
  }
}

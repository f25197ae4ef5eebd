/**
 * The twin of testdata/backtrader/gen.py's ReplayPairs, after backtrader's
 * samples/data-replay and samples/multidata-strategy: two feeds, each replayed to weeks
 * (static replay, one entry per feed), next() on every day with each week as it stands.
 * Each feed has the crossover of its close with its SMA of weeks: long `size` on a feed
 * whose close crosses above, out when its close falls under its last finished week's low.
 * period: SMA period, in weeks
 * size: shares bought
 */
class ReplayPairs extends Strategy {
  static params = { period: 10, size: 10 };
  static replay = [{ timeframe: 'weeks', data: 0 }, { timeframe: 'weeks', data: 1 }];

  init() {
    this.cross = this.datas.map((d) => ind.CrossOver(d.close, ind.SMA(d.close, this.p.period)));
  }

  next() {
    this.datas.forEach((d, k) => {
      const pos = this.getPosition(d).size;
      if (pos === 0 && this.cross[k][0] > 0) {
        this.buy({ data: d, size: this.p.size });
      } else if (pos !== 0 && d.close[0] < d.low[-1]) {
        this.close({ data: d });
      }
    });
  }
}

/**
 * The twin of testdata/backtrader/gen.py's ReplayPairsMonths: replay_pairs.js with the
 * first feed replayed to weeks and the second to months (static replay, one entry per
 * feed, each its own timeframe), next() on every day with the week and the month as they
 * stand. Each feed has the crossover of its close with its SMA of its own bars: long
 * `size` on a feed whose close crosses above, out when its close falls under its last
 * finished bar's low.
 * period: SMA period, in weeks or months (the feed's bars)
 * size: shares bought
 */
class ReplayPairsMonths extends Strategy {
  static params = { period: 6, size: 10 };
  static replay = [{ timeframe: 'weeks', data: 0 }, { timeframe: 'months', data: 1 }];

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

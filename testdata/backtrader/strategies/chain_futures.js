/**
 * A moving-average crossover on five futures contracts chained into one feed (backtrader's
 * cerebro.chaindata), the twin of testdata/backtrader/gen.py's ChainCross: each contract to
 * its last bar, then the next one's bars after it. Run with the contracts in order:
 * --data ESH1.csv --data ESM1.csv … (testdata/backtrader/data).
 * fast: period of the fast moving average
 * slow: period of the slow moving average
 * size: contracts per trade
 */
class ChainCross extends Strategy {
  static params = { fast: 5, slow: 15, size: 2 };
  static chain = { name: 'ES' };

  init() {
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow));
  }

  // logs "roll <date> <contract>" where the contract the bars come from changes
  roll() {
    if (this.data.contract !== this.contract) {
      this.contract = this.data.contract;
      this.log(`roll ${this.data.date(0)} ${this.contract}`);
    }
  }

  prenext() {
    this.roll();
  }

  next() {
    this.roll();
    if (this.position.size === 0 && this.cross[0] > 0) this.buy({ size: this.p.size });
    else if (this.position.size > 0 && this.cross[0] < 0) this.close();
  }
}

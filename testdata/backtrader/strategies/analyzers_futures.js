/**
 * Futures, the twin of testdata/backtrader/gen.py's AnalyzersFutures (comm_futures with the analyzers): 2.0 per contract, a
 * margin of 1000 and a multiplier of 10; a crossover long and short, adding a contract
 * `add_after` bars into a position and reversing on the opposite cross, with gains
 * settled in cash at every close.
 * fast: fast moving-average period
 * slow: slow moving-average period
 * per_contract: commission per contract
 * margin: cash held per contract
 * mult: money per point per contract
 * add_after: bars into a position when a second contract is added
 */
class AnalyzersFutures extends Strategy {
  static params = { fast: 10, slow: 30, per_contract: 2.0, margin: 1000.0, mult: 10.0, add_after: 5 };

  init() {
    this.broker.setCommission({ commission: this.p.per_contract, margin: this.p.margin, mult: this.p.mult });
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow));
    this.since = 0;
  }

  next() {
    const pos = this.position.size;
    const n = this.data.length;
    if (this.cross[0] > 0) {
      this.orderTargetSize({ target: 1 });
      this.since = n;
    } else if (this.cross[0] < 0) {
      this.orderTargetSize({ target: -1 });
      this.since = n;
    } else if (pos !== 0 && Math.abs(pos) === 1 && n - this.since === this.p.add_after) {
      if (pos > 0) this.buy({ size: 1 });
      else this.sell({ size: 1 });
    }
  }
}

/**
 * One round trip, the twin of testdata/backtrader/gen.py's OneSided: bought on bar `entry`
 * and closed on bar `exit`, so the trade analyzer's won or lost group stays empty (its pnl
 * total and average are 0, as backtrader reports them once a trade has closed).
 * size: shares bought
 * entry: bar of the buy
 * exit: bar of the close
 */
class OneSided extends Strategy {
  static params = { size: 10, entry: 50, exit: 60 };

  next() {
    const n = this.data.length;
    if (n === this.p.entry) this.buy({ size: this.p.size });
    else if (n === this.p.exit) this.close();
  }
}

/**
 * MACD trend follower: go long when the MACD line crosses above its signal
 * line, close the position when it crosses back below.
 * fast: period of the fast EMA
 * slow: period of the slow EMA
 * signal: period of the EMA of the MACD line (the signal line)
 * size: number of shares bought on each entry
 */
class MacdCross extends Strategy {
  static params = { fast: 12, slow: 26, signal: 9, size: 10 };

  init() {
    const m = ind.MACD(this.data.close, this.p.fast, this.p.slow, this.p.signal);
    this.cross = ind.CrossOver(m.macd, m.signal);
  }

  next() {
    if (this.position.size === 0 && this.cross[0] > 0) {
      this.buy({ size: this.p.size });
    } else if (this.position.size > 0 && this.cross[0] < 0) {
      this.close();
    }
  }

  notifyTrade(trade) {
    if (trade.isclosed) this.log(`trade closed, net pnl ${trade.pnlcomm.toFixed(2)}`);
  }
}

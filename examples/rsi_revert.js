/**
 * RSI mean reversion: buy when the RSI is oversold, sell when overbought.
 * period: RSI lookback (Wilder smoothing), in bars
 * low: buy when flat and the RSI is below this level
 * high: close the position when the RSI is above this level
 * size: number of shares bought on each entry
 */
class RsiRevert extends Strategy {
  static params = { period: 14, low: 30.0, high: 70.0, size: 20 };

  init() {
    this.rsi = ind.RSI(this.data.close, this.p.period);
  }

  next() {
    const size = this.position.size;
    if (size === 0) {
      if (this.rsi[0] < this.p.low) this.buy({ size: this.p.size });
    } else if (size > 0 && this.rsi[0] > this.p.high) {
      this.close();
    }
  }
}

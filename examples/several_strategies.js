/**
 * Two strategies on one broker (backtrader's cerebro.addstrategy called twice): a
 * moving-average trend follower and an RSI dip buyer, each trading shares of its own in
 * the same feed. The cash and the position are shared, so each keeps count of what it
 * bought; the result names the strategy of every fill and round trip, and gives each its
 * own trades and analyzers (the results page's By strategy).
 * fast: period of the fast moving average
 * slow: period of the slow moving average
 * size: shares the trend follower buys
 */
class Trend extends Strategy {
  static params = { fast: 20, slow: 50, size: 10 };

  init() {
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow));
    this.held = 0;
  }

  next() {
    if (!this.held && this.cross[0] > 0) {
      this.buy({ size: this.p.size });
      this.held = this.p.size;
    } else if (this.held && this.cross[0] < 0) {
      this.sell({ size: this.held });
      this.held = 0;
    }
  }
}

/**
 * Buys when the RSI falls under `low`, sells when it rises over `high`.
 * period: RSI period
 * low: RSI under which it buys
 * high: RSI over which it sells
 * size: shares per dip
 */
class Dip extends Strategy {
  static params = { period: 14, low: 30, high: 55, size: 5 };

  init() {
    this.rsi = ind.RSI(this.data.close, this.p.period);
    this.held = 0;
  }

  next() {
    if (!this.held && this.rsi[0] < this.p.low) {
      this.buy({ size: this.p.size });
      this.held = this.p.size;
    } else if (this.held && this.rsi[0] > this.p.high) {
      this.sell({ size: this.held });
      this.held = 0;
    }
  }
}

// Run both, in this order; { strategy: Trend, params: { fast: 10, slow: 30 } } would add
// another trend follower with periods of its own.
const strategies = [Trend, Dip];

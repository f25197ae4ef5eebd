/**
 * Several strategies in one run, the twin of testdata/backtrader/gen.py's MULTI_RUN
 * (cerebro.addstrategy three times): two long-only crossovers of different periods and
 * sizes, and timed Limit entries, on one broker. The position is the feed's, shared, so
 * each strategy keeps its own holding; each has its own orders, trades and warm-up.
 * fast: period of the fast moving average
 * slow: period of the slow moving average
 * size: shares bought on a cross up
 */
class MultiCross extends Strategy {
  static params = { fast: 10, slow: 30, size: 10 };

  init() {
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow));
    this.held = 0;
  }

  next() {
    if (this.cross[0] > 0 && !this.held) {
      this.buy({ size: this.p.size });
      this.held = this.p.size;
    } else if (this.cross[0] < 0 && this.held) {
      this.sell({ size: this.held });
      this.held = 0;
    }
  }
}

/**
 * Every `every` bars a Limit buy of `size` at `limit_pct` of the close, valid `valid`
 * days; `hold` bars after it fills, a market sell of what it bought.
 * every: bars between entries
 * size: shares per entry
 * hold: bars a fill is held
 * limit_pct: entry limit as a multiple of the close
 * valid: days an entry stays valid
 */
class MultiHold extends Strategy {
  static params = { every: 15, size: 3, hold: 5, limit_pct: 0.995, valid: 4 };

  init() {
    this.filled = null;
    this.live = null;
  }

  notifyOrder(order) {
    if (this.live !== null && order.ref === this.live.ref && !order.alive()) {
      this.live = null;
      if (order.status === 'Completed' && order.isBuy()) this.filled = this.data.length;
    }
  }

  next() {
    const n = this.data.length;
    if (this.filled !== null && n - this.filled >= this.p.hold) {
      this.sell({ size: this.p.size });
      this.filled = null;
    } else if (this.filled === null && this.live === null && n % this.p.every === 0) {
      this.live = this.buy({ exectype: 'Limit', price: this.data.close[0] * this.p.limit_pct, size: this.p.size,
                             valid: { days: this.p.valid } });
    }
  }
}

const strategies = [MultiCross, { strategy: MultiCross, params: { fast: 5, slow: 20, size: 5 } }, MultiHold];

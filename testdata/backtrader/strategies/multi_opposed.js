/**
 * A long-only and a short-only crossover on one broker, the twin of gen.py's
 * MULTI_OPPOSED: the shared position crosses zero both ways, and each fill's closing and
 * opening parts (the position's) go to the trades of the strategy whose order it is.
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
 * Sells `size` on a cross down and buys them back on a cross up.
 * fast: period of the fast moving average
 * slow: period of the slow moving average
 * size: shares sold on a cross down
 */
class MultiShort extends Strategy {
  static params = { fast: 5, slow: 20, size: 7 };

  init() {
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow));
    this.held = 0;
  }

  next() {
    if (this.cross[0] < 0 && !this.held) {
      this.sell({ size: this.p.size });
      this.held = this.p.size;
    } else if (this.cross[0] > 0 && this.held) {
      this.buy({ size: this.held });
      this.held = 0;
    }
  }
}

const strategies = [MultiCross, MultiShort];

/**
 * backtrader's samples/multi-copy with both strategies on one feed, the twin of gen.py's
 * MULTI_COPY: a MACD and an SMA crossover each buy half the stake on a cross up and close
 * the feed's shared position (half of it when it is the stake) on a cross down, so one
 * strategy's close sells what the other holds and its trades open on fills that close
 * the other's holding.
 * stake: shares of a full position (each cross up buys half)
 * macd1: MACD fast period
 * macd2: MACD slow period
 * macdsig: MACD signal period
 * sma1: fast SMA period
 * sma2: slow SMA period
 */
class MultiCopy extends Strategy {
  static params = { stake: 100, macd1: 12, macd2: 26, macdsig: 9, sma1: 10, sma2: 30 };

  init() {
    this.smasig = ind.CrossOver(ind.SMA(this.data.close, this.p.sma1), ind.SMA(this.data.close, this.p.sma2));
    const macd = ind.MACD(this.data.close, { fast: this.p.macd1, slow: this.p.macd2, signal: this.p.macdsig });
    this.macdsig = ind.CrossOver(macd.macd, macd.signal);
  }

  next() {
    const buysize = Math.floor(this.p.stake / 2);
    if (this.macdsig[0] > 0) this.buy({ size: buysize });
    if (this.smasig[0] > 0) this.buy({ size: buysize });
    let size = this.position.size;
    if (size === this.p.stake) size = Math.floor(size / 2);
    if (this.macdsig[0] < 0) this.close({ size });
    if (this.smasig[0] < 0) this.close({ size });
  }
}

/**
 * samples/multi-copy's TheStrategy2: the same with other periods and twice the stake.
 */
class MultiCopy2 extends MultiCopy {
  static params = { stake: 200, macd1: 15, macd2: 22, macdsig: 7, sma1: 15, sma2: 50 };
}

const strategies = [MultiCopy, MultiCopy2];

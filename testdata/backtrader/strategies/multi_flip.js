/**
 * A fill of one strategy flips the sign of the position it shares, the twin of gen.py's
 * MULTI_FLIP: FlipLong buys 10 on the 2nd bar of a cycle and sells 25 on its middle one
 * while FlipHold holds 5 (its trade goes from +10 to -5 on the fill's closing part,
 * keeping its entry price, then to -15 on the opening part), then buys 15, which closes
 * its trade.
 * every: bars of one cycle
 */
class FlipLong extends Strategy {
  static params = { every: 40 };

  next() {
    const k = this.data.length % this.p.every;
    if (k === 2) this.buy({ size: 10 });
    else if (k === Math.floor(this.p.every / 2)) this.sell({ size: 25 });
    else if (k === Math.floor((3 * this.p.every) / 4)) this.buy({ size: 15 });
  }
}

/**
 * Holds 5 from the 5th to the 35th bar of every cycle, beside FlipLong.
 * every: bars of one cycle
 */
class FlipHold extends Strategy {
  static params = { every: 40 };

  next() {
    const k = this.data.length % this.p.every;
    if (k === 5) this.buy({ size: 5 });
    else if (k === this.p.every - 5) this.sell({ size: 5 });
  }
}

const strategies = [FlipLong, FlipHold];

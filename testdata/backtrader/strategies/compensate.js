/**
 * backtrader's samples/future-spot without its random parts, the twin of gen.py's
 * Compensate: the second feed compensates the first (`data1.compensate(data0)`), so
 * orders on it, priced and filled on its bars, move the first feed's position and trades.
 * Flat, it buys `size` of the first feed on even bars and sells `size`/2 of the second (a
 * short of the first) on odd ones; `hold` bars later it closes a long by selling the
 * second feed and a short by buying the first.
 * hold: bars a position is held
 * size: units bought (half of it sold short)
 */
class Compensate extends Strategy {
  static params = { hold: 10, size: 10 };

  init() {
    this.datas[1].compensate(this.datas[0]);
    this.entered = 0;
  }

  next() {
    const n = this.data.length;
    const pos = this.getPosition(this.datas[0]).size;
    if (!pos) {
      if (n - this.entered > this.p.hold) {
        if (n % 2 === 0) this.buy({ data: this.datas[0], size: this.p.size });
        else this.sell({ data: this.datas[1], size: Math.floor(this.p.size / 2) });
        this.entered = n;
      }
    } else if (n - this.entered >= this.p.hold) {
      if (pos > 0) this.sell({ data: this.datas[1], size: pos });
      else this.buy({ data: this.datas[0], size: -pos });
    }
  }
}

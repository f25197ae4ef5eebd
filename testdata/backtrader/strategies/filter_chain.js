/**
 * The twin of testdata/backtrader/gen.py's FilterChain: two data filters written in the
 * strategy file, in turn. InsideBarMerge (a class) merges a bar inside the one before it
 * into that one (its close, both volumes) and takes it out of the stream; pullClose (a
 * function, backtrader's addfilter with a callable) pulls each close a quarter of the way
 * to the middle of its bar. Then an SMA crossover.
 * fast: fast SMA period
 * slow: slow SMA period
 * size: shares bought
 */
class InsideBarMerge {
  call(data) {
    if (data.length < 2 || data.high[0] > data.high[-1] || data.low[0] < data.low[-1]) return false;
    const bar = data.bar(-1);
    bar.close = data.close[0];
    bar.volume = data.volume[-1] + data.volume[0];
    data.updatebar(bar, -1);
    data.backwards();
    return true; // the bar left the stream
  }
}

function pullClose(data, p) {
  const w = p.weight ?? 0.5;
  data.close[0] = (1 - w) * data.close[0] + w * (data.high[0] + data.low[0]) / 2;
  return false;
}

class FilterChain extends Strategy {
  static params = { fast: 5, slow: 20, size: 10 };
  static filters = [{ filter: InsideBarMerge }, { filter: pullClose, weight: 0.25 }];

  init() {
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow));
  }

  next() {
    if (this.position.size === 0 && this.cross[0] > 0) {
      this.buy({ size: this.p.size });
    } else if (this.position.size !== 0 && this.cross[0] < 0) {
      this.close();
    }
  }
}

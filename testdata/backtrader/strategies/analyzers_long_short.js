/**
 * Always in the market once started, the twin of testdata/backtrader/gen.py's
 * AnalyzersLongShort: long `size` shares after a cross up of the moving averages, short
 * after a cross down (orderTargetSize), so that the PyFolio report's position values
 * cover shorts. Its fixtures pin the returns family of analyzers and the PyFolio report.
 * fast: fast moving-average period
 * slow: slow moving-average period
 * size: shares held long or short
 */
class AnalyzersLongShort extends Strategy {
  static params = { fast: 10, slow: 30, size: 10 };

  init() {
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow));
  }

  next() {
    if (this.cross[0] > 0) this.orderTargetSize({ target: this.p.size });
    else if (this.cross[0] < 0) this.orderTargetSize({ target: -this.p.size });
  }
}

/**
 * The crossover of chain_futures on the contracts rolled over (backtrader's
 * cerebro.rolloverdata) with a checkdate only, the twin of gen.py's RollDateCross: the feed
 * moves to the next contract on the first bar of the active one's expiry week.
 * fast: period of the fast moving average
 * slow: period of the slow moving average
 * size: contracts per trade
 */
class RollDateCross extends Strategy {
  static params = { fast: 5, slow: 15, size: 2 };
  static rollover = { name: 'ES', checkdate: expiryWeek };

  init() {
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow));
  }

  // logs "roll <date> <contract>" where the contract the bars come from changes
  roll() {
    if (this.data.contract !== this.contract) {
      this.contract = this.data.contract;
      this.log(`roll ${this.data.date(0)} ${this.contract}`);
    }
  }

  prenext() {
    this.roll();
  }

  next() {
    this.roll();
    if (this.position.size === 0 && this.cross[0] > 0) this.buy({ size: this.p.size });
    else if (this.position.size > 0 && this.cross[0] < 0) this.close();
  }
}

// samples/rollover's checkdate: true in the ISO week of the third Friday of the active
// contract's month (its symbol ends in a month code H, M, U or Z and a year digit).
function expiryWeek(dt, d) {
  const month = { H: 3, M: 6, U: 9, Z: 12 }[d.symbol.at(-2)];
  let year = Math.floor(dt.getFullYear() / 10) * 10 + Number(d.symbol.at(-1));
  if (year < dt.getFullYear()) year += 10;
  const monday0 = (new Date(year, month - 1, 1).getDay() + 6) % 7; // Python's calendar.weekday
  const expiry = new Date(year, month - 1, 21 - (monday0 + 2) % 7);
  const [y0, w0] = isoWeek(dt), [y1, w1] = isoWeek(expiry);
  return y0 === y1 && w0 === w1;
}

function isoWeek(d) {
  const t = new Date(Date.UTC(d.getFullYear(), d.getMonth(), d.getDate()));
  t.setUTCDate(t.getUTCDate() + 4 - (t.getUTCDay() || 7));
  const y = t.getUTCFullYear();
  return [y, Math.ceil(((t - Date.UTC(y, 0, 1)) / 86400000 + 1) / 7)];
}

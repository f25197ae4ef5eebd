/**
 * The crossover of chain_futures on the contracts rolled over with a checkdate and a
 * checkcondition, the twin of gen.py's RollVolumeCross: in the active contract's expiry
 * week, once the next contract's volume is higher (samples/rollover's checkvolume).
 * fast: period of the fast moving average
 * slow: period of the slow moving average
 * size: contracts per trade
 */
class RollVolumeCross extends Strategy {
  static params = { fast: 5, slow: 15, size: 2 };
  static rollover = {
    name: 'ES',
    checkdate: expiryWeek,
    checkcondition: (d0, d1) => d0.volume[0] < d1.volume[0],
  };

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

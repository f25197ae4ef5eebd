import { describe, expect, it } from 'vitest';
import { barClock, sharedClock, fmtAgo, fmtBarTime, fmtDate, fmtDuration, fmtMoney, fmtNumber, fmtPct, fmtPctFraction, fmtSigned, fmtStat, fmtSummary, signedStat, STAT_DEFS, summaryCards, toDate } from './format';

describe('fmtBarTime', () => {
  it('shows a daily bar as its date and an intraday bar with its UTC time', () => {
    expect(fmtBarTime('2024-03-01T00:00:00Z')).toBe('2024-03-01');
    expect(fmtBarTime('2024-10-01T14:35:00Z')).toBe('2024-10-01 14:35');
    expect(fmtBarTime('not a time')).toBe('not a time');
  });
  it("shows an intraday run's times in its data's zone, across a change to summer time", () => {
    const ny = barClock({ timezone: 'America/New_York', timeframe: '5m' });
    expect(fmtBarTime('2024-03-08T14:30:00Z', ny)).toBe('2024-03-08 09:30');
    expect(fmtBarTime('2024-03-11T13:30:00Z', ny)).toBe('2024-03-11 09:30');
    // an instant at midnight UTC, written as a date by the routes, is still an instant
    expect(fmtBarTime('2024-03-12', ny)).toBe('2024-03-11 20:00');
    const kolkata = barClock({ timezone: 'Asia/Kolkata', timeframe: '1h' });
    expect(fmtBarTime('2024-01-02T03:45:00Z', kolkata)).toBe('2024-01-02 09:15');
  });
  it("shows a daily run's bars as their dates whatever the zone", () => {
    const daily = barClock({ timezone: 'Australia/Sydney', timeframe: '1d' });
    expect(fmtBarTime('2024-06-04T00:00:00Z', daily)).toBe('2024-06-04');
    expect(fmtBarTime('2024-06-04', daily)).toBe('2024-06-04');
    expect(barClock(null)).toEqual({ tz: 'UTC', intraday: false });
  });
  it('gives compared runs a clock only when all are intraday in one zone', () => {
    const ny5 = { timezone: 'America/New_York', timeframe: '5m' };
    expect(sharedClock([ny5, { timezone: 'America/New_York', timeframe: '1h' }])).toEqual({ tz: 'America/New_York', intraday: true });
    expect(sharedClock([ny5, { timezone: 'Europe/London', timeframe: '5m' }])).toBeUndefined();
    expect(sharedClock([ny5, { timezone: 'America/New_York', timeframe: '1d' }])).toBeUndefined();
  });
});

describe('numbers', () => {
  it.each([
    [1234.5, '1,234.50'],
    [-12.345, '−12.35'],
    [0, '0.00'],
    [null, '—'],
    [NaN, '—'],
    [Infinity, '—'],
  ])('fmtMoney(%s) = %s', (v, want) => expect(fmtMoney(v)).toBe(want));

  it('percent of a fraction and of a percent', () => {
    expect(fmtPctFraction(0.12345)).toBe('12.35%');
    expect(fmtPctFraction(-0.0072)).toBe('−0.72%');
    expect(fmtPctFraction(-0.3026)).toBe('−30.26%');
    expect(fmtPctFraction(-0.00001)).toBe('0.00%');
    expect(fmtPct(12345.678)).toBe('12,345.68%');
    expect(fmtNumber(-1480.956)).toBe('−1,480.96');
    expect(fmtSigned(1.25, 1)).toBe('+1.3');
    expect(fmtNumber(12.25, 1)).toBe('12.3'); // half away from zero, as the Go tests write it
    expect(fmtNumber(-0.125)).toBe('−0.13');
    expect(fmtSigned(-0.04, 1)).toBe('0.0');
    expect(fmtPct(36.1403)).toBe('36.14%');
    expect(fmtPct(undefined)).toBe('—');
  });
});

describe('the statistics display rules of the spec', () => {
  const def = (k: string) => STAT_DEFS.find((d) => d.key === k)!;
  it.each([
    ['total_return', 0.1234, '12.34%'],
    ['cagr', -0.0072, '−0.72%'],
    ['annual_volatility', 0.2, '20.00%'],
    ['sharpe_ratio', 1.23456, '1.23'],
    ['sqn', -0.8, '−0.80'],
    ['r_squared', 0.734, '0.73'],
    ['max_drawdown', 4.2263, '4.23%'],
    ['max_drawdown_duration', 126, '126 days'],
    ['avg_trade_duration', 21.24, '21.2 days'],
    ['win_rate', 36.1403, '36.14%'],
    ['total_trades', 83, '83'],
    ['best_month', 0.0076, '0.76%'],
    ['win_year_pct', 40, '40.00%'],
    ['sortino_ratio', 1.8472, '1.85'],
    ['value_at_risk', -0.02314, '−2.31%'],
    ['kelly_criterion', 0.1009, '10.09%'],
    ['probabilistic_sharpe_ratio', 0.688, '68.80%'],
    ['max_consecutive_losses', 7, '7'],
    ['kurtosis', -0.31, '−0.31'],
  ])('%s %s → %s', (key, v, want) => expect(fmtStat(def(key).format, v)).toBe(want));

  it('covers at least 20 metrics in the groups (their explanations come from the API)', () => {
    expect(STAT_DEFS.length).toBeGreaterThanOrEqual(20);
    expect(new Set(STAT_DEFS.map((d) => d.group))).toEqual(new Set(['Curve', 'Trade', 'Time', 'Risk', 'Benchmark']));
    expect(STAT_DEFS.filter((d) => d.group === 'Risk')).toHaveLength(14);
  });

  it('shows null as a dash', () => expect(fmtStat('ratio', null)).toBe('—'));

  it('colours gains and losses, not risk measures, probabilities or stakes', () => {
    expect(['total_return', 'avg_win', 'best_month', 'alpha'].every(signedStat)).toBe(true);
    expect(['annual_volatility', 'value_at_risk', 'expected_shortfall', 'probabilistic_sharpe_ratio', 'kelly_criterion', 'sortino_ratio', 'max_consecutive_losses'].some(signedStat)).toBe(false);
  });
});

describe('summary cards', () => {
  it('formats the 12 summary keys and tones signed returns', () => {
    const cards = summaryCards({ initial_cash: 10000, final_value: 9824.85, total_return: -0.0175, annual_return: 0.01, sharpe_ratio: null, max_drawdown: 412.56, max_drawdown_pct: 4.03, total_trades: 83, win_rate: 36.14, profit_factor: 0.79, avg_win: 21.4, avg_loss: -15.42 });
    expect(cards).toHaveLength(12);
    const by = Object.fromEntries(cards.map((c) => [c.key, c]));
    expect(by.total_return.display).toBe('−1.75%');
    expect(by.total_return.tone).toBe('neg');
    expect(by.annual_return.tone).toBe('pos');
    expect(by.sharpe_ratio.display).toBe('—');
    expect(by.final_value.display).toBe('9,824.85');
    expect(by.avg_loss.display).toBe('−15.42');
  });
});

describe('dates', () => {
  it('reads ISO strings and epoch seconds', () => {
    expect(toDate(1700000000)!.toISOString()).toBe('2023-11-14T22:13:20.000Z');
    expect(toDate('2024-01-31T10:00:00Z')!.getUTCHours()).toBe(10);
    expect(toDate('nope')).toBeNull();
    expect(fmtDate('2024-01-31T10:00:00Z')).toBe('2024-01-31');
  });
  it('relative time and durations', () => {
    const now = Date.parse('2024-01-01T12:00:00Z');
    expect(fmtAgo('2024-01-01T11:59:58Z', now)).toBe('just now');
    expect(fmtAgo('2024-01-01T11:57:00Z', now)).toBe('3 min ago');
    expect(fmtAgo('2023-12-30T12:00:00Z', now)).toBe('2 d ago');
    expect(fmtDuration('2024-01-01T00:00:00Z', '2024-01-01T00:00:00.250Z')).toBe('250 ms');
    expect(fmtDuration('2024-01-01T00:00:00Z', '2024-01-01T00:00:02.5Z')).toBe('2.5 s');
  });
});

describe('fmtSummary', () => {
  it.each([
    ['total_return', -0.0088, '−0.88%'], // a fraction, in percent
    ['annual_return', 0.0123, '1.23%'],
    ['max_drawdown_pct', 3.12, '3.12%'], // already in percent
    ['win_rate', 40, '40.00%'],
    ['final_value', 9911.72, '9,911.72'],
    ['total_trades', -8, '−8'],
    ['sqn', -0.4624, '−0.4624'], // not a summary card: as a chart value
  ])('writes %s %s as %s', (key, v, want) => {
    expect(fmtSummary(key, v)).toBe(want);
  });
});

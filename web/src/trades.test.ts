import { describe, expect, it } from 'vitest';
import type { RoundTrip } from './api';
import { analyseTrades, candlesOf, chartFeeds, excursions, tradeReturn } from './trades';

const trip = (o: Partial<RoundTrip>): RoundTrip => ({ seq: 1, tradeid: 0, symbol: 'X', is_open: false, entry_date: '2024-01-02', exit_date: '2024-01-04', size: 10, entry_price: 100, exit_price: 110, bars_held: 2, pnl_gross: 100, pnl_net: 98, commission: 2, ...o });

describe('round trips', () => {
  it('returns net P&L over the entry value, long or short', () => {
    expect(tradeReturn(trip({}))).toBeCloseTo(0.098);
    expect(tradeReturn(trip({ size: -10, pnl_net: -50 }))).toBeCloseTo(-0.05);
    expect(tradeReturn(trip({ entry_price: 0 }))).toBeNull();
  });
  it('measures excursions from the lows and highs between entry and exit', () => {
    const rows = [
      ['2024-01-01', 0, 0, 50, 200], // before the entry: ignored
      ['2024-01-02', 100, 101, 95, 104],
      ['2024-01-03', 101, 108, 99, 112],
      ['2024-01-04', 108, 110, 107, 111],
      ['2024-01-05', 0, 0, 1, 500], // after the exit: ignored
    ];
    const candles = candlesOf(rows);
    const long = excursions(trip({}), candles)!;
    expect(long.mae).toBeCloseTo(-0.05);
    expect(long.mfe).toBeCloseTo(0.12);
    const short = excursions(trip({ size: -10 }), candles)!;
    expect(short.mae).toBeCloseTo(-0.12);
    expect(short.mfe).toBeCloseTo(0.05);
    expect(excursions(trip({ entry_date: '2023-12-01' }), candles)).toBeNull();
  });
  it('analyses closed trades: expectancy, win rate, profit factor, long against short', () => {
    const a = analyseTrades([trip({ pnl_net: 100 }), trip({ pnl_net: -50 }), trip({ size: -5, pnl_net: 30, bars_held: 6 }), trip({ is_open: true, pnl_net: 999 })]);
    expect(a.open).toBe(1);
    expect(a.all.trades).toBe(3);
    expect(a.all.won).toBe(2);
    expect(a.all.expectancy).toBeCloseTo(80 / 3);
    expect(a.all.profitFactor).toBeCloseTo(130 / 50);
    expect(a.all.avgBars).toBeCloseTo(10 / 3);
    expect(a.long.trades).toBe(2);
    expect(a.short.trades).toBe(1);
    expect(a.short.profitFactor).toBeNull(); // no losses
    expect(a.long.avgLoss).toBe(-50);
  });
});

describe('chart feeds', () => {
  const span = (symbol: string) => ({ symbol, first: '2001-01-02T00:00:00Z', last: '2001-03-01T00:00:00Z', bars: 40 });
  it("are the task's symbols when the strategy joined none", () => {
    expect(chartFeeds(['A', 'B'], [{ symbol: 'A' }, { symbol: 'B' }])).toEqual(['A', 'B']);
    expect(chartFeeds(['A'], [])).toEqual(['A']);
  });
  it('put a joined feed in place of its contracts', () => {
    const rows = [{ symbol: 'ES', joined: [span('ESH1'), span('ESM1')] }, { symbol: 'NQ' }];
    expect(chartFeeds(['ESH1', 'ESM1', 'NQ'], rows)).toEqual(['ES', 'NQ']);
    expect(chartFeeds(['ESH1', 'ESM1'], [{ symbol: 'ES', joined: [span('ESH1')] }, { symbol: 'ES' }])).toEqual(['ES']);
  });
});

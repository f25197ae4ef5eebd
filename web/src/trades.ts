// Round trips as the results page shows them: each trade's return and excursions, and the
// analysis of all of them (expectancy, holding time, long against short). Pure functions.

import type { RoundTrip, SymbolResult } from './api';

/**
 * The feeds a run's price charts show, as the chart route takes them: the task's symbols, or,
 * when its strategy joined feeds (static chain or rollover), the feeds it traded, each joined
 * one in place of its contracts (the symbols route's rows; a resampled feed repeats a name).
 */
export function chartFeeds(taskSymbols: string[], rows: Pick<SymbolResult, 'symbol' | 'joined'>[]): string[] {
  if (!rows.some((r) => r.joined?.length)) return taskSymbols;
  return [...new Set(rows.map((r) => r.symbol))];
}

/** Net P&L as a fraction of the capital the entry took (size × entry price). */
export function tradeReturn(t: RoundTrip): number | null {
  const cost = Math.abs(t.size) * t.entry_price;
  return cost > 0 ? t.pnl_net / cost : null;
}

export const isLong = (t: RoundTrip) => t.size >= 0;

/** The price chart's bars: lows and highs in order, and each date's place. */
export interface Candles {
  at: Map<string, number>;
  low: number[];
  high: number[];
}

/** Candles from the candlestick chart's rows, [date, open, close, low, high, ...]. */
export function candlesOf(rows: unknown[]): Candles {
  const c: Candles = { at: new Map(), low: [], high: [] };
  for (const r of rows) {
    if (!Array.isArray(r) || r.length < 5) continue;
    c.at.set(String(r[0]), c.low.length);
    c.low.push(Number(r[3]));
    c.high.push(Number(r[4]));
  }
  return c;
}

/**
 * Maximum adverse and favourable excursion of a trade, as fractions of its entry price: how far
 * the price went against it (MAE, ≤ 0) and for it (MFE, ≥ 0) between its entry and exit bars,
 * from the bars' lows and highs. Null when the bars are not at hand.
 */
export function excursions(t: RoundTrip, candles: Candles): { mae: number; mfe: number } | null {
  const from = candles.at.get(t.entry_date);
  const to = t.exit_date ? candles.at.get(t.exit_date) : candles.low.length - 1; // open: to the last bar
  if (from === undefined || to === undefined || !(t.entry_price > 0)) return null;
  let low = Infinity;
  let high = -Infinity;
  for (let i = from; i <= to; i++) {
    low = Math.min(low, candles.low[i]);
    high = Math.max(high, candles.high[i]);
  }
  if (!Number.isFinite(low) || !Number.isFinite(high)) return null;
  const up = high / t.entry_price - 1;
  const down = low / t.entry_price - 1;
  return isLong(t) ? { mae: Math.min(0, down), mfe: Math.max(0, up) } : { mae: Math.min(0, -up), mfe: Math.max(0, -down) };
}

export interface SideStats {
  trades: number;
  won: number;
  winRate: number | null;
  netPnL: number;
  expectancy: number | null; // mean net P&L per trade
  avgWin: number | null;
  avgLoss: number | null;
  profitFactor: number | null; // gross wins / gross losses
  avgBars: number | null;
  avgReturn: number | null;
}

export interface TradeAnalysis {
  all: SideStats;
  long: SideStats;
  short: SideStats;
  open: number;
}

function sideStats(ts: RoundTrip[]): SideStats {
  const wins = ts.filter((t) => t.pnl_net > 0);
  const losses = ts.filter((t) => t.pnl_net <= 0);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const mean = (xs: number[]) => (xs.length ? sum(xs) / xs.length : null);
  const grossWin = sum(wins.map((t) => t.pnl_net));
  const grossLoss = -sum(losses.map((t) => t.pnl_net));
  const rets = ts.map(tradeReturn).filter((r): r is number => r !== null);
  return {
    trades: ts.length,
    won: wins.length,
    winRate: ts.length ? wins.length / ts.length : null,
    netPnL: sum(ts.map((t) => t.pnl_net)),
    expectancy: mean(ts.map((t) => t.pnl_net)),
    avgWin: mean(wins.map((t) => t.pnl_net)),
    avgLoss: mean(losses.map((t) => t.pnl_net)),
    profitFactor: grossLoss > 0 ? grossWin / grossLoss : null,
    avgBars: mean(ts.map((t) => t.bars_held)),
    avgReturn: mean(rets),
  };
}

/** The analysis of the closed round trips (open ones are counted apart). */
export function analyseTrades(trips: RoundTrip[]): TradeAnalysis {
  const closed = trips.filter((t) => !t.is_open);
  return { all: sideStats(closed), long: sideStats(closed.filter(isLong)), short: sideStats(closed.filter((t) => !isLong(t))), open: trips.length - closed.length };
}

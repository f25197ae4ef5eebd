// Results: summary, statistics, trade pages, charts, exports and comparisons.
import { get, qs, request } from './client';
import type { Analyzers, ChartConfig, Comparison, DrawdownPeriod, Fill, Finding, MonteCarlo, MonteCarloProgress, RoundTrip, RunDiff, StrategyResult, Summary, SymbolResult } from './types';

const one = (id: string) => `/api/results/${encodeURIComponent(id)}`;

export const getSummary = (id: string) => get<Summary & Record<string, unknown>>(`${one(id)}/summary`);
export const getStatistics = (id: string) => get<unknown>(`${one(id)}/statistics`);
/** What the result should be read with: the run's findings, then its version's look-ahead verdict. */
export const getFindings = (id: string) => get<Finding[]>(`${one(id)}/findings`);
export const getFills = (id: string, skip: number, limit: number) => get<{ total: number; trades: Fill[] }>(`${one(id)}/trades${qs({ skip, limit, kind: 'executions' })}`);
export const getRoundTrips = (id: string, skip: number, limit: number) => get<{ total: number; trades: RoundTrip[] }>(`${one(id)}/trades${qs({ skip, limit, kind: 'round_trips' })}`);
/** Every round trip of a result (pages of 1,000), for the trade analysis. */
export async function allRoundTrips(id: string, max = 20_000): Promise<RoundTrip[]> {
  const out: RoundTrip[] = [];
  for (;;) {
    const page = await getRoundTrips(id, out.length, 1000);
    out.push(...page.trades);
    if (!page.trades.length || out.length >= page.total || out.length >= max) return out;
  }
}
/**
 * symbol: the feed of a several-symbol run the candlestick and trades charts show (default the
 * first). from and to narrow the line charts (equity, drawdown, underwater), which the server
 * samples when longer than its maximum (the chart's `sampling` says so). ma: the candlestick
 * chart's moving-average periods (default 5, 10, 20).
 */
export const getChart = (id: string, chartType: string, symbol?: string, range?: { from: string; to: string }, ma?: number[]) =>
  get<ChartConfig>(`${one(id)}/chart${qs({ chart_type: chartType, symbol, from: range?.from, to: range?.to, ma: ma?.length ? ma.join(',') : undefined })}`);
/** The per-symbol breakdown of a result, one row per feed in order. */
export const getSymbols = (id: string) => get<SymbolResult[]>(`${one(id)}/symbols`);
export const getStrategies = (id: string) => get<StrategyResult[]>(`${one(id)}/strategies`);
/** backtrader's analyzers of a result: Returns, VWR, Calmar, SharpeRatio_A, TimeReturn, PyFolio, … */
export const getAnalyzers = (id: string) => get<Analyzers>(`${one(id)}/analyzers`);
/** The deepest drawdown periods of a result, deepest first. */
export const getDrawdowns = (id: string, limit = 10) => get<DrawdownPeriod[]>(`${one(id)}/drawdowns${qs({ limit })}`);
/** A Monte Carlo simulation of a result: its trades shuffled or bootstrapped, or its returns per bar block-bootstrapped. */
export const getMonteCarlo = (id: string, o: { method: string; runs?: number; seed?: number; block?: number; loss?: number[] }) =>
  get<MonteCarlo>(`${one(id)}/montecarlo${qs({ method: o.method, runs: o.runs, seed: o.seed, block: o.block, loss: o.loss?.length ? o.loss.join(',') : undefined })}`);
/**
 * Monte Carlo on price paths: the strategy rerun on block-bootstrapped price paths. Until the
 * reruns completed the service answers 202 with their progress (the first request starts
 * them); then the answer, stored, for every request with the same runs, seed and block.
 */
export const getPricePaths = (id: string, o: { runs?: number; seed?: number; block?: number; loss?: number[] }) =>
  get<MonteCarlo | MonteCarloProgress>(
    `${one(id)}/montecarlo${qs({ method: 'price_paths', runs: o.runs, seed: o.seed, block: o.block, loss: o.loss?.length ? o.loss.join(',') : undefined })}`,
  );
/** Whether a price_paths answer is still the reruns' progress (202). */
export const isProgress = (a: MonteCarlo | MonteCarloProgress): a is MonteCarloProgress => 'status' in a && 'done' in a;
/** The export in format (json, csv or html): parsed JSON, or the text of the others. */
export const getExport = (id: string, format: string) => request<unknown>('GET', `${one(id)}/export${qs({ format })}`);
/** The trade-level diff of the result of a against that of b. */
export const diff = (a: string, b: string) => get<RunDiff>(`${one(a)}/diff${qs({ against: b })}`);
export const compare = (ids: string[]) => get<Comparison>(`/api/results/compare${qs({ task_ids: ids.join(',') })}`);
/** The comparison as CSV text: the metric table and the aligned curves, as the server writes it. */
export const compareCSV = (ids: string[]) => get<string>(`/api/results/compare${qs({ task_ids: ids.join(','), format: 'csv' })}`);

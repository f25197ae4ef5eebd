// Market data: sources, symbols, bars and imports.
import { get, listOf, qs, request } from './client';
import type { Bar, BarVersion, ChartConfig, DataSource, SymbolInfo } from './types';

const symbolPath = (source: string, symbol: string) => `/api/data/${encodeURIComponent(source)}/${encodeURIComponent(symbol)}`;

export const listSources = async (): Promise<DataSource[]> => listOf<DataSource>(await get('/api/data/sources'), 'sources');
export const listSymbols = async (source: string, search: string, limit: number): Promise<SymbolInfo[]> =>
  listOf<SymbolInfo>(await get(`/api/data/${encodeURIComponent(source)}/symbols${qs({ search, limit })}`), 'symbols');
export const getBars = (source: string, symbol: string, q: { start_date?: string; end_date?: string; timeframe?: string }) =>
  get<{ bars: Bar[]; timeframe?: string }>(`${symbolPath(source, symbol)}${qs(q)}`);
/** The symbol's immutable bar versions, newest first, with what each changed. */
export const getVersions = (source: string, symbol: string) => get<BarVersion[]>(`${symbolPath(source, symbol)}/versions`);
/** The bars of getBars as a candlestick chart (price, moving averages, volume). */
export const getBarsChart = (source: string, symbol: string, q: { start_date?: string; end_date?: string; timeframe?: string }) =>
  get<ChartConfig>(`${symbolPath(source, symbol)}/chart${qs(q)}`);
/** Imports CSV text as the symbol's bars of timeframe, times without an offset read in timezone (empty: the symbol's). */
export const importBars = (source: string, symbol: string, timeframe: string, csv: string, timezone = '') =>
  request<Record<string, unknown>>('POST', `${symbolPath(source, symbol)}/bars${qs({ timeframe, timezone: timezone || undefined })}`, csv, { contentType: 'text/csv' });

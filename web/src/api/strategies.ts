// Strategies: upload, replace, delete, versions, parameters and saved configurations.
import { del, get, listOf, post, put } from './client';
import type { BacktestRequest, LookaheadCheck, ParamInfo, Strategy, StrategyUpload, StrategyVersion, Template } from './types';

const one = (id: string) => `/api/strategies/${encodeURIComponent(id)}`;

export const listStrategies = async (): Promise<Strategy[]> => listOf<Strategy>(await get('/api/strategies'), 'strategies');
export const getStrategy = (id: string) => get<Strategy>(one(id));
export const createStrategy = (up: StrategyUpload) => post<Strategy>('/api/strategies', up);
export const replaceStrategy = (id: string, up: StrategyUpload) => put<Strategy>(one(id), up);
export const deleteStrategy = (id: string) => del(one(id));
export const listTemplates = async (): Promise<Template[]> => listOf<Template>(await get('/api/strategies/templates'), 'templates');
export const listParameters = async (id: string): Promise<ParamInfo[]> => listOf<ParamInfo>(await get(`${one(id)}/parameters`), 'parameters', 'params');
export const getConfig = (id: string) => get<Record<string, unknown>>(`${one(id)}/config`);
export const saveConfig = (id: string, values: Record<string, unknown>) => post<unknown>(`${one(id)}/config`, values);
export const listVersions = async (id: string): Promise<StrategyVersion[]> => listOf<StrategyVersion>(await get(`${one(id)}/versions`), 'versions');
export const getVersion = (id: string, n: number) => get<StrategyVersion>(`${one(id)}/versions/${n}`);
// The exact look-ahead check of a version on a run's data (docs/lookahead.md).
export const checkLookahead = (id: string, n: number, data: Partial<BacktestRequest>) => post<LookaheadCheck>(`${one(id)}/versions/${n}/lookahead`, data);

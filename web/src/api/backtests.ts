// Backtest tasks: submit, list, read, cancel, retry and their logs.
import { del, get, listOf, post, qs } from './client';
import type { BacktestRequest, LogLine, Task } from './types';

const one = (id: string) => `/api/backtests/${encodeURIComponent(id)}`;

export const listTasks = async (): Promise<Task[]> => listOf<Task>(await get('/api/backtests'), 'tasks');
export const getTask = (id: string) => get<Task>(one(id));
export const createTask = (req: BacktestRequest) => post<Task>('/api/backtests', req);
export const cancelTask = (id: string) => del(one(id));
export const retryTask = (id: string) => post<Task>(`${one(id)}/retry`);
export const taskLogs = async (id: string, limit: number): Promise<LogLine[]> => listOf<LogLine>(await get(`${one(id)}/logs${qs({ limit })}`), 'logs');
/** Every line of a task's log, in pages of the route's largest size. */
export async function allTaskLogs(id: string): Promise<LogLine[]> {
  const out: LogLine[] = [];
  for (;;) {
    const page = listOf<LogLine>(await get(`${one(id)}/logs${qs({ skip: out.length, limit: 10000 })}`), 'logs');
    out.push(...page);
    if (page.length < 10000) return out;
  }
}

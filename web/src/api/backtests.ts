// Backtest tasks: submit, list, read, cancel, retry, delete and their logs.
import { del, get, listOf, post, qs, request } from './client';
import type { BacktestRequest, LogLine, Task } from './types';

const one = (id: string) => `/api/backtests/${encodeURIComponent(id)}`;

export const listTasks = async (): Promise<Task[]> => listOf<Task>(await get('/api/backtests'), 'tasks');
/** What the runs list asks for: filters, the order and a page. */
export interface TaskQuery {
  status?: string;
  strategy_id?: string;
  symbol?: string;
  sort?: 'created_at' | 'total_return' | 'max_drawdown' | 'sharpe_ratio' | 'total_trades';
  order?: 'asc' | 'desc';
  skip?: number;
  limit?: number;
}
/** A page of tasks and how many match the filters in all (the X-Total-Count header). */
export async function listTaskPage(q: TaskQuery): Promise<{ tasks: Task[]; total: number }> {
  let total = NaN;
  const body = await request('GET', `/api/backtests${qs({ ...q, count: true })}`, undefined, { headers: (h) => (total = Number(h.get('X-Total-Count'))) });
  const tasks = listOf<Task>(body, 'tasks');
  return { tasks, total: Number.isFinite(total) ? total : tasks.length };
}
export const deleteTask = (id: string) => post(`${one(id)}/delete`);
export const getTask = (id: string) => get<Task>(one(id));
export const createTask = (req: BacktestRequest) => post<Task>('/api/backtests', req);
export const cancelTask = (id: string) => del(one(id));
export const retryTask = (id: string) => post<Task>(`${one(id)}/retry`);
/** Pins (retention keeps the run whatever its age) or unpins a task. */
export const pinTask = (id: string, pinned: boolean) => (pinned ? post(`${one(id)}/pin`) : del(`${one(id)}/pin`));
/** Starts an exact reproduction of a completed run; the new task carries the verdict once it completed. */
export const reproduceTask = (id: string) => post<Task>(`${one(id)}/reproduce`);
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

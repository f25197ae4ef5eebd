// Parameter studies: start, list, read, cancel, retry, and their leaderboard, heatmap,
// overfitting statistics and promotion to a backtest.
import { del, get, post, qs } from './client';
import type { ChartConfig, CPCV, Overfitting, Study, StudySurface, StudyBoard, StudyConvergence, StudyRequest, Task, WalkForward } from './types';

const one = (id: string) => `/api/studies/${encodeURIComponent(id)}`;

export const listStudies = () => get<Study[]>('/api/studies');
export const getStudy = (id: string) => get<Study>(one(id));
export const createStudy = (req: StudyRequest) => post<Study>('/api/studies', req);
export const cancelStudy = (id: string) => del<Study>(one(id));
export const retryStudy = (id: string) => post<Study>(`${one(id)}/retry`);
/** Pins (retention keeps the study whatever its age) or unpins a study. */
export const pinStudy = (id: string, pinned: boolean) => (pinned ? post(`${one(id)}/pin`) : del(`${one(id)}/pin`));
/** fold: a walk-forward study's fold (from 1); default the last. */
export const results = (id: string, sort: string, order: 'asc' | 'desc' | '', skip: number, limit: number, fold?: number) =>
  get<StudyBoard>(`${one(id)}/results${qs({ sort: sort || undefined, order: order || undefined, skip, limit, fold })}`);
export const heatmap = (id: string, x: string, y: string, metric: string, agg: string) => get<ChartConfig>(`${one(id)}/heatmap${qs({ x, y, metric, agg })}`);
/** Each finished combination's objective in plan order and the best so far. */
export const convergence = (id: string) => get<StudyConvergence>(`${one(id)}/convergence`);
export const overfitting = (id: string) => get<Overfitting>(`${one(id)}/overfitting`);
/** The objective around the best combination, parameter by parameter, and its plateau score. */
export const surface = (id: string) => get<StudySurface>(`${one(id)}/surface`);
/** Combinatorial purged cross-validation; each parameter left out takes the study's declared validation's. */
export const cpcv = (id: string, groups?: number, testGroups?: number, embargoBars?: number) =>
  get<CPCV>(`${one(id)}/cpcv${qs({ groups, test_groups: testGroups, embargo_bars: embargoBars })}`);
/** The walk-forward analysis: fold table, stitched out-of-sample curve, efficiency. */
export const walkForward = (id: string) => get<WalkForward>(`${one(id)}/walk-forward`);
/** Runs combination idx of the study as an ordinary backtest task. */
export const promote = (id: string, idx: number) => post<Task>(`${one(id)}/promote`, { idx });

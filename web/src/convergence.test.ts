import { describe, expect, it } from 'vitest';
import { bestReachedAt, convergenceOption } from './convergence';

const conv = {
  study_id: 'study_1',
  fold: 1,
  method: 'bayes' as const,
  objective: 'sharpe_ratio',
  direction: 'max' as const,
  trials: [0, 1, 2, 3, 4],
  values: [0.1, null, 0.3, 0.2, 0.3],
  best: [0.1, 0.1, 0.3, 0.3, 0.3],
};

describe('convergence', () => {
  it('finds the trial where the best was reached', () => {
    expect(bestReachedAt(conv)).toBe(3);
    expect(bestReachedAt({ best: [null, null] })).toBe(0);
    expect(bestReachedAt({ best: [] })).toBe(0);
  });
  it('plots each trial and the best so far by trial number', () => {
    const opt = convergenceOption(conv, 'Sharpe') as { series: { name: string; data: number[][]; markPoint?: { data: { coord: number[] }[] } }[]; xAxis: { max: number } };
    const [each, best] = opt.series;
    expect(each.name).toBe('each trial');
    expect(each.data).toEqual([[1, 0.1], [3, 0.3], [4, 0.2], [5, 0.3]]); // the failed trial has no point
    expect(best.data).toEqual([[1, 0.1], [2, 0.1], [3, 0.3], [4, 0.3], [5, 0.3]]);
    expect(best.markPoint?.data[0].coord).toEqual([3, 0.3]);
    expect(opt.xAxis.max).toBe(5);
  });
  it('draws an empty chart before any trial', () => {
    const opt = convergenceOption({ ...conv, trials: [], values: [], best: [] }, 'Sharpe') as { series: { data: unknown[]; markPoint?: unknown }[] };
    expect(opt.series[0].data).toEqual([]);
    expect(opt.series[1].markPoint).toBeUndefined();
  });
});

// The convergence chart of a study: each finished combination's objective in the order it
// was planned (a bayes study's: proposed), and the best so far as a step line, so that one
// sees how many trials the search needed to find its best.

import type { StudyConvergence } from './api';

/** The trial (from 1) at which the best so far last improved, or 0 before any value. */
export function bestReachedAt(c: Pick<StudyConvergence, 'best'>): number {
  const best = c.best ?? [];
  let at = 0;
  for (let i = 0; i < best.length; i++) {
    if (best[i] != null && (i === 0 || best[i] !== best[i - 1])) at = i + 1;
  }
  return at;
}

/** The ECharts option of the convergence chart: trials by number, objective up. */
export function convergenceOption(c: StudyConvergence, label: string): Record<string, unknown> {
  const values = c.values ?? [];
  const best = c.best ?? [];
  const at = bestReachedAt(c);
  return {
    animation: false,
    tooltip: { trigger: 'axis' },
    legend: { data: ['each trial', 'best so far'], bottom: 0 },
    grid: { left: 64, right: 16, top: 24, bottom: 64 },
    xAxis: { type: 'value', name: 'trial', nameLocation: 'middle', nameGap: 26, min: 1, max: Math.max(values.length, 1), minInterval: 1 },
    yAxis: { type: 'value', name: label, scale: true },
    series: [
      {
        name: 'each trial',
        type: 'scatter',
        symbolSize: 5,
        // failed trials (null) have no point
        data: values.flatMap((v, i) => (v == null ? [] : [[i + 1, v]])),
      },
      {
        name: 'best so far',
        type: 'line',
        step: 'end',
        showSymbol: false,
        data: best.flatMap((v, i) => (v == null ? [] : [[i + 1, v]])),
        ...(at ? { markPoint: { symbolSize: 36, data: [{ name: 'best', coord: [at, best[at - 1]], value: `#${at}` }] } } : {}),
      },
    ],
  };
}

// The results page's Monte Carlo panel: the chart options (a fan of the simulated equity paths
// in percentile bands, histograms of the final value and the max drawdown) and the table of
// percentiles, built from GET /api/results/{id}/montecarlo. Pure functions of the answer.

import type { MonteCarlo } from './api';
import { fmtInt, fmtMoney, fmtPct, fmtPctFraction } from './format';
import type { Palette } from './settings';

type Option = Record<string, unknown>;

/** The bands of the fan, outermost first: their percentiles and opacity. */
const BANDS: { name: string; lo: 'p5' | 'p25'; hi: 'p75' | 'p95'; opacity: number }[] = [
  { name: '5–95%', lo: 'p5', hi: 'p95', opacity: 0.18 },
  { name: '25–75%', lo: 'p25', hi: 'p75', opacity: 0.32 },
];

/**
 * The fan chart: the equity at each step in bands between percentiles (5–95% and 25–75%)
 * around the median path, the starting capital as a dashed line. Each band is drawn as a
 * transparent base line at its lower edge and the band's height stacked on it (stacked on
 * every sign, since equity can fall below zero with trades).
 */
export function fanOption(a: MonteCarlo, pal: Palette): Option {
  const f = a.fan;
  const steps = f.steps.map(String);
  const series: Option[] = [];
  for (const b of BANDS) {
    const stack = `band ${b.name}`;
    series.push({ name: `${b.name} base`, type: 'line', data: f[b.lo], stack, stackStrategy: 'all', symbol: 'none', lineStyle: { opacity: 0 }, tooltip: { show: false }, silent: true });
    series.push({
      name: b.name,
      type: 'line',
      data: f[b.hi].map((v, i) => v - f[b.lo][i]),
      stack,
      stackStrategy: 'all',
      symbol: 'none',
      lineStyle: { opacity: 0 },
      itemStyle: { color: pal.up, opacity: b.opacity + 0.2 }, // the legend's mark
      areaStyle: { color: pal.up, opacity: b.opacity },
      silent: true,
    });
  }
  series.push({
    name: 'Median',
    type: 'line',
    data: f.p50,
    symbol: 'none',
    lineStyle: { width: 2, color: pal.up },
    itemStyle: { color: pal.up },
    markLine: { silent: true, symbol: 'none', lineStyle: { type: 'dashed', color: pal.text, opacity: 0.6 }, label: { formatter: 'Start', position: 'insideEndTop' }, data: [{ yAxis: a.initial_cash }] },
  });
  const unit = a.unit === 'bars' ? 'Bar' : 'Trade';
  return {
    title: { text: `Equity over ${fmtInt(a.runs)} ${a.method} runs`, show: false },
    // on the right: the y axis's name stands at the top left
    legend: { data: [...BANDS.map((b) => b.name), 'Median'], top: 0, right: 16 },
    grid: { left: 64, right: 24, top: 36, bottom: 48 },
    tooltip: {
      trigger: 'axis',
      formatter: (ps: { dataIndex: number }[]) => {
        const i = ps[0]?.dataIndex ?? 0;
        return [`${unit} ${fmtInt(f.steps[i])}`, ...(['p95', 'p75', 'p50', 'p25', 'p5'] as const).map((k) => `${k.slice(1)}%: ${fmtMoney(f[k][i])}`)].join('<br>');
      },
    },
    xAxis: { type: 'category', data: steps, name: a.unit === 'bars' ? 'bars' : 'trades', nameLocation: 'middle', nameGap: 28, boundaryGap: false },
    yAxis: { type: 'value', scale: true, name: 'Equity' },
    series,
  };
}

/** A histogram of bins (from, to, count) as bars in colour, labelled with each bin's middle by fmt. */
export function histogramOption(bins: MonteCarlo['final_value_histogram'], title: string, fmt: (v: number) => string, colour: string): Option {
  return {
    title: { text: title, show: false },
    // room above for the axis's name
    grid: { left: 56, right: 16, top: 32, bottom: 56 },
    tooltip: {
      trigger: 'axis',
      formatter: (ps: { dataIndex: number }[]) => {
        const b = bins[ps[0]?.dataIndex ?? 0];
        return b ? `${fmt(b.from)} to ${fmt(b.to)}: ${fmtInt(b.count)} runs` : '';
      },
    },
    // About eight labels whatever the bins: every bin's label overlaps its neighbours' on a phone.
    xAxis: { type: 'category', data: bins.map((b) => fmt((b.from + b.to) / 2)), axisLabel: { rotate: 30, interval: Math.max(0, Math.ceil(bins.length / 8) - 1) } },
    yAxis: { type: 'value', name: 'Runs', minInterval: 1 },
    series: [{ name: 'Runs', type: 'bar', data: bins.map((b) => b.count), barCategoryGap: '5%', itemStyle: { color: colour } }],
  };
}

/** A row of the percentile table: its label, the five percentiles and the result's own figure, written. */
export interface PercentileRow {
  key: string;
  label: string;
  cells: string[]; // p5, p25, p50, p75, p95
  original: string;
}

/** The percentile table: final value, CAGR (where the result spans time), max drawdown and longest drawdown. */
export function percentileRows(a: MonteCarlo): PercentileRow[] {
  const row = (key: string, label: string, p: MonteCarlo['final_value'] | null | undefined, own: number | null | undefined, fmt: (v: unknown) => string): PercentileRow | null =>
    p ? { key, label, cells: [p.p5, p.p25, p.p50, p.p75, p.p95].map(fmt), original: fmt(own) } : null;
  const steps = (v: unknown) => (typeof v === 'number' ? `${fmtInt(Math.round(v))} ${a.unit}` : '—');
  return [
    row('final_value', 'Final value', a.final_value, a.original.final_value, fmtMoney),
    row('cagr', 'CAGR', a.cagr, a.original.cagr, (v) => fmtPctFraction(v)),
    row('max_drawdown_pct', 'Max drawdown', a.max_drawdown_pct, a.original.max_drawdown_pct, (v) => fmtPct(v)),
    row('longest_drawdown', 'Longest drawdown', a.longest_drawdown, a.original.longest_drawdown, steps),
  ].filter((r): r is PercentileRow => r !== null);
}

/** "Lost 50% of the capital: 12.30% of runs" for each loss share. */
export function lossLines(a: MonteCarlo): string[] {
  return a.loss_probability.map((l) => `Fell ${fmtPctFraction(l.loss, 0)} below the starting capital: ${fmtPctFraction(l.probability)} of runs`);
}

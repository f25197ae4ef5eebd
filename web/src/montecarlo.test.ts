import { describe, expect, it } from 'vitest';
import type { MonteCarlo } from './api';
import { fanOption, histogramOption, lossLines, percentileRows } from './montecarlo';
import { palette } from './settings';

const pal = palette();

// A small answer as the server writes it: 200 shuffles of three trades.
const answer: MonteCarlo = {
  method: 'shuffle',
  runs: 200,
  seed: 7,
  steps: 3,
  unit: 'trades',
  initial_cash: 1000,
  original: { final_value: 1100, cagr: 0.05, max_drawdown_pct: 4.5, longest_drawdown: 1 },
  final_value: { p5: 1100, p25: 1100, p50: 1100, p75: 1100, p95: 1100 },
  cagr: { p5: 0.05, p25: 0.05, p50: 0.05, p75: 0.05, p95: 0.05 },
  max_drawdown_pct: { p5: 0, p25: 2.5, p50: 4.5, p75: 9.1, p95: 9.1 },
  longest_drawdown: { p5: 0, p25: 1, p50: 1, p75: 2, p95: 2 },
  loss_probability: [
    { loss: 0.1, probability: 0.005 },
    { loss: 0.5, probability: 0 },
  ],
  fan: { steps: [0, 1, 2, 3], p5: [1000, 950, 980, 1100], p25: [1000, 1000, 1020, 1100], p50: [1000, 1050, 1050, 1100], p75: [1000, 1150, 1080, 1100], p95: [1000, 1150, 1150, 1100] },
  final_value_histogram: [{ from: 1100, to: 1100, count: 200 }],
  max_drawdown_histogram: [
    { from: 0, to: 4.55, count: 120 },
    { from: 4.55, to: 9.1, count: 80 },
  ],
};

describe('the Monte Carlo fan chart', () => {
  const opt = fanOption(answer, pal) as { series: { name: string; data: number[]; stack?: string; stackStrategy?: string; areaStyle?: unknown }[]; xAxis: { data: string[]; name: string } };
  it('stacks each band on a transparent base at its lower percentile', () => {
    const byName = Object.fromEntries(opt.series.map((s) => [s.name, s]));
    expect(byName['5–95% base'].data).toEqual(answer.fan.p5);
    expect(byName['5–95%'].data).toEqual([0, 200, 170, 0]);
    expect(byName['25–75% base'].data).toEqual(answer.fan.p25);
    expect(byName['25–75%'].data).toEqual([0, 150, 60, 0]);
    expect(byName['5–95%'].stack).toBe(byName['5–95% base'].stack);
    expect(byName['5–95%'].stack).not.toBe(byName['25–75%'].stack);
    // equity can go below zero: stacking must not split by sign
    expect(opt.series.filter((s) => s.stack).every((s) => s.stackStrategy === 'all')).toBe(true);
    expect(byName['5–95%'].areaStyle).toBeTruthy();
  });
  it('draws the median over the steps', () => {
    expect(opt.series.find((s) => s.name === 'Median')!.data).toEqual(answer.fan.p50);
    expect(opt.xAxis.data).toEqual(['0', '1', '2', '3']);
    expect(opt.xAxis.name).toBe('trades');
  });
});

describe('the Monte Carlo histograms', () => {
  it('has a bar per bin, labelled by its middle', () => {
    const opt = histogramOption(answer.max_drawdown_histogram, 'Max drawdown', (v) => `${v.toFixed(1)}%`, pal.down) as { xAxis: { data: string[] }; series: { data: number[] }[] };
    expect(opt.xAxis.data).toEqual(['2.3%', '6.8%']);
    expect(opt.series[0].data).toEqual([120, 80]);
  });
});

describe('the Monte Carlo table', () => {
  it('writes the percentiles and the result’s own figures in the page convention', () => {
    const rows = percentileRows(answer);
    expect(rows.map((r) => r.key)).toEqual(['final_value', 'cagr', 'max_drawdown_pct', 'longest_drawdown']);
    expect(rows[0].cells).toEqual(['1,100.00', '1,100.00', '1,100.00', '1,100.00', '1,100.00']);
    expect(rows[1].original).toBe('5.00%');
    expect(rows[2].cells[3]).toBe('9.10%');
    expect(rows[3].cells[4]).toBe('2 trades');
  });
  it('leaves out the CAGR of a result that spans no time', () => {
    expect(percentileRows({ ...answer, cagr: null }).map((r) => r.key)).not.toContain('cagr');
  });
  it('says the chance of each loss', () => {
    expect(lossLines(answer)).toEqual(['Fell 10% below the starting capital: 0.50% of runs', 'Fell 50% below the starting capital: 0.00% of runs']);
  });
});

// Comparison of up to five completed runs: metrics side by side, overlaid equity, export.

import { backtests, results, strategies as strategyAPI, type Comparison } from '../api';
import { differingParams } from '../shape';
import { chartPanel } from '../charts';
import { button, download, empty, errorBox, h, loading, toast } from '../dom';
import { STAT_DEFS, SUMMARY_LABELS, fmtBarTime, fmtChartValue, sharedClock, fmtMoney, fmtNumber, fmtPct, fmtPctFraction, fmtInt, fmtParamValue, fmtStat } from '../format';
import { href, navigate } from '../router';

const MAX = 5;
const ORDER = Object.keys(SUMMARY_LABELS);
const FORMAT: Record<string, (v: unknown) => string> = {
  initial_cash: fmtMoney,
  final_value: fmtMoney,
  total_return: (v) => fmtPctFraction(v),
  annual_return: (v) => fmtPctFraction(v),
  max_drawdown: fmtMoney,
  max_drawdown_pct: (v) => fmtPct(v),
  win_rate: (v) => fmtPct(v),
  total_trades: fmtInt,
  avg_win: fmtMoney,
  avg_loss: fmtMoney,
};

export async function compareView(main: HTMLElement, _p: Record<string, string>, query: URLSearchParams): Promise<void> {
  const ids = (query.get('ids') ?? '').split(',').map((s) => s.trim()).filter(Boolean).slice(0, MAX);
  main.append(h('div', { class: 'page-head' }, h('h1', null, 'Compare runs')));
  const picker = h('section', { 'aria-labelledby': 'h-pick' }, h('h2', { id: 'h-pick' }, `Pick up to ${MAX} completed runs`), loading('Loading runs…'));
  const out = h('div', { id: 'comparison' });
  main.append(picker, out);

  Promise.all([backtests.listTasks(), strategyAPI.listStrategies().catch(() => [])]).then(
    ([tasks, strats]) => {
      const names = new Map(strats.map((s) => [s.id, s.name]));
      const done = tasks.filter((t) => t.status === 'completed');
      if (!done.length) {
        picker.replaceChildren(h('h2', { id: 'h-pick' }, 'Pick runs'), empty('No completed runs yet.', h('a', { class: 'btn', href: href('/runs') }, 'Start a backtest')));
        return;
      }
      const chosen = new Set(ids);
      const go = button('Compare', () => navigate(`/compare?ids=${[...chosen].join(',')}`), 'btn primary', { id: 'compare-go' }) as HTMLButtonElement;
      const boxes = done.map((t) => {
        const cb = h('input', { type: 'checkbox', id: `pick-${t.task_id}`, value: t.task_id, checked: chosen.has(t.task_id) }) as HTMLInputElement;
        return { t, cb };
      });
      const sync = () => {
        for (const { t, cb } of boxes) cb.disabled = !chosen.has(t.task_id) && chosen.size >= MAX;
        go.disabled = chosen.size < 2;
      };
      for (const { t, cb } of boxes) {
        cb.addEventListener('change', () => {
          if (cb.checked) chosen.add(t.task_id);
          else chosen.delete(t.task_id);
          sync();
        });
      }
      sync();
      picker.replaceChildren(
        h('h2', { id: 'h-pick' }, `Pick up to ${MAX} completed runs`),
        h('ul', { class: 'pick-list' }, boxes.map(({ t, cb }) => h('li', null, h('label', { for: cb.id }, cb, h('strong', null, t.task_id), ' ', h('span', { class: 'muted' }, [(t.strategy_id && names.get(t.strategy_id)) || t.strategy_id, t.symbol, t.start_date && `${t.start_date} → ${t.end_date}`, fmtParams(t.strategy_params as Record<string, unknown> | undefined)].filter(Boolean).join(' · ')))))),
        h('div', { class: 'actions' }, go),
      );
    },
    (e) => picker.replaceChildren(errorBox(e)),
  );

  if (ids.length < 2) {
    out.append(empty('Select at least two runs to compare.'));
    return;
  }
  out.append(loading('Comparing…'));
  let c: Comparison;
  try {
    c = await results.compare(ids);
  } catch (e) {
    out.replaceChildren(errorBox(e));
    return;
  }
  renderComparison(out, c, ids);
}

/** "fast=5 · slow=20". */
function fmtParams(p: Record<string, unknown> | undefined): string {
  return Object.entries(p ?? {})
    .map(([k, v]) => `${k}=${fmtParamValue(v)}`)
    .join(' · ');
}

function renderComparison(out: HTMLElement, c: Comparison, ids: string[]): void {
  const statDef = new Map(STAT_DEFS.map((d) => [d.key, d]));
  const fmt = (k: string, v: unknown) => {
    const f = FORMAT[k];
    if (f) return f(v);
    const d = statDef.get(k);
    if (d) return fmtStat(d.format, v);
    return typeof v === 'number' ? fmtNumber(v, 2) : fmtParamValue(v) || '—';
  };
  // The best value of a row: the highest, or the lowest where less is better; none where neither is.
  const lowerIsBetter = new Set(['max_drawdown', 'max_drawdown_pct', 'annual_volatility', 'max_drawdown_duration', 'avg_trade_duration', 'ulcer_index']);
  const noBest = new Set(['initial_cash', 'total_trades', 'benchmark_return', 'beta', 'correlation', 'tracking_error']);
  const best = (m: Comparison['metrics'][number]): number => {
    const vals = m.values.filter((v): v is number => typeof v === 'number');
    if (vals.length < 2 || noBest.has(m.key) || vals.every((v) => v === vals[0])) return -1;
    return m.values.indexOf(lowerIsBetter.has(m.key) ? Math.min(...vals) : Math.max(...vals));
  };
  const label = (t: Comparison['tasks'][number]) => `${t.task_id} · ${t.strategy_name} · v${t.strategy_version}`;
  const exportCSV = async () => {
    try {
      download('comparison.csv', await results.compareCSV(ids), 'text/csv');
    } catch (e) {
      toast((e as Error).message, 'error');
    }
  };
  // The parameters that tell the runs apart get a row each; those equal in every run, one row.
  const paramNames = differingParams(c.tasks.map((t) => t.params));
  const sameNames = Array.from(new Set(c.tasks.flatMap((t) => Object.keys(t.params)))).filter((p) => !paramNames.includes(p));
  const panel = chartPanel(`comparison_${c.tasks.map((t) => t.task_id).join('_')}`, 'Equity, normalised to 1 at the start', { height: 380 });
  out.replaceChildren(
    h(
      'div',
      { class: 'section-head' },
      h('h2', null, 'Side by side'),
      h('div', { class: 'head-actions' }, ids.length === 2 ? h('a', { class: 'btn small', id: 'compare-diff', href: href(`/diff?a=${ids[0]}&b=${ids[1]}`) }, 'Trade-level diff') : null, button('Export CSV', () => void exportCSV(), 'btn small', { id: 'compare-export-csv' }), button('Export JSON', () => download('comparison.json', JSON.stringify(c, null, 2), 'application/json'), 'btn small', { id: 'compare-export-json' })),
    ),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'table compare-table', id: 'compare-table' },
        h('caption', { class: 'sr-only' }, 'Metrics of the compared runs'),
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Metric'), c.tasks.map((t) => h('th', { scope: 'col' }, h('a', { href: href(`/results/${t.task_id}`) }, t.task_id), h('div', { class: 'muted small' }, `${t.strategy_name} · v${t.strategy_version} · ${(t.symbols ?? [t.symbol]).join(', ')}${t.benchmark && t.benchmark !== t.symbol ? ` vs ${t.benchmark}` : ''}`))))),
        h(
          'tbody',
          null,
          c.metrics.map((m) => {
            const b = best(m);
            return h('tr', null, h('th', { scope: 'row' }, m.label || SUMMARY_LABELS[m.key] || m.key), m.values.map((v, i) => h('td', { class: `num${b === i ? ' best' : ''}` }, fmt(m.key, v))));
          }),
          paramNames.map((p) => h('tr', { class: 'param-row differs', 'data-param': p }, h('th', { scope: 'row', title: 'A parameter that differs among these runs' }, `Parameter ${p}`), c.tasks.map((t) => h('td', { class: 'num' }, p in t.params ? fmtParamValue(t.params[p]) : '—')))),
          sameNames.length ? h('tr', { class: 'param-row same', id: 'compare-same-params' }, h('th', { scope: 'row' }, 'Same in every run'), h('td', { colspan: c.tasks.length }, fmtParams(Object.fromEntries(sameNames.map((p) => [p, c.tasks[0].params[p]]))))) : null,
        ),
      ),
    ),
    panel.el,
  );
  // Intraday runs whose data share a zone are shown in it, as on their results pages;
  // otherwise the axis keeps the dates and UTC times of the routes.
  const clock = sharedClock(c.tasks);
  const timeLabel = (v: unknown) => fmtBarTime(String(v), clock);
  panel.set({
    animation: false,
    tooltip: { trigger: 'axis', confine: true, valueFormatter: (v: unknown) => fmtChartValue(v) },
    legend: { top: 0, type: 'scroll', data: c.tasks.map(label) },
    grid: { left: 56, right: 16, top: 40, bottom: 56 },
    xAxis: { type: 'category', data: c.equity.dates, axisLabel: { formatter: timeLabel }, axisPointer: { label: { formatter: (p: { value: unknown }) => timeLabel(p.value) } } },
    yAxis: { type: 'value', scale: true, axisLabel: { formatter: (v: number) => fmtChartValue(v) } },
    dataZoom: [{ type: 'inside' }, { type: 'slider', bottom: 4, height: 18 }],
    series: c.equity.series.map((data, i) => ({ name: label(c.tasks[i]), type: 'line', data, showSymbol: false, connectNulls: true })),
  });
}

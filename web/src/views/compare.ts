// Comparison of up to five completed runs: metrics side by side, overlaid equity, export.

import { ApiError, get, listOf, qs, type Task } from '../api';
import { chartPanel } from '../charts';
import { button, download, empty, errorBox, h, loading } from '../dom';
import { STAT_DEFS, SUMMARY_LABELS, fmtMoney, fmtNumber, fmtPct, fmtPctFraction, fmtInt, fmtParamValue, fmtStat } from '../format';
import { href, navigate } from '../router';
import { alignEquity, comparisonCSV, comparisonMetricKeys, equityPoints, normaliseComparison, type Comparison } from '../shape';
import { fetchChart } from './results';

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

  get('/api/backtests').then(
    (v) => {
      const done = listOf<Task>(v, 'tasks').filter((t) => t.status === 'completed');
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
        h('ul', { class: 'pick-list' }, boxes.map(({ t, cb }) => h('li', null, h('label', { for: cb.id }, cb, h('strong', null, t.task_id), ' ', h('span', { class: 'muted' }, [t.strategy_name ?? t.strategy_id, t.symbol, t.start_date && `${t.start_date}→${t.end_date}`].filter(Boolean).join(' · ')))))),
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
    c = normaliseComparison(await get(`/api/results/compare${qs({ task_ids: ids.join(',') })}`));
  } catch (e) {
    if (e instanceof ApiError && (e.status === 404 || e.status === 405) && /not found|method/i.test(e.message) && !/result|task/i.test(e.message)) {
      c = await clientComparison(ids);
    } else {
      out.replaceChildren(errorBox(e));
      return;
    }
  }
  if (!c.runs.length) c = await clientComparison(ids);
  renderComparison(out, c);
}

/** The comparison built from each run's summary and equity chart (when the server has no compare route). */
async function clientComparison(ids: string[]): Promise<Comparison> {
  const runs = await Promise.all(
    ids.map(async (tid) => {
      const [summary, task, eq] = await Promise.all([get<Record<string, unknown>>(`/api/results/${tid}/summary`), get<Task>(`/api/backtests/${tid}`).catch(() => null), fetchChart(tid, 'equity').catch(() => null)]);
      return { tid, summary, task, points: equityPoints(eq) };
    }),
  );
  const aligned = alignEquity(runs.map((r) => ({ name: r.tid, points: r.points })));
  return {
    runs: runs.map((r) => ({ task_id: r.tid, label: r.tid, strategy: r.task?.strategy_name ?? r.task?.strategy_id, version: r.task?.strategy_version, symbol: r.task?.symbol, params: r.task?.strategy_params ?? {}, metrics: r.summary })),
    ...aligned,
  };
}

function renderComparison(out: HTMLElement, c: Comparison): void {
  const keys = comparisonMetricKeys(c.runs, ORDER);
  const statDef = new Map(STAT_DEFS.map((d) => [d.key, d]));
  const fmt = (k: string, v: unknown) => {
    const f = FORMAT[k];
    if (f) return f(v);
    const d = statDef.get(k);
    if (d) return fmtStat(d.format, v);
    return typeof v === 'number' ? fmtNumber(v, 2) : fmtParamValue(v) || '—';
  };
  // The best value of a row: the highest, or the lowest where less is better; none where neither is.
  const lowerIsBetter = new Set(['max_drawdown', 'max_drawdown_pct', 'annual_volatility', 'max_drawdown_duration', 'avg_trade_duration']);
  const noBest = new Set(['initial_cash', 'total_trades']);
  const best = (k: string): string | null => {
    const vals = c.runs.map((r) => r.metrics[k]).filter((v): v is number => typeof v === 'number');
    if (vals.length < 2 || noBest.has(k) || vals.every((v) => v === vals[0])) return null;
    const m = lowerIsBetter.has(k) ? Math.min(...vals) : Math.max(...vals);
    return c.runs.find((r) => r.metrics[k] === m)?.task_id ?? null;
  };
  const paramNames = Array.from(new Set(c.runs.flatMap((r) => Object.keys(r.params))));
  const panel = chartPanel(`comparison_${c.runs.map((r) => r.task_id).join('_')}`, 'Equity, normalised to 1 at the start', { height: 380 });
  out.replaceChildren(
    h(
      'div',
      { class: 'section-head' },
      h('h2', null, 'Side by side'),
      h('div', { class: 'head-actions' }, button('Export CSV', () => download('comparison.csv', comparisonCSV(c, keys), 'text/csv'), 'btn small', { id: 'compare-export-csv' }), button('Export JSON', () => download('comparison.json', JSON.stringify(c, null, 2), 'application/json'), 'btn small', { id: 'compare-export-json' })),
    ),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'table compare-table', id: 'compare-table' },
        h('caption', { class: 'sr-only' }, 'Metrics of the compared runs'),
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Metric'), c.runs.map((r) => h('th', { scope: 'col' }, h('a', { href: href(`/results/${r.task_id}`) }, r.task_id), h('div', { class: 'muted small' }, [r.strategy, r.version !== undefined ? `v${r.version}` : '', r.symbol].filter(Boolean).join(' · ')))))),
        h(
          'tbody',
          null,
          keys.map((k) => {
            const b = best(k);
            return h('tr', null, h('th', { scope: 'row' }, c.labels?.[k] ?? SUMMARY_LABELS[k] ?? k), c.runs.map((r) => h('td', { class: `num${b === r.task_id ? ' best' : ''}` }, fmt(k, r.metrics[k]))));
          }),
          paramNames.map((p) => h('tr', { class: 'param-row' }, h('th', { scope: 'row' }, `param ${p}`), c.runs.map((r) => h('td', { class: 'num' }, fmtParamValue(r.params[p]))))),
        ),
      ),
    ),
    panel.el,
  );
  panel.set({
    animation: false,
    tooltip: { trigger: 'axis' },
    legend: { top: 0, type: 'scroll', data: c.lines.map((l) => l.name) },
    grid: { left: 56, right: 16, top: 40, bottom: 56 },
    xAxis: { type: 'category', data: c.dates },
    yAxis: { type: 'value', scale: true },
    dataZoom: [{ type: 'inside' }, { type: 'slider', bottom: 4, height: 18 }],
    series: c.lines.map((l) => ({ name: l.name, type: 'line', data: l.data, showSymbol: false, connectNulls: true })),
  });
}

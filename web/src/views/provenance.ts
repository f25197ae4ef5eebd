// Provenance of a run, its exact reproduction (a button and the verdict) and the trade-level
// diff of two runs (docs/reproducibility.md).

import { backtests, results as api, type Provenance, type Reproduction, type RunDiff, type Task } from '../api';
import { chartPanel } from '../charts';
import { button, empty, errorBox, h, loading } from '../dom';
import { STAT_DEFS, SUMMARY_LABELS, fmtMoney, fmtNumber, fmtSummary, signClass } from '../format';
import { href, navigate } from '../router';

/** The run's provenance as a card: engine, code hash, and each series it read. */
export function provenanceCard(p: Provenance | null | undefined): HTMLElement {
  if (!p) return h('p', { class: 'muted', id: 'provenance' }, 'No provenance recorded for this run.');
  return h(
    'section',
    { class: 'card', id: 'provenance', 'aria-labelledby': 'h-provenance' },
    h('h2', { id: 'h-provenance' }, 'Provenance'),
    // The hashes are listed, not put in the table: 64 characters wrap there into a tall
    // column that a phone has to scroll sideways to.
    h(
      'dl',
      { class: 'meta facts' },
      h('dt', null, 'Engine'),
      h('dd', { 'data-key': 'engine_version' }, p.engine_version),
      h('dt', null, 'Code SHA-256'),
      h('dd', { class: 'mono', 'data-key': 'code_sha256' }, p.code_sha256),
      p.data.flatMap((f) => [h('dt', null, `Data SHA-256 (${f.symbol}, ${f.timeframe}, ${f.timezone})`), h('dd', { class: 'mono', 'data-key': `data_sha256_${f.symbol}` }, f.sha256)]),
    ),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'table compact-sm', id: 'provenance-data' },
        h('caption', { class: 'sr-only' }, 'The data the run read'),
        h('thead', null, h('tr', null, // On a phone the timeframe and zone are read in the hashes' labels above.
['Symbol', 'Timeframe', 'Zone', 'Bars', 'First', 'Last'].map((c) => h('th', { scope: 'col', class: c === 'Bars' || c === 'First' || c === 'Last' ? 'num' : c === 'Symbol' ? undefined : 'hide-sm' }, c)))),
        h('tbody', null, p.data.map((f) => h('tr', { 'data-symbol': f.symbol }, h('td', null, f.symbol), h('td', { class: 'hide-sm' }, f.timeframe), h('td', { class: 'hide-sm' }, f.timezone), h('td', { class: 'num' }, fmtNumber(f.bars, 0)), h('td', { class: 'num' }, (f.first ?? '').slice(0, 10)), h('td', { class: 'num' }, (f.last ?? '').slice(0, 10))))),
      ),
    ),
  );
}

/** The verdict of a reproduction, or that it is still pending. */
export function reproductionCard(taskID: string, r: Reproduction): HTMLElement {
  const pending = r.outcome === 'pending';
  const tone = pending ? 'muted' : r.outcome === 'identical' ? 'ok' : 'warn';
  return h(
    'section',
    { class: `card reproduction ${tone}`, id: 'reproduction', 'data-outcome': r.outcome },
    h('p', null, h('strong', null, pending ? 'Reproducing…' : r.outcome === 'identical' ? 'Identical' : 'Differs'), ' — ', h('a', { href: href(`/results/${taskID}`) }, taskID), ' reproduces ', h('a', { href: href(`/results/${r.of}`) }, r.of), pending ? '' : r.outcome === 'identical' ? ': summary, trades and equity equal to the bit.' : ':'),
    r.causes.length ? h('ul', { class: 'causes' }, r.causes.map((c) => h('li', null, c))) : '',
    pending ? '' : h('p', null, h('a', { class: 'btn small', href: href(`/diff?a=${encodeURIComponent(r.of)}&b=${encodeURIComponent(taskID)}`) }, 'Diff with the original')),
  );
}

/** A button that reproduces the run and shows the verdict in box when it is in. */
export function reproduceButton(task: Task, box: () => HTMLElement): HTMLButtonElement {
  const btn = button('Reproduce', async () => {
    btn.disabled = true;
    box().replaceChildren(loading('Starting a reproduction…'));
    try {
      const t = await backtests.reproduceTask(task.task_id);
      for (;;) {
        const cur = await backtests.getTask(t.task_id);
        const r = cur.reproduction;
        if (cur.status === 'failed' || cur.status === 'cancelled') {
          box().replaceChildren(h('p', { class: 'card warn' }, `The reproduction ${t.task_id} ${cur.status}: `, cur.error ?? ''));
          return;
        }
        box().replaceChildren(reproductionCard(t.task_id, r ?? { of: task.task_id, outcome: 'pending', causes: [] }));
        if (r && r.outcome !== 'pending') return;
        await new Promise((res) => setTimeout(res, 500));
      }
    } catch (e) {
      box().replaceChildren(errorBox(e));
    } finally {
      btn.disabled = false;
    }
  }, 'btn small', { 'data-reproduce': '' });
  return btn;
}

/** /diff?a=…&b=…: the trade-level diff of two runs. */
export async function diffView(main: HTMLElement, _p: Record<string, string>, query: URLSearchParams): Promise<void> {
  const a = query.get('a') ?? '';
  let b = query.get('b') ?? '';
  main.append(h('div', { class: 'page-head' }, h('h1', null, 'Diff of two runs')));
  if (!a) {
    main.append(empty('Pick two runs on the comparison page.', h('a', { class: 'btn', href: href('/compare') }, 'Compare runs')));
    return;
  }
  if (!b) {
    const tasks = (await backtests.listTasks().catch(() => [])).filter((t) => t.status === 'completed' && t.task_id !== a);
    const sel = h('select', { id: 'diff-against', 'aria-label': 'Run to diff against' }, tasks.map((t) => h('option', { value: t.task_id }, `${t.task_id} · ${t.strategy_id} v${t.strategy_version} · ${t.symbol}`))) as HTMLSelectElement;
    main.append(h('p', null, `Diff ${a} against `, sel, ' ', button('Diff', () => navigate(`/diff?a=${encodeURIComponent(a)}&b=${encodeURIComponent(sel.value)}`), 'btn small primary', { id: 'diff-go' })));
    return;
  }
  const out = h('div', { id: 'diff' }, loading('Comparing…'));
  main.append(out);
  let d: RunDiff;
  try {
    d = await api.diff(a, b);
  } catch (e) {
    out.replaceChildren(errorBox(e));
    return;
  }
  renderDiff(out, a, b, d);
}

const tradeCols = ['Kind', 'Symbol', 'Entry', 'Exit', 'Size', 'Entry price', 'Exit price', 'Net P&L'];
const numCols = new Set(['Size', 'Entry price', 'Exit price', 'Net P&L']);

type Trip = Record<string, unknown>;

function tradeRow(kind: string, side: string, t: Trip): HTMLElement {
  const day = (v: unknown) => (typeof v === 'string' ? v.slice(0, 10) : '—');
  const num = (v: unknown) => (typeof v === 'number' ? fmtNumber(v, 2) : '—');
  return h('tr', { class: `diff-${kind}`, 'data-kind': kind }, h('td', null, side), h('td', null, String(t.symbol ?? '')), h('td', null, day(t.open_time)), h('td', null, day(t.close_time)), h('td', { class: 'num' }, num(t.size)), h('td', { class: 'num' }, num(t.entry_price)), h('td', { class: 'num' }, num(t.exit_price)), h('td', { class: `num ${signClass(t.pnl_net)}` }, num(t.pnl_net)));
}

function summaryRow(k: string, v: RunDiff['summary'][string]): HTMLElement {
  // In the summary's units: a return is a fraction, shown in percent like the summary cards.
  const cell = (x: unknown) => h('td', { class: 'num' }, x == null ? '—' : fmtSummary(k, x));
  return h('tr', { class: v.delta ? 'differs' : '', 'data-key': k }, h('th', { scope: 'row', title: k }, SUMMARY_LABELS[k] ?? STAT_DEFS.find((d) => d.key === k)?.label ?? k), cell(v.a), cell(v.b), cell(v.delta));
}

function renderDiff(out: HTMLElement, a: string, b: string, d: RunDiff): void {
  const fd = d.first_divergence;
  const rows: HTMLElement[] = [];
  for (const t of d.trades.only_a ?? []) rows.push(tradeRow('only-a', `only ${a}`, t as Trip));
  for (const t of d.trades.only_b ?? []) rows.push(tradeRow('only-b', `only ${b}`, t as Trip));
  for (const p of d.trades.changed ?? []) rows.push(tradeRow('changed', `${a} (changed)`, (p.a ?? {}) as Trip), tradeRow('changed', `${b} (changed)`, (p.b ?? {}) as Trip));
  rows.sort((x, y) => String(x.children[2].textContent).localeCompare(String(y.children[2].textContent)));
  const panel = chartPanel(`diff_${a}_${b}`, `Equity: ${a} and ${b}`, { height: 340 });
  out.replaceChildren(
    h('p', { id: 'diff-verdict', 'data-identical': String(d.identical) }, h('strong', null, d.identical ? 'Identical' : 'Different'), ` — `, h('a', { href: href(`/results/${a}`) }, a), ' against ', h('a', { href: href(`/results/${b}`) }, b), fd ? `; they part at bar ${fd.bar} (${fd.date}): ${fd.what}.` : '.'),
    h('section', { 'aria-labelledby': 'h-causes' }, h('h2', { id: 'h-causes' }, 'Causes'), d.causes.length ? h('ul', { class: 'causes', id: 'diff-causes' }, d.causes.map((c) => h('li', null, c))) : h('p', { class: 'muted' }, 'Same provenance.')),
    d.code_diff ? h('section', { 'aria-labelledby': 'h-code' }, h('h2', { id: 'h-code' }, 'Code'), h('pre', { class: 'code-diff', id: 'diff-code' }, d.code_diff.split('\n').map((l) => h('span', { class: l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : l.startsWith('@@') ? 'hunk' : '' }, l + '\n')))) : '',
    h('section', { 'aria-labelledby': 'h-eq' }, h('h2', { id: 'h-eq' }, 'Equity difference'), h('p', { class: 'muted' }, `Final ${fmtMoney(d.equity.final)}, largest ${fmtMoney(d.equity.largest ?? d.equity.max_abs)} (${b} − ${a}).`), panel.el),
    h(
      'section',
      { 'aria-labelledby': 'h-dtrades' },
      h('h2', { id: 'h-dtrades' }, 'Trades'),
      h('p', { class: 'muted' }, `${d.trades.same ?? 0} the same, ${(d.trades.only_a ?? []).length} only in ${a}, ${(d.trades.only_b ?? []).length} only in ${b}, ${(d.trades.changed ?? []).length} changed.`),
      rows.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'table diff-trades', id: 'diff-trades' }, h('thead', null, h('tr', null, tradeCols.map((c) => h('th', { scope: 'col', class: numCols.has(c) ? 'num' : undefined }, c)))), h('tbody', null, rows))) : '',
    ),
    h(
      'section',
      { 'aria-labelledby': 'h-dsum' },
      h('h2', { id: 'h-dsum' }, 'Summary'),
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table compact-sm', id: 'diff-summary' },
          h('thead', null, h('tr', null, ['Figure', a, b, `Δ (${b} − ${a})`].map((c, i) => h('th', { scope: 'col', class: i ? 'num' : undefined }, c)))),
          h('tbody', null, Object.entries(d.summary).map(([k, v]) => summaryRow(k, v))),
        ),
      ),
    ),
  );
  const pts = d.equity.points ?? [];
  panel.set({
    animation: false,
    tooltip: { trigger: 'axis', confine: true },
    // The legend sits below, on one line that scrolls: above, it wrapped at 390 px and covered
    // the axis titles (Equity, Difference), which keep the top to themselves.
    legend: { type: 'scroll', bottom: 0, data: [a, b, `${b} − ${a}`] },
    grid: { left: 56, right: 56, top: 40, bottom: 64 },
    xAxis: { type: 'category', data: pts.map((p) => (p.time ?? '').slice(0, 10)) },
    yAxis: [{ type: 'value', scale: true, name: 'Equity' }, { type: 'value', scale: true, name: 'Difference', splitLine: { show: false } }],
    series: [
      { name: a, type: 'line', showSymbol: false, data: pts.map((p) => p.a) },
      { name: b, type: 'line', showSymbol: false, data: pts.map((p) => p.b) },
      { name: `${b} − ${a}`, type: 'line', yAxisIndex: 1, showSymbol: false, lineStyle: { width: 1 }, areaStyle: { opacity: 0.25 }, data: pts.map((p) => (p.b ?? 0) - (p.a ?? 0)) },
    ],
  });
}

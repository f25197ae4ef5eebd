// The results page's Monte Carlo section: a form (method, runs, seed), the percentile table,
// the loss probabilities, the fan chart of the simulated equity paths and the histograms of
// their final value and max drawdown.

import { results as api, type MonteCarlo } from '../api';
import { chartPanel } from '../charts';
import { errorBox, field, h, loading } from '../dom';
import { fmtMoney, fmtPct } from '../format';
import { fanOption, histogramOption, lossLines, percentileRows } from '../montecarlo';
import { palette } from '../settings';

const METHODS: [string, string][] = [
  ['shuffle', 'Shuffle the trades'],
  ['bootstrap', 'Bootstrap the trades'],
  ['block', 'Block bootstrap of the returns'],
  ['price_paths', 'Rerun on bootstrapped price paths'],
];

/** How often a price_paths request still under way is asked again. */
const POLL_MS = 1000;

/**
 * The section for result tid. It simulates on first show: the trades shuffled, or the
 * returns block-bootstrapped for a run that closed no trade.
 */
export function monteCarloSection(tid: string, trades: number): HTMLElement {
  const methodSel = h('select', { name: 'method' }, METHODS.map(([v, l]) => h('option', { value: v, selected: v === (trades > 0 ? 'shuffle' : 'block') }, l))) as HTMLSelectElement;
  const runsIn = h('input', { name: 'runs', type: 'number', min: '1', max: '10000', step: '1', placeholder: '1000', inputmode: 'numeric' }) as HTMLInputElement;
  const seedIn = h('input', { name: 'seed', type: 'number', min: '0', step: '1', value: '1', inputmode: 'numeric' }) as HTMLInputElement;
  const blockIn = h('input', { name: 'block', type: 'number', min: '1', step: '1', placeholder: 'auto', inputmode: 'numeric' }) as HTMLInputElement;
  const blockField = field('Block', blockIn, 'Bars per drawn block (default: the cube root of the bars)');
  const runsHelp = () => (methodSel.value === 'price_paths' ? 'Up to 1,000 reruns of the strategy (default 100)' : 'Up to 10,000 (fewer for long runs)');
  const runsField = field('Runs', runsIn, runsHelp());
  const submit = h('button', { type: 'submit', class: 'btn primary' }, 'Simulate');
  const out = h('div', { id: 'montecarlo-result', 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'run-form montecarlo-form', novalidate: true },
    h('div', { class: 'form-row' }, field('Method', methodSel), runsField, field('Seed', seedIn, 'The same seed gives the same answer'), blockField),
    h('div', { class: 'actions' }, submit),
  );
  const fan = chartPanel(`${tid}_montecarlo_fan`, 'Simulated equity paths (percentile bands)', { height: 380 });
  const finals = chartPanel(`${tid}_montecarlo_final_value`, 'Final value of the runs', { height: 300 });
  const drawdowns = chartPanel(`${tid}_montecarlo_max_drawdown`, 'Max drawdown of the runs (%)', { height: 300 });
  for (const [p, type] of [[fan, 'montecarlo_fan'], [finals, 'montecarlo_final_value'], [drawdowns, 'montecarlo_max_drawdown']] as const) p.el.dataset.chartType = type;
  const charts = h('div', { class: 'charts', id: 'montecarlo-charts', hidden: true }, fan.el, finals.el, drawdowns.el);

  const show = (a: MonteCarlo) => {
    const rows = percentileRows(a);
    // The quartiles give way on a phone, so that the run's own figure stays in sight.
    const quartile = (i: number) => (i === 1 || i === 3 ? 'num hide-sm' : 'num');
    const th = (t: string, cls = 'num') => h('th', { scope: 'col', class: cls }, t);
    out.replaceChildren(
      h('p', { class: 'muted', id: 'montecarlo-note' }, `${a.runs.toLocaleString('en-US')} runs of ${a.steps.toLocaleString('en-US')} ${a.unit}${a.block ? ` (blocks of ${a.block} bars)` : ''}, seed ${a.seed}.${a.method === 'shuffle' ? ' Shuffling keeps the same trades, so every run ends at the same final value: only the path, and so the drawdowns, differ.' : ''}${a.method === 'price_paths' ? ' Each run is the strategy rerun on a price path of the bars drawn in blocks, every symbol on the same draws.' : ''}`),
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table compact-sm', id: 'montecarlo-table' },
          h('caption', { class: 'sr-only' }, 'Percentiles of the simulated runs and the figures of this run'),
          // The run's own figure first, beside its label, then the simulated runs' percentiles.
          h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Figure'), th('This run'), th('5%'), th('25%', quartile(1)), th('Median'), th('75%', quartile(3)), th('95%'))),
          h('tbody', null, rows.map((r) => h('tr', { 'data-key': r.key }, h('th', { scope: 'row' }, r.label), h('td', { class: 'num own' }, r.original), r.cells.map((c, i) => h('td', { class: quartile(i) }, c))))),
        ),
      ),
      h('ul', { class: 'montecarlo-losses', id: 'montecarlo-losses' }, lossLines(a).map((l) => h('li', null, l))),
    );
    charts.hidden = false;
    const pal = palette();
    fan.set(fanOption(a, pal));
    finals.set(histogramOption(a.final_value_histogram, 'Final value', (v) => fmtMoney(v), pal.up));
    drawdowns.set(histogramOption(a.max_drawdown_histogram, 'Max drawdown', (v) => fmtPct(v, 1), pal.down));
  };
  // The block length applies to the block methods only; the runs' bound depends on the method.
  const syncForm = () => {
    blockField.hidden = methodSel.value !== 'block' && methodSel.value !== 'price_paths';
    runsIn.max = methodSel.value === 'price_paths' ? '1000' : '10000';
    runsIn.placeholder = methodSel.value === 'price_paths' ? '100' : '1000';
    const help = runsField.querySelector('.hint');
    if (help) help.textContent = runsHelp();
  };
  methodSel.addEventListener('change', syncForm);
  syncForm();
  let generation = 0; // a newer simulation stops an older one's polling
  // Reruns on price paths take a while: the service answers their progress until done.
  const pricePaths = async (o: { runs?: number; seed?: number; block?: number }, gen: number): Promise<MonteCarlo | null> => {
    for (;;) {
      const a = await api.getPricePaths(tid, o);
      if (!api.isProgress(a)) return a;
      if (gen !== generation) return null;
      out.replaceChildren(
        loading(`Rerunning the strategy on price paths… ${a.done.toLocaleString('en-US')} of ${a.runs.toLocaleString('en-US')} (${Math.floor(a.progress)}%)`),
      );
      out.firstElementChild?.setAttribute('id', 'montecarlo-progress');
      await new Promise((r) => setTimeout(r, POLL_MS));
      if (gen !== generation || !out.isConnected) return null;
    }
  };
  const simulate = async () => {
    const gen = ++generation;
    out.replaceChildren(loading('Simulating…'));
    submit.setAttribute('disabled', '');
    try {
      const runs = runsIn.value.trim() ? Number(runsIn.value) : undefined;
      const seed = seedIn.value.trim() ? Number(seedIn.value) : undefined;
      const block = blockIn.value.trim() ? Number(blockIn.value) : undefined;
      if (methodSel.value === 'price_paths') {
        const a = await pricePaths({ runs, seed, block }, gen);
        if (a && gen === generation) show(a);
      } else if (methodSel.value === 'block') {
        show(await api.getMonteCarlo(tid, { method: methodSel.value, runs, seed, block }));
      } else {
        show(await api.getMonteCarlo(tid, { method: methodSel.value, runs, seed }));
      }
    } catch (e) {
      out.replaceChildren(errorBox(e));
      charts.hidden = true;
    } finally {
      submit.removeAttribute('disabled');
    }
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void simulate();
  });
  // A run that never held a position has nothing to resample: every simulated run would stay
  // at the starting capital. It says so, and simulates only when asked.
  if (trades > 0) void simulate();
  else out.replaceChildren(h('p', { class: 'empty', id: 'montecarlo-empty' }, 'This run made no trades, so there is nothing to resample: every simulated run would stay at the starting capital. Simulate runs it all the same.'));
  return h(
    'section',
    { 'aria-labelledby': 'h-montecarlo', id: 'montecarlo' },
    h('h2', { id: 'h-montecarlo' }, 'Monte Carlo'),
    h(
      'p',
      { class: 'muted' },
      'How much of this result was the luck of its order: the trades in random orders, drawn with replacement, or the returns per bar drawn in blocks; or how the strategy fares on price paths it has not seen: rerun on the bars drawn in blocks.',
    ),
    form,
    out,
    charts,
  );
}

// Parameter studies: the form (a range per parameter from the strategy's parameter info, the
// count of combinations shown as it is typed), the list, and a study's page with live
// progress, the leaderboard, the heatmap, the overfitting statistics, the walk-forward
// folds with their stitched out-of-sample curve, the convergence of the search (best so far
// per trial), the Pareto front marked on the leaderboard, and "open as backtest".

import { ApiError, data, strategies as strategyAPI, studies as api, type ChartConfig, type CPCV, type Overfitting, type ParamInfo, type StudySurface, type Study, type StudyRequest, type StudyTrial, type WalkForward } from '../api';
import { chartPanel } from '../charts';
import { bestReachedAt, convergenceOption } from '../convergence';
import { button, confirmDialog, empty, errorBox, field, h, id, loading, toast, dateInput } from '../dom';
import { fmtAgo, fmtInt, fmtMoney, fmtNumber, fmtParamValue, fmtPct, fmtPctFraction, fmtRange, fmtRatio, fmtStat, rangeFor, STAT_DEFS, SUMMARY_LABELS, type BarRange } from '../format';
import { href, navigate, type Cleanup } from '../router';
import { taskSocket } from '../ws';
import { prepareChartOption, rangeCount } from '../shape';
import { lookaheadBadge, lookaheadNote, statusBadge } from './runs';

/** The most combinations a study may run (internal/sweep.MaxCombinations). */
export const MAX_COMBINATIONS = 10000;
const ACTIVE = new Set(['pending', 'running']);

/** The leaderboard's columns: figures every combination stores. */
const BOARD: [string, string, (v: unknown) => string][] = [
  ['final_value', 'Final value', fmtMoney],
  ['total_return', 'Return', (v) => fmtPctFraction(v)],
  ['sharpe_ratio', 'Sharpe', (v) => fmtNumber(v, 2)],
  ['max_drawdown_pct', 'Max DD', (v) => fmtPct(v)],
  ['total_trades', 'Trades', fmtInt],
  ['win_rate', 'Win rate', (v) => fmtPct(v)],
];

/** Objectives offered in the form: the summary figures, then the statistics. */
function objectives(): [string, string][] {
  const seen = new Set<string>();
  const out: [string, string][] = [];
  for (const [k, l] of [...Object.entries(SUMMARY_LABELS), ...STAT_DEFS.map((d) => [d.key, d.label] as [string, string])]) {
    if (k === 'initial_cash' || seen.has(k)) continue;
    seen.add(k);
    out.push([k, l]);
  }
  return out;
}


// ---- one parameter's row in the form -----------------------------------------------------

interface SpaceRow {
  el: HTMLElement;
  /** How many values it gives (0: invalid). */
  count(): number;
  /** Its values: a single one for the shared parameters, a range or list for the space. */
  value(): { fixed: unknown } | { space: unknown } | null;
}

function numberRow(info: ParamInfo, onChange: () => void): SpaceRow {
  const t = info.type === 'int' ? 'int' : 'float';
  const d = Number(info.value ?? info.default) || 0;
  const mk = (name: string, v: string) => h('input', { type: 'text', inputmode: t === 'int' ? 'numeric' : 'decimal', name: `${info.name}-${name}`, 'data-param': info.name, 'data-part': name, value: v, 'aria-label': `${info.name} ${name}` }) as HTMLInputElement;
  const start = mk('start', String(d));
  const stop = mk('stop', String(d));
  const step = mk('step', t === 'int' ? '1' : String(d > 0 ? d / 10 : 0.1));
  const err = h('small', { class: 'field-error', role: 'alert' });
  const parse = (el: HTMLInputElement) => (el.value.trim() === '' ? NaN : Number(el.value));
  const check = (): number => {
    const [a, b, s] = [parse(start), parse(stop), parse(step)];
    let msg = '';
    if (![a, b, s].every(Number.isFinite)) msg = 'start, stop and step must be numbers';
    else if (t === 'int' && ![a, b, s].every(Number.isInteger)) msg = `${info.name} is an int: whole numbers only`;
    else if (s <= 0) msg = 'step must be above 0';
    else if (b < a) msg = 'stop must not be below start';
    err.textContent = msg;
    for (const el of [start, stop, step]) el.setAttribute('aria-invalid', msg ? 'true' : 'false');
    return msg ? 0 : rangeCount(a, b, s);
  };
  for (const el of [start, stop, step]) el.addEventListener('input', onChange);
  const el = h(
    'div',
    { class: 'field space-row', 'data-param': info.name },
    h('span', { class: 'label' }, info.name),
    h('div', { class: 'row' }, h('label', null, 'from ', start), h('label', null, 'to ', stop), h('label', null, 'step ', step)),
    h('small', { class: 'hint' }, [info.description, `${t}, default ${fmtParamValue(info.default)}`].filter(Boolean).join(' · ')),
    err,
  );
  return {
    el,
    count: check,
    value() {
      const n = check();
      if (!n) return null;
      const [a, b, s] = [parse(start), parse(stop), parse(step)];
      return n === 1 ? { fixed: a } : { space: { start: a, stop: b, step: s } };
    },
  };
}

function listRow(info: ParamInfo, onChange: () => void): SpaceRow {
  const isBool = info.type === 'bool';
  const input = h('input', { type: 'text', name: info.name, 'data-param': info.name, value: fmtParamValue(info.value ?? info.default), 'aria-label': `${info.name} values` }) as HTMLInputElement;
  input.addEventListener('input', onChange);
  const err = h('small', { class: 'field-error', role: 'alert' });
  const values = (): unknown[] | null => {
    const parts = input.value.split(',').map((s) => s.trim()).filter(Boolean);
    if (!parts.length) return null;
    if (!isBool) return parts;
    const out = parts.map((p) => (p === 'true' ? true : p === 'false' ? false : null));
    return out.includes(null) ? null : out;
  };
  const check = () => {
    const v = values();
    err.textContent = v ? '' : isBool ? 'true, false or both, separated by commas' : 'at least one value';
    input.setAttribute('aria-invalid', v ? 'false' : 'true');
    return v ? new Set(v.map(String)).size : 0;
  };
  const el = h('div', { class: 'field space-row', 'data-param': info.name }, h('label', null, info.name, ' ', input), h('small', { class: 'hint' }, `${info.type}: values separated by commas`), err);
  return {
    el,
    count: check,
    value() {
      const v = values();
      if (!v || !check()) return null;
      const uniq = [...new Map(v.map((x) => [String(x), x])).values()];
      return uniq.length === 1 ? { fixed: uniq[0] } : { space: uniq };
    },
  };
}

// ---- the studies page: form and list ------------------------------------------------------

export async function studiesView(main: HTMLElement, _p: Record<string, string>, query: URLSearchParams): Promise<void> {
  const formBox = h('section', { 'aria-labelledby': 'h-new-study' }, h('h2', { id: 'h-new-study' }, 'New study'), loading('Loading…'));
  const listBox = h('section', { 'aria-labelledby': 'h-studies' }, h('h2', { id: 'h-studies' }, 'Studies'), loading('Loading studies…'));
  main.append(h('div', { class: 'page-head' }, h('h1', null, 'Parameter studies')), formBox, listBox);
  void renderList(listBox);
  await buildStudyForm(formBox, query);
}

async function renderList(box: HTMLElement): Promise<void> {
  let list: Study[];
  try {
    list = await api.listStudies();
  } catch (e) {
    box.replaceChildren(errorBox(e));
    return;
  }
  const head = h('h2', { id: 'h-studies' }, 'Studies');
  if (!list.length) {
    box.replaceChildren(head, empty('No studies yet: choose ranges above and start one.'));
    return;
  }
  box.replaceChildren(
    head,
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'table', id: 'study-list' },
        h('thead', null, h('tr', null, ['Study', 'Strategy', 'Status', 'Combinations', 'Best', 'Started'].map((c) => h('th', { scope: 'col' }, c)))),
        h(
          'tbody',
          null,
          list.map((s) =>
            h(
              'tr',
              { 'data-study': s.id },
              h('td', null, h('a', { href: href(`/studies/${s.id}`) }, s.id), s.name ? h('div', { class: 'muted small' }, s.name) : ''),
              h('td', null, `${s.strategy_id} v${s.strategy_version}`),
              h('td', null, statusBadge(s.status)),
              h('td', { class: 'num' }, `${fmtInt(s.done)} of ${fmtInt(s.total)}${s.failed ? ` · ${fmtInt(s.failed)} failed` : ''}`),
              h('td', { class: 'num' }, s.best ? `${fmtNumber(s.best.objective, 4)} ${s.objective}` : '—'),
              h('td', null, fmtAgo(s.created_at)),
            ),
          ),
        ),
      ),
    ),
  );
}

async function buildStudyForm(box: HTMLElement, query: URLSearchParams): Promise<void> {
  const head = h('h2', { id: 'h-new-study' }, 'New study');
  let strategies, sources;
  try {
    [strategies, sources] = await Promise.all([strategyAPI.listStrategies(), data.listSources()]);
  } catch (e) {
    box.replaceChildren(head, errorBox(e));
    return;
  }
  if (!strategies.length) {
    box.replaceChildren(head, empty('Create a strategy first.', h('a', { class: 'btn primary', href: href('/strategies/new') }, 'New strategy')));
    return;
  }
  const want = query.get('strategy');
  const stratSel = h('select', { name: 'strategy_id', id: 'study-strategy' }, strategies.map((s) => h('option', { value: s.id, selected: s.id === want }, `${s.name} (${s.id})`))) as HTMLSelectElement;
  const sourceSel = h('select', { name: 'data_source' }, sources.map((s, i) => h('option', { value: s.name, selected: i === 0 }, s.name))) as HTMLSelectElement;
  const listID = id('study-symbols');
  const symbolIn = h('input', { type: 'search', name: 'symbol', list: listID, autocomplete: 'off', required: true, placeholder: 'Search symbols' }) as HTMLInputElement;
  const symbolList = h('datalist', { id: listID });
  const startIn = dateInput({ name: 'start_date', required: true, value: '2020-01-01' });
  const endIn = dateInput({ name: 'end_date', required: true, value: new Date().toISOString().slice(0, 10) });
  const cashIn = h('input', { type: 'number', name: 'initial_cash', min: '0', step: 'any', value: '10000' }) as HTMLInputElement;
  const commIn = h('input', { type: 'number', name: 'commission', min: '0', max: '1', step: 'any', value: '0.001' }) as HTMLInputElement;
  const objSel = h('select', { name: 'objective', id: 'study-objective' }, objectives().map(([k, l]) => h('option', { value: k, selected: k === 'sharpe_ratio' }, l))) as HTMLSelectElement;
  const dirSel = h('select', { name: 'direction' }, h('option', { value: 'max' }, 'highest is best'), h('option', { value: 'min' }, 'lowest is best')) as HTMLSelectElement;
  const methodSel = h('select', { name: 'method', id: 'study-method' }, h('option', { value: 'grid' }, 'every combination (grid)'), h('option', { value: 'random' }, 'a random sample'), h('option', { value: 'bayes' }, 'a model-based search (bayes)')) as HTMLSelectElement;
  const samplesIn = h('input', { type: 'number', name: 'samples', min: '1', step: '1', value: '100' }) as HTMLInputElement;
  const seedIn = h('input', { type: 'number', name: 'seed', step: '1', value: '1' }) as HTMLInputElement;
  const constraintIn = h('input', { type: 'text', name: 'constraint', id: 'study-constraint', placeholder: 'e.g. p.fast < p.slow', autocomplete: 'off', spellcheck: false }) as HTMLInputElement;
  const nameIn = h('input', { type: 'text', name: 'name', placeholder: 'optional' }) as HTMLInputElement;
  const randomBox = h('div', { class: 'grid2', hidden: true }, field('Samples', samplesIn, 'How many combinations to draw'), field('Seed', seedIn, 'The same seed draws the same sample'));
  methodSel.addEventListener('change', () => {
    randomBox.hidden = methodSel.value === 'grid';
    recount();
  });
  // Walk-forward analysis: windows as a number of bars or a duration (2y, 6M, 4w, 90d).
  const wfOn = h('input', { type: 'checkbox', name: 'walk_forward', id: 'study-wf' }) as HTMLInputElement;
  const windowIn = (name: string, value: string, placeholder = '') =>
    h('input', { type: 'text', name, id: `study-wf-${name}`, value, placeholder, pattern: '[1-9][0-9]*|[1-9][0-9]{0,4}[dwMy]', autocomplete: 'off', spellcheck: false }) as HTMLInputElement;
  const trainIn = windowIn('train', '2y');
  const testIn = windowIn('test', '6M');
  const stepIn = windowIn('step', '', 'same as test');
  const anchoredIn = h('input', { type: 'checkbox', name: 'anchored', id: 'study-wf-anchored' }) as HTMLInputElement;
  const wfBox = h(
    'div',
    { class: 'grid2', hidden: true, id: 'study-wf-fields' },
    field('Train on', trainIn, 'Bars (e.g. 500) or a duration: 2y, 6M, 4w, 90d'),
    field('Test on', testIn, 'The window after each training window the winner runs on'),
    field('Step', stepIn, 'Between test windows; at least the test window'),
    h('label', { class: 'check' }, anchoredIn, ' Anchored: every fold trains from the first bar'),
  );
  wfOn.addEventListener('change', () => {
    wfBox.hidden = !wfOn.checked;
    recount();
  });
  const windowOf = (v: string): number | string => (/^\d+$/.test(v.trim()) ? Number(v.trim()) : v.trim());
  const spaceBox = h('fieldset', { class: 'params-box', id: 'study-space' }, h('legend', null, 'Parameters'));
  const countOut = h('output', { id: 'study-count', 'aria-live': 'polite' });
  const formError = h('div', { class: 'error-box', role: 'alert', hidden: true, id: 'study-form-error' });
  const submit = h('button', { type: 'submit', class: 'btn primary', id: 'study-submit' }, 'Start study') as HTMLButtonElement;
  let rows: SpaceRow[] = [];

  function recount(): void {
    const counts = rows.map((r) => r.count());
    const n = counts.reduce((a, b) => a * b, 1);
    const bad = counts.some((c) => c === 0);
    const drawn = methodSel.value !== 'grid' ? Math.min(n, Number(samplesIn.value) || 0) : n;
    countOut.dataset.count = String(bad ? 0 : drawn);
    if (bad) countOut.textContent = 'Fix the ranges marked below.';
    else if (n > MAX_COMBINATIONS && methodSel.value === 'grid') countOut.textContent = `${fmtInt(n)} combinations: more than the ${fmtInt(MAX_COMBINATIONS)} a study may run. Narrow the ranges, raise the steps or draw a random sample.`;
    else countOut.textContent = `${fmtInt(drawn)} combination${drawn === 1 ? '' : 's'}${methodSel.value === 'random' ? ` drawn from ${fmtInt(n)}` : methodSel.value === 'bayes' ? ` proposed from ${fmtInt(n)}, in rounds, by a model of the runs before` : ''}${constraintIn.value.trim() ? ', before the constraint' : ''}${wfOn.checked ? ', run on each fold' : ''}.`;
    submit.disabled = bad || (n > MAX_COMBINATIONS && methodSel.value === 'grid') || drawn < 1;
  }
  samplesIn.addEventListener('input', recount);
  constraintIn.addEventListener('input', recount);

  const loadParams = async () => {
    spaceBox.replaceChildren(h('legend', null, 'Parameters'), loading('Loading parameters…'));
    let infos: ParamInfo[];
    try {
      infos = await strategyAPI.listParameters(stratSel.value);
    } catch (e) {
      spaceBox.replaceChildren(h('legend', null, 'Parameters'), errorBox(e));
      return;
    }
    rows = infos.filter((i) => ['int', 'float', 'str', 'bool'].includes(i.type)).map((i) => (i.type === 'int' || i.type === 'float' ? numberRow(i, recount) : listRow(i, recount)));
    spaceBox.replaceChildren(
      h('legend', null, 'Parameters'),
      rows.length ? h('p', { class: 'muted small' }, 'A range from one value to the same value holds the parameter fixed.') : h('p', { class: 'muted' }, 'This strategy has no parameters to vary.'),
      ...rows.map((r) => r.el),
    );
    recount();
  };
  stratSel.addEventListener('change', () => void loadParams());

  // The symbol's own stored range (daily bars) is the default period until dates are typed.
  const known = new Map<string, BarRange[]>();
  let datesSet = query.has('start') || query.has('end');
  startIn.addEventListener('input', () => (datesSet = true));
  endIn.addEventListener('input', () => (datesSet = true));
  const followSymbol = () => {
    if (datesSet) return;
    const r = rangeFor(known.get(symbolIn.value.trim().toUpperCase()) ?? known.get(symbolIn.value.trim()));
    if (!r) return;
    startIn.value = r.first.slice(0, 10);
    endIn.value = r.last.slice(0, 10);
  };
  const loadSymbols = async (search: string) => {
    try {
      const list = await data.listSymbols(sourceSel.value, search, 20);
      for (const s of list) known.set(s.symbol, s.ranges ?? []);
      symbolList.replaceChildren(...list.map((s) => h('option', { value: s.symbol }, [s.name ?? '', rangeFor(s.ranges) ? `(${fmtRange(rangeFor(s.ranges)!)})` : ''].filter(Boolean).join(' '))));
      if (!symbolIn.value && list.length && !search) symbolIn.value = query.get('symbol') ?? list[0].symbol;
      followSymbol();
    } catch {
      /* free text still works */
    }
  };
  symbolIn.addEventListener('change', followSymbol);
  let debounce: ReturnType<typeof setTimeout> | undefined;
  symbolIn.addEventListener('input', () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => void loadSymbols(symbolIn.value.trim()), 200);
  });
  sourceSel.addEventListener('change', () => {
    symbolIn.value = '';
    void loadSymbols('');
  });

  const form = h(
    'form',
    { class: 'run-form study-form', novalidate: true, 'aria-describedby': 'study-form-error' },
    h(
      'div',
      { class: 'grid2' },
      field('Strategy', stratSel),
      field('Name', nameIn),
      field('Data source', sourceSel),
      field('Symbol', symbolIn),
      symbolList,
      field('Start date', startIn),
      field('End date', endIn),
      field('Initial cash', cashIn),
      field('Commission', commIn, 'Fraction of the traded value, e.g. 0.001 = 0.1%'),
    ),
    spaceBox,
    h(
      'div',
      { class: 'grid2' },
      field('Constraint', constraintIn, 'A JavaScript expression over p that a combination must satisfy; evaluated in the sandbox'),
      field('Method', methodSel),
      field('Objective', objSel, 'What ranks the combinations'),
      field('Direction', dirSel),
    ),
    randomBox,
    h('label', { class: 'check' }, wfOn, ' Walk-forward analysis: optimise on rolling training windows, test each winner on the window after'),
    wfBox,
    h('p', { class: 'study-count' }, countOut),
    formError,
    h('div', { class: 'actions' }, submit),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    formError.hidden = true;
    const space: Record<string, unknown> = {};
    const fixed: Record<string, unknown> = {};
    for (const r of rows) {
      const v = r.value();
      if (!v) {
        formError.textContent = 'Fix the ranges marked in the parameters.';
        formError.hidden = false;
        return;
      }
      const name = r.el.dataset.param!;
      if ('space' in v) space[name] = v.space;
      else fixed[name] = v.fixed;
    }
    if (!Object.keys(space).length) {
      formError.textContent = 'Give at least one parameter more than one value.';
      formError.hidden = false;
      return;
    }
    const body: StudyRequest = {
      strategy_id: stratSel.value,
      strategy_params: fixed,
      data_source: sourceSel.value,
      symbol: symbolIn.value.trim(),
      start_date: startIn.value,
      end_date: endIn.value,
      initial_cash: Number(cashIn.value),
      commission: Number(commIn.value),
      space: space as StudyRequest['space'],
      method: methodSel.value as 'grid' | 'random' | 'bayes',
      objective: objSel.value,
      direction: dirSel.value as 'max' | 'min',
    };
    if (nameIn.value.trim()) body.name = nameIn.value.trim();
    if (constraintIn.value.trim()) body.constraint = constraintIn.value.trim();
    if (body.method !== 'grid') {
      body.samples = Number(samplesIn.value);
      body.seed = Number(seedIn.value);
    }
    if (wfOn.checked) {
      body.walk_forward = { train: windowOf(trainIn.value), test: windowOf(testIn.value), anchored: anchoredIn.checked };
      if (stepIn.value.trim()) body.walk_forward.step = windowOf(stepIn.value);
    }
    submit.disabled = true;
    try {
      const st = await api.createStudy(body);
      toast(`Started ${st.id}: ${fmtInt(st.total)} combinations.`, 'ok');
      navigate(`/studies/${st.id}`);
    } catch (err) {
      formError.textContent = err instanceof ApiError ? err.message : String(err);
      formError.hidden = false;
      submit.disabled = false;
    }
  });
  box.replaceChildren(head, form);
  await Promise.all([loadParams(), loadSymbols('')]);
}

// ---- a study's page -------------------------------------------------------------------------

export async function studyView(main: HTMLElement, params: Record<string, string>): Promise<Cleanup | void> {
  const sid = params.id;
  main.append(loading('Loading study…'));
  let st: Study;
  try {
    st = await api.getStudy(sid);
  } catch (e) {
    main.replaceChildren(errorBox(e));
    return;
  }
  const badge = h('span', { id: 'study-status' });
  const actions = h('div', { class: 'head-actions' });
  const progress = h('div', { class: 'progress', role: 'progressbar', 'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-label': `Progress of ${sid}`, id: 'study-progress' }, h('div', { class: 'bar' }), h('span', { class: 'pct' }));
  const counts = h('p', { id: 'study-counts', 'aria-live': 'polite' });
  const best = h('p', { id: 'study-best' });
  const boardBox = h('div', { id: 'study-board' }, loading('Loading the leaderboard…'));
  const heatBox = h('div', { id: 'study-heatmap' });
  const overBox = h('div', { id: 'study-overfitting' });
  const surfBox = h('div', { id: 'study-surface' });
  const cpcvBox = h('div', { id: 'study-cpcv' });
  const convBox = h('div', { id: 'study-convergence' });
  const wfBox = st.walk_forward ? h('div', { id: 'study-wf' }) : null;
  const space = Object.entries(st.space ?? {});
  const axes = space.filter(([, v]) => v.length > 1).map(([k]) => k);
  main.replaceChildren(
    h('div', { class: 'page-head' }, h('h1', null, `${sid}${st.name ? ` · ${st.name}` : ''}`), badge, st.lookahead === true ? lookaheadBadge() : null, actions),
    st.lookahead === true ? lookaheadNote('study') : '',
    h(
      'dl',
      { class: 'meta' },
      h('dt', null, 'Strategy'),
      h('dd', null, h('a', { href: href(`/strategies/${st.strategy_id}`) }, st.strategy_id), ` v${st.strategy_version}`),
      h('dt', null, 'Data'),
      h('dd', null, `${(st.symbols ?? []).join(', ')} · ${st.timeframe} · ${st.start_date} → ${st.end_date}`),
      h('dt', null, 'Space'),
      h('dd', null, space.map(([k, v]) => `${k}: ${v.length > 6 ? `${fmtParamValue(v[0])} … ${fmtParamValue(v[v.length - 1])} (${v.length})` : v.map(fmtParamValue).join(', ')}`).join(' · ')),
      h('dt', null, 'Combinations'),
      h('dd', null, `${fmtInt(st.total)}${st.method === 'random' ? ` drawn at random (seed ${st.seed})` : st.method === 'bayes' ? ` proposed by a model of the runs before (bayes, seed ${st.seed})` : ''}${st.excluded ? `, ${fmtInt(st.excluded)} left out by ${st.constraint}` : ''}`),
      h('dt', null, 'Objective'),
      h('dd', null, `${st.objective}, ${st.direction === 'min' ? 'lowest' : 'highest'} is best`),
      ...(st.walk_forward
        ? [
            h('dt', null, 'Walk-forward'),
            h('dd', null, `${fmtInt(st.folds)} folds: train ${fmtWindow(st.walk_forward.train)}${st.walk_forward.anchored ? ' (anchored)' : ''}, test ${fmtWindow(st.walk_forward.test)}${st.walk_forward.step ? `, step ${fmtWindow(st.walk_forward.step)}` : ''}`),
          ]
        : []),
    ),
    progress,
    counts,
    best,
    ...(wfBox ? [h('section', { 'aria-labelledby': 'h-wf' }, h('h2', { id: 'h-wf' }, 'Walk-forward'), wfBox), h('p', { class: 'muted small' }, `The leaderboard, heatmap and statistics below are the last fold's: its in-sample combinations.`)] : []),
    h('section', { 'aria-labelledby': 'h-board' }, h('h2', { id: 'h-board' }, 'Leaderboard'), boardBox),
    h('section', { 'aria-labelledby': 'h-conv' }, h('h2', { id: 'h-conv' }, 'Convergence'), convBox),
    h('section', { 'aria-labelledby': 'h-heat' }, h('h2', { id: 'h-heat' }, 'Heatmap'), heatBox),
    h('section', { 'aria-labelledby': 'h-over' }, h('h2', { id: 'h-over' }, 'Is the winner luck?'), overBox),
    h('section', { 'aria-labelledby': 'h-surface' }, h('h2', { id: 'h-surface' }, 'Around the best'), surfBox),
    h('section', { 'aria-labelledby': 'h-cpcv' }, h('h2', { id: 'h-cpcv' }, 'Purged cross-validation'), cpcvBox),
  );

  const board = leaderboard(sid, st, boardBox);
  const heat = axes.length >= 2 ? heatmap(sid, axes, heatBox) : null;
  const conv = convergence(sid, st, convBox);
  if (!heat) heatBox.append(empty('A heatmap needs two parameters with more than one value.'));

  let finishedShown = false;
  const show = (s: Study) => {
    st = s;
    const ran = s.done + s.failed + (s.cancelled ?? 0);
    const pct = s.total ? (100 * ran) / s.total : 0;
    progress.className = `progress ${s.status}`;
    progress.setAttribute('aria-valuenow', String(Math.round(pct)));
    (progress.querySelector('.bar') as HTMLElement).style.width = `${pct}%`;
    progress.querySelector('.pct')!.textContent = fmtPct(pct, 0);
    badge.replaceChildren(statusBadge(s.status));
    counts.textContent = `${fmtInt(s.done)} of ${fmtInt(s.total)} done${s.failed ? `, ${fmtInt(s.failed)} failed` : ''}${s.cancelled ? `, ${fmtInt(s.cancelled)} cancelled` : ''}.`;
    best.replaceChildren(s.best ? h('span', null, 'Best so far: ', h('strong', null, fmtParams(s.best.params, axes)), ` · ${s.objective} ${fmtNumber(s.best.objective, 4)}`) : '');
    const active = ACTIVE.has(s.status);
    // What the state allows comes from the service (its state machine, docs/task-states.md).
    actions.replaceChildren(
      button(
        s.pinned_at ? 'Unpin' : 'Pin',
        async () => {
          try {
            await api.pinStudy(sid, !s.pinned_at);
            show(await api.getStudy(sid));
          } catch (e) {
            toast((e as Error).message, 'error');
          }
        },
        'btn',
        { id: 'study-pin', 'aria-pressed': s.pinned_at ? 'true' : 'false', title: 'A pinned study is kept by retention whatever its age' },
      ),
      ...(s.can_cancel
        ? [
            button(
              'Cancel',
              async () => {
                if (!(await confirmDialog(`Cancel ${sid}?`, 'Every combination not yet run is cancelled; the results so far stay.', 'Cancel study'))) return;
                try {
                  show(await api.cancelStudy(sid));
                } catch (e) {
                  toast((e as Error).message, 'error');
                }
              },
              'btn danger',
              { id: 'study-cancel' },
            ),
          ]
        : s.can_retry
          ? [
              button(
                'Retry failed',
                async () => {
                  try {
                    show(await api.retryStudy(sid));
                    finishedShown = false;
                  } catch (e) {
                    toast((e as Error).message, 'error');
                  }
                },
                'btn',
                { id: 'study-retry' },
              ),
            ]
          : []),
    );
    board.refresh(active);
    conv.refresh(active);
    if (!active && !finishedShown) {
      finishedShown = true;
      heat?.load();
      void renderOverfitting(sid, overBox);
      void renderSurface(sid, surfBox);
      cpcvForm(sid, st, cpcvBox);
      if (wfBox) void renderWalkForward(sid, wfBox, axes);
    } else if (active) {
      if (!overBox.childElementCount) overBox.append(empty('Shown when the study has finished.'));
      if (!surfBox.childElementCount) surfBox.append(empty('Shown when the study has finished.'));
      if (!cpcvBox.childElementCount) cpcvBox.append(empty('Shown when the study has finished.'));
      if (wfBox && !wfBox.childElementCount) wfBox.append(empty('Shown when the study has finished.'));
      if (s.done && heat && !heat.loaded) heat.load();
    }
  };
  show(st);
  // Progress over the study's socket: the current state on connect, then as it runs.
  const sock = taskSocket(sid, (e) => {
    if (e.event !== 'study' || !e.data) return;
    const p = e.data as Partial<Study> & { study_id?: string };
    show({ ...st, ...p, id: sid } as Study);
  });
  return () => {
    sock.close();
    board.stop();
    conv.stop();
  };
}

/** Parameters as name=value, only those of names when given (the ones the study varies). */
function fmtParams(p: unknown, names?: string[]): string {
  return Object.entries((p ?? {}) as Record<string, unknown>)
    .filter(([k]) => !names || names.includes(k))
    .map(([k, v]) => `${k}=${fmtParamValue(v)}`)
    .join(' ');
}

function leaderboard(sid: string, st: Study, box: HTMLElement): { refresh(active: boolean): void; stop(): void } {
  const limit = 20;
  let sort = '';
  let order: 'asc' | 'desc' | '' = '';
  let skip = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let last = 0;
  const names = Object.keys(st.space ?? {});
  // The objective has its own column: a figure column that is the objective goes.
  const columns = BOARD.filter(([k]) => k !== st.objective);
  const objectiveLabel = objectives().find(([k]) => k === st.objective)?.[1] ?? st.objective ?? 'objective';
  // A walk-forward study runs its folds one after another, and the last fold's board (the one
  // shown when it has finished) is all pending while the first folds run: while it runs, the
  // board follows the newest fold with a finished combination.
  const folds = st.folds ?? 0;
  let running = false;
  let fold = 1;
  const foldNote = h('p', { class: 'muted small', id: 'study-board-fold', hidden: true });
  // Loads can overlap (a refresh while the previous one is slow): only the newest paints, so
  // a page read before the last combinations completed never replaces a later one.
  let loads = 0;
  const load = async () => {
    last = Date.now();
    const mine = ++loads;
    let b;
    let shownFold: number | undefined;
    try {
      if (running && folds > 1) {
        if (fold < folds) {
          const next = await api.results(sid, sort, order, skip, limit, fold + 1);
          if ((next.trials ?? []).some((t) => t.status === 'completed' || t.status === 'failed')) {
            fold++;
            b = next;
          }
        }
        b ??= await api.results(sid, sort, order, skip, limit, fold);
        shownFold = fold;
      } else {
        b = await api.results(sid, sort, order, skip, limit);
      }
    } catch (e) {
      if (mine === loads) box.replaceChildren(errorBox(e));
      return;
    }
    if (mine !== loads) return;
    foldNote.hidden = shownFold === undefined;
    foldNote.textContent = shownFold === undefined ? '' : `Fold ${fmtInt(shownFold)} of ${fmtInt(folds)}, in sample, as it runs.`;
    const trials = b.trials ?? [];
    const focused = document.activeElement?.getAttribute('data-focus-key');
    const sortBtn = (key: string, label: string) => {
      const current = (sort || 'objective') === key;
      return h(
        'th',
        // right-aligned over their right-aligned figures
        { scope: 'col', class: 'num', 'aria-sort': current ? (b.order === 'asc' ? 'ascending' : 'descending') : undefined },
        button(
          label,
          () => {
            order = current ? (b.order === 'asc' ? 'desc' : 'asc') : '';
            sort = key;
            skip = 0;
            void load();
          },
          'btn link small',
          { 'data-focus-key': `sort-${key}`, type: 'button' },
        ),
      );
    };
    const row = (t: StudyTrial, i: number) =>
      h(
        'tr',
        { 'data-idx': String(t.idx), 'data-status': t.status ?? '', 'data-pareto': t.pareto_rank != null ? String(t.pareto_rank) : undefined, class: t.pareto_rank === 1 ? 'pareto-front' : undefined },
        h('td', { class: 'num' }, String(skip + i + 1)),
        names.map((n) => h('td', { class: 'num' }, fmtParamValue((t.params as Record<string, unknown>)?.[n]))),
        h('td', { class: 'num' }, t.status === 'failed' ? h('span', { class: 'neg', title: t.error ?? '' }, 'failed') : t.status === 'completed' ? fmtNumber(t.objective, 4) : h('span', { class: 'muted' }, t.status ?? 'pending')),
        // a combination not yet run has no figures: blank cells, not a row of dashes
        columns.map(([k, , f]) => h('td', { class: 'num' }, t.status === 'completed' ? f((t as Record<string, unknown>)[k]) : '')),
        h('td', { class: 'num' }, t.pareto_rank === 1 ? h('span', { class: 'pareto-mark', title: 'On the Pareto front' }, '◆ 1') : t.pareto_rank != null ? String(t.pareto_rank) : ''),
        h(
          'td',
          null,
          t.status === 'completed'
            ? button(
                'Open as backtest',
                async (e) => {
                  (e.currentTarget as HTMLButtonElement).disabled = true;
                  try {
                    const task = await api.promote(sid, t.idx!);
                    toast(`Started ${task.task_id} with ${fmtParams(t.params)}.`, 'ok');
                    navigate(`/runs/${task.task_id}`);
                  } catch (err) {
                    toast((err as Error).message, 'error');
                    (e.currentTarget as HTMLButtonElement).disabled = false;
                  }
                },
                'btn small',
                { 'data-action': 'promote', 'data-focus-key': `promote-${t.idx}` },
              )
            : '',
        ),
      );
    const pager = h(
      'div',
      { class: 'pager' },
      button('Previous', () => ((skip = Math.max(0, skip - limit)), void load()), 'btn small', { disabled: skip === 0, 'data-focus-key': 'prev' }),
      h('span', { class: 'muted' }, `${fmtInt(skip + 1)}–${fmtInt(skip + trials.length)}`),
      button('Next', () => ((skip += limit), void load()), 'btn small', { disabled: trials.length < limit, 'data-focus-key': 'next' }),
    );
    box.replaceChildren(
      foldNote,
      trials.length
        ? h(
            'div',
            { class: 'table-wrap' },
            h(
              'table',
              { class: 'table', id: 'study-board-table' },
              h('caption', { class: 'sr-only' }, `Combinations of ${sid} by ${b.sort}`),
              h('thead', null, h('tr', null, h('th', { scope: 'col', class: 'num' }, '#'), names.map((n) => h('th', { scope: 'col', class: 'num' }, n)), sortBtn('objective', `${objectiveLabel} (objective)`), columns.map(([k, l]) => sortBtn(k, l)), sortBtn('pareto', 'Pareto rank'), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')))),
              h('tbody', null, trials.map(row)),
            ),
          )
        : empty('No combination has run yet.'),
      trials.length ? pager : '',
      trials.length && b.pareto?.objectives?.length === 2
        ? h(
            'p',
            { class: 'muted small', id: 'study-pareto-note' },
            `◆ marks the Pareto front of ${b.pareto.objectives.map((a) => `${a.metric === 'objective' ? `${objectiveLabel} (objective)` : (BOARD.find(([k]) => k === a.metric)?.[1] ?? a.metric)}, ${a.direction === 'min' ? 'lowest' : 'highest'} best`).join(' against ')}: ${fmtInt(b.pareto.front ?? 0)} combination${b.pareto.front === 1 ? '' : 's'}. ${b.pareto.explanation ?? ''}`,
          )
        : '',
    );
    // A refresh keeps the keyboard where it was.
    if (focused) (box.querySelector(`[data-focus-key="${focused}"]`) as HTMLElement | null)?.focus();
  };
  return {
    // While it runs, at most every 2 s.
    refresh(active) {
      running = active;
      clearTimeout(timer);
      const wait = active ? Math.max(0, 2000 - (Date.now() - last)) : 0;
      timer = setTimeout(() => void load(), wait);
    },
    stop() {
      clearTimeout(timer);
    },
  };
}

/** The convergence chart: the best objective so far per trial, reloaded while the study runs. */
function convergence(sid: string, st: Study, box: HTMLElement): { refresh(active: boolean): void; stop(): void } {
  const label = objectives().find(([k]) => k === st.objective)?.[1] ?? st.objective ?? 'objective';
  const note = h('p', { class: 'muted small', id: 'study-convergence-note' });
  const panel = chartPanel(`${sid}_convergence`, 'Best objective so far per trial', { height: 300 });
  box.append(note, panel.el);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let last = 0;
  let loads = 0; // only the newest of overlapping loads paints
  const load = async () => {
    last = Date.now();
    const mine = ++loads;
    try {
      const c = await api.convergence(sid);
      if (mine !== loads) return;
      panel.el.querySelector('.error-box')?.remove();
      panel.set(convergenceOption(c, label));
      const at = bestReachedAt(c);
      const n = (c.values ?? []).length;
      note.textContent = at
        ? `The best ${label} (${fmtNumber(c.best?.[at - 1], 4)}) was found at trial ${fmtInt(at)} of ${fmtInt(n)}${st.method === 'bayes' ? ', in the order the model proposed them' : ', in plan order'}.`
        : 'No combination has finished yet.';
    } catch (e) {
      if (mine !== loads) return;
      panel.el.querySelector('.error-box')?.remove();
      panel.el.prepend(errorBox(e));
    }
  };
  return {
    // While it runs, at most every 3 s.
    refresh(active) {
      clearTimeout(timer);
      const wait = active ? Math.max(0, 3000 - (Date.now() - last)) : 0;
      timer = setTimeout(() => void load(), wait);
    },
    stop() {
      clearTimeout(timer);
    },
  };
}

// Figures with no sign to speak of: their scale runs from their least to their most.
const UNSIGNED = new Set(['total_trades', 'max_drawdown', 'max_drawdown_pct', 'win_rate']);

/**
 * The heatmap's colour scale centred on 0 (the neutral colour is "no gain"), from −m to m
 * with m the largest size, for a figure with a sign; enough digits that the ends of a
 * narrow range (a Sharpe ratio) read apart.
 */
export function centredScale(vm: Record<string, unknown> | undefined, metric: string): Record<string, unknown> {
  const lo = Number(vm?.min);
  const hi = Number(vm?.max);
  const m = Math.max(Math.abs(lo) || 0, Math.abs(hi) || 0) || 1;
  const ends = UNSIGNED.has(metric) ? {} : { min: -m, max: m };
  const digits = m < 10 ? 3 : m < 1000 ? 2 : 0;
  return { ...(vm ?? {}), ...ends, precision: digits, formatter: (v: unknown) => fmtNumber(Number(v), digits) };
}

function heatmap(sid: string, axes: string[], box: HTMLElement): { load(): void; loaded: boolean } {
  const sel = (name: string, opts: [string, string][], value: string) => h('select', { name, id: `heat-${name}` }, opts.map(([v, l]) => h('option', { value: v, selected: v === value }, l))) as HTMLSelectElement;
  const axisOpts = axes.map((a) => [a, a] as [string, string]);
  const xSel = sel('x', axisOpts, axes[0]);
  const ySel = sel('y', axisOpts, axes[1]);
  const metricSel = sel('metric', [['objective', 'objective'], ...BOARD.map(([k, l]) => [k, l] as [string, string])], 'objective');
  const aggSel = sel('agg', [['best', 'others at the best'], ['max', 'max over others'], ['mean', 'mean over others']], 'best');
  const panel = chartPanel(`${sid}_heatmap`, 'Heatmap of the study', { height: 420 });
  const out = { loaded: false, load };
  let loads = 0; // only the newest of overlapping loads paints
  function load(): void {
    out.loaded = true;
    const mine = ++loads;
    const metric = metricSel.value;
    panel.chart.showLoading({ text: 'Loading…' });
    api.heatmap(sid, xSel.value, ySel.value, metric, aggSel.value).then(
      (cfg: ChartConfig) => {
        if (mine !== loads) return;
        panel.chart.hideLoading();
        panel.el.querySelector('.error-box')?.remove();
        panel.set({
          animation: false,
          // On a phone the title would run past the chart's edges: it wraps to the width.
          title: { text: cfg.title, left: 'center', textStyle: { fontSize: 13, lineHeight: 17, width: Math.max(200, panel.el.clientWidth - 24), overflow: 'break' } },
          tooltip: cfg.tooltip,
          grid: { left: 64, right: 16, top: panel.el.clientWidth < 560 ? 84 : 52, bottom: 96 },
          xAxis: cfg.xAxis,
          yAxis: cfg.yAxis,
          visualMap: centredScale(cfg.visualMap as Record<string, unknown>, metric),
          series: cfg.series,
        });
        panel.el.dataset.metric = metric;
      },
      (e) => {
        if (mine !== loads) return;
        panel.chart.hideLoading();
        panel.el.querySelector('.error-box')?.remove();
        panel.el.prepend(errorBox(e));
      },
    );
  }
  for (const s of [xSel, ySel, metricSel, aggSel]) s.addEventListener('change', load);
  box.append(h('div', { class: 'row heat-controls' }, field('X', xSel), field('Y', ySel), field('Metric', metricSel), field('Other parameters', aggSel)), panel.el);
  return out;
}

// cpcvForm cross-validates choosing the best combination (GET /api/studies/{id}/cpcv) with
// the study's declared validation, or N, k and E the user sets.
function cpcvForm(sid: string, st: Study, box: HTMLElement): void {
  const v = st.validation;
  const num = (name: string, value: number, min: number) => h('input', { type: 'number', name, min: String(min), step: '1', value: String(value) }) as HTMLInputElement;
  const groups = num('groups', v?.groups ?? 6, 2);
  const tests = num('test_groups', v?.test_groups ?? 2, 1);
  const embargo = num('embargo_bars', v?.embargo_bars ?? 0, 0);
  const out = h('div', { id: 'cpcv-out' });
  const run = () => void renderCPCV(sid, Number(groups.value), Number(tests.value), Number(embargo.value), out);
  box.replaceChildren(
    h('p', { class: 'muted small' }, `The bars cut into N groups; each of the C(N, k) splits trains on the groups it does not test, less E bars purged before and embargoed after each test group, chooses the combination that ranks best there and judges it on the k test groups. ${v ? 'The study declares this validation.' : ''}`),
    h('div', { class: 'row cpcv-controls' }, field('Groups (N)', groups), field('Test groups (k)', tests), field('Embargo (bars)', embargo), button('Cross-validate', run, 'btn', { id: 'cpcv-run' })),
    out,
  );
  run();
}

async function renderCPCV(sid: string, groups: number, tests: number, embargo: number, box: HTMLElement): Promise<void> {
  box.replaceChildren(loading('Computing…'));
  let c: CPCV;
  try {
    c = await api.cpcv(sid, groups, tests, embargo);
  } catch (e) {
    box.replaceChildren(errorBox(e));
    return;
  }
  const splits = c.splits ?? [];
  const d = c.distribution;
  const pbo = c.pbo ?? 0;
  const shown = splits.slice(0, 50);
  box.replaceChildren(
    h(
      'p',
      { id: 'cpcv-summary', class: pbo > 0.5 ? 'card finding finding-warning' : 'muted', 'data-pbo': String(pbo), 'data-splits': String(splits.length), 'data-paths': String((c.paths ?? []).length) },
      `PBO ${fmtPctFraction(pbo, 0)} over ${fmtInt(splits.length)} splits, chosen by ${c.selection === 'total_return' ? 'compounded return' : 'Sharpe ratio'}. ` +
        `${fmtInt((c.paths ?? []).length)} out-of-sample paths, Sharpe ratio per bar: mean ${fmtNumber(d?.mean, 4)}, median ${fmtNumber(d?.median, 4)}, from ${fmtNumber(d?.min, 4)} to ${fmtNumber(d?.max, 4)}.`,
    ),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { id: 'cpcv-splits' },
        h('thead', null, h('tr', null, h('th', null, 'Test groups'), h('th', null, 'Chosen'), h('th', { class: 'num' }, 'Sharpe in'), h('th', { class: 'num' }, 'Sharpe out'), h('th', { class: 'num' }, 'Return out'))),
        h(
          'tbody',
          null,
          shown.map((s) =>
            h(
              'tr',
              { 'data-split': String(s.index) },
              h('td', null, (s.test_groups ?? []).map((g) => g + 1).join(', ')),
              h('td', null, `#${c.combinations?.[s.best ?? 0] ?? s.best}`),
              h('td', { class: 'num' }, fmtNumber(s.train_sharpe, 4)),
              h('td', { class: 'num' }, fmtNumber(s.test_sharpe, 4)),
              h('td', { class: 'num' }, fmtPctFraction(s.test_return)),
            ),
          ),
        ),
      ),
    ),
    splits.length > shown.length ? h('p', { class: 'muted small' }, `The first ${shown.length} of ${fmtInt(splits.length)} splits; the API answers all.`) : '',
  );
}

// renderSurface shows the objective at each value of each parameter, the others at the best
// combination's, and whether the best sits on a plateau or a spike.
async function renderSurface(sid: string, box: HTMLElement): Promise<void> {
  box.replaceChildren(loading('Computing…'));
  let s: StudySurface;
  try {
    s = await api.surface(sid);
  } catch (e) {
    box.replaceChildren(errorBox(e));
    return;
  }
  const score = s.plateau == null ? 'no score' : `plateau ${fmtNumber(s.plateau, 2)}`;
  const verdict = s.plateau == null ? 'Not enough neighbours to judge.' : s.spike ? 'On a spike: its neighbours keep under half of its objective.' : 'On a plateau: its neighbours keep most of its objective.';
  box.replaceChildren(
    h('p', { id: 'surface-verdict', class: s.spike ? 'card finding finding-warning' : 'muted' }, `${fmtInt(s.neighbours)} neighbours, ${score}. ${verdict}`),
    ...s.findings.map((f) => h('p', { class: 'muted small', 'data-finding': f.id }, f.detail)),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'surface-table' },
        h('thead', null, h('tr', null, h('th', null, 'Parameter'), h('th', null, `${s.metric} at each value (the others at the best's)`))),
        h(
          'tbody',
          null,
          s.parameters.map((p) =>
            h(
              'tr',
              { 'data-param': p.name },
              h('th', { scope: 'row' }, p.name),
              h(
                'td',
                null,
                p.values.map((v, i) => h('span', { class: i === p.best ? 'surface-cell best' : 'surface-cell' }, `${fmtParamValue(v)}: ${p.objective[i] == null ? '–' : fmtNumber(p.objective[i]!, 4)}`)),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

async function renderOverfitting(sid: string, box: HTMLElement): Promise<void> {
  box.replaceChildren(loading('Computing…'));
  let o: Overfitting;
  try {
    o = await api.overfitting(sid);
  } catch (e) {
    box.replaceChildren(errorBox(e));
    return;
  }
  const stats = o.statistics ?? {};
  const dsr = stats.deflated_sharpe;
  const pbo = stats.pbo;
  const ex = o.explanations ?? {};
  const card = (key: string, label: string, value: string, verdict: string, detail: string, explanation: string | undefined) =>
    h('li', { class: 'card stat-card over-card', 'data-key': key }, h('span', { class: 'label' }, label), h('span', { class: 'value' }, value), h('strong', { class: 'verdict' }, verdict), h('small', { class: 'muted' }, detail), h('p', { class: 'explain' }, explanation ?? ''));
  const items: HTMLElement[] = [];
  if (dsr) {
    items.push(
      card(
        'deflated_sharpe',
        'Deflated Sharpe Ratio',
        fmtPctFraction(dsr.probability),
        (dsr.probability ?? 0) >= 0.95 ? 'Unlikely to be luck' : 'May well be luck',
        `Sharpe ${fmtNumber(dsr.sharpe, 4)} per bar against ${fmtNumber(dsr.expected, 4)} expected from ${fmtInt(dsr.trials)} trials of luck, over ${fmtInt(dsr.periods)} bars`,
        ex.deflated_sharpe,
      ),
    );
  }
  if (pbo) {
    items.push(
      card(
        'pbo',
        'Probability of Backtest Overfitting',
        fmtPctFraction(pbo.probability),
        (pbo.probability ?? 1) < 0.1 ? 'The winner keeps winning' : (pbo.probability ?? 1) < 0.5 ? 'Some overfitting' : 'The ranking is mostly luck',
        `${fmtInt(pbo.splits)} ways of halving ${fmtInt(pbo.blocks)} blocks of ${fmtInt(pbo.periods)} bars, ${fmtInt(pbo.trials)} combinations`,
        ex.pbo,
      ),
    );
  }
  // The distribution of the in-sample winner's out-of-sample rank (1: worst, N: best).
  const ranks = pbo?.ranks ?? [];
  const panel = ranks.length ? chartPanel(`${sid}_pbo_ranks`, 'Out-of-sample rank of the in-sample winner', { height: 240 }) : null;
  box.replaceChildren(
    items.length ? h('ul', { class: 'cards', id: 'overfit-cards' }, items) : empty('Not enough results to judge.'),
    ...(stats.notes ?? []).map((n) => h('p', { class: 'muted small' }, n)),
    panel?.el ?? '',
  );
  panel?.set({
    animation: false,
    tooltip: { trigger: 'axis' },
    grid: { left: 48, right: 16, top: 40, bottom: 32 },
    xAxis: { type: 'category', name: 'rank (1: worst)', nameLocation: 'middle', nameGap: 22, data: ranks.map((_, i) => String(i + 1)) },
    yAxis: { type: 'value', name: 'splits', minInterval: 1 },
    series: [{ type: 'bar', name: 'splits', data: ranks }],
  });
}

/** A walk-forward window: a number of bars or a duration such as 2y. */
function fmtWindow(w: unknown): string {
  return typeof w === 'number' ? `${fmtInt(w)} bars` : String(w ?? '');
}

/** A statistic's value in the page's convention (format.ts), by its definition. */
function statText(key: string, v: unknown): string {
  const def = STAT_DEFS.find((d) => d.key === key);
  return def ? fmtStat(def.format, v) : fmtNumber(v);
}

/** The fold table, the efficiency and the stitched out-of-sample curve. */
async function renderWalkForward(sid: string, box: HTMLElement, axes: string[]): Promise<void> {
  box.replaceChildren(loading('Loading the folds…'));
  let wf: WalkForward;
  try {
    wf = await api.walkForward(sid);
  } catch (e) {
    box.replaceChildren(errorBox(e));
    return;
  }
  const ex = wf.explanations ?? {};
  const eff = wf.efficiency;
  // The server gives no efficiency when the winners' mean in-sample annual return is below
  // 1% (internal/sweep.MinInSampleAnnual): say why instead of a verdict on a ratio of noise.
  const inSample = (wf.folds ?? []).map((f) => f.is_annual_return).filter((v): v is number => typeof v === 'number');
  const isMean = inSample.length ? inSample.reduce((a, b) => a + b, 0) / inSample.length : null;
  const noVerdict =
    isMean === null
      ? 'No verdict yet: no fold has run in sample'
      : isMean < 0
        ? `No verdict: the winners lost ${fmtPctFraction(-isMean)} a year in sample`
        : `No verdict: the winners made ${fmtPctFraction(isMean)} a year in sample, too little (under 1.00%) to divide by`;
  const cards = h(
    'ul',
    { class: 'cards', id: 'wf-cards' },
    h(
      'li',
      { class: 'card stat-card over-card', 'data-key': 'efficiency' },
      h('span', { class: 'label' }, 'Walk-forward efficiency'),
      h('span', { class: 'value' }, fmtRatio(eff)),
      h('strong', { class: 'verdict' }, eff == null ? noVerdict : eff >= 0.5 ? 'Holds up out of sample' : eff > 0 ? 'Weaker out of sample' : 'Does not hold out of sample'),
      h('p', { class: 'explain' }, ex.efficiency ?? ''),
    ),
    h(
      'li',
      { class: 'card stat-card', 'data-key': 'oos_annual_return' },
      h('span', { class: 'label' }, 'Annual return out of sample'),
      h('span', { class: 'value' }, fmtPctFraction(wf.annual_return)),
      h('p', { class: 'explain' }, ex.stitched ?? ''),
    ),
  );
  const pct = (v: unknown) => fmtPctFraction(v);
  const table = h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table data', id: 'wf-folds' },
      h('caption', { class: 'sr-only' }, 'Walk-forward folds'),
      h('thead', null, h('tr', null, ['Fold', 'Train', 'Test', 'Chosen', `In sample (${wf.objective})`, `Out of sample (${wf.objective})`, 'OOS return', 'OOS max DD', 'OOS trades', 'Efficiency'].map((c) => h('th', { scope: 'col' }, c)))),
      h(
        'tbody',
        null,
        (wf.folds ?? []).map((f) =>
          h(
            'tr',
            { 'data-fold': String(f.fold), 'data-status': f.status },
            h('td', null, String(f.fold)),
            // A range may break after its arrow, never inside a date: the table fits at 1440 px.
            h('td', null, h('span', { class: 'nw' }, `${f.train_start?.slice(0, 10)} →`), ' ', h('span', { class: 'nw' }, f.train_end?.slice(0, 10) ?? '')),
            h('td', null, h('span', { class: 'nw' }, `${f.test_start?.slice(0, 10)} →`), ' ', h('span', { class: 'nw' }, f.test_end?.slice(0, 10) ?? '')),
            h('td', null, f.status === 'completed' || f.params ? fmtParams(f.params, axes) : h('span', { class: 'muted' }, f.error ?? f.status)),
            h('td', { class: 'num' }, fmtNumber(f.is_objective, 4)),
            h('td', { class: 'num' }, fmtNumber(f.oos_objective, 4)),
            h('td', { class: 'num' }, pct(f.oos_total_return)),
            h('td', { class: 'num' }, fmtPct(f.oos_max_drawdown_pct)),
            h('td', { class: 'num' }, fmtInt(f.oos_total_trades)),
            h('td', { class: 'num', title: f.efficiency == null && f.status === 'completed' ? 'Not given: the in-sample annual return is under 1.00%' : undefined }, fmtRatio(f.efficiency)),
          ),
        ),
      ),
    ),
  );
  const panel = wf.chart ? chartPanel(`${sid}_walk_forward`, 'Stitched out-of-sample equity', { height: 320 }) : null;
  const stats = (wf.statistics?.groups ?? []).flatMap((g) => g.metrics ?? []);
  box.replaceChildren(
    cards,
    table,
    panel?.el ?? empty('No fold has run out of sample.'),
    stats.length
      ? h('details', { class: 'wf-stats' }, h('summary', null, 'Statistics of the stitched curve'), h('dl', { class: 'meta' }, stats.flatMap((m) => [h('dt', null, m.label ?? m.key ?? ''), h('dd', { 'data-key': m.key ?? '' }, statText(m.key ?? '', m.value))])))
      : '',
  );
  if (panel && wf.chart) panel.set(prepareChartOption(wf.chart, 'equity', { narrow: panel.el.clientWidth < 560 }));
}

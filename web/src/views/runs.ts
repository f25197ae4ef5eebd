// Runs: the backtest form, the live task list, and the task page with its live log.

import { ApiError, backtests, data, strategies as strategyAPI, type BacktestRequest, type DataSource, type ParamInfo, type Strategy, type StrategyVersion, type SymbolInfo, type Task } from '../api';
import { button, clear, confirmDialog, download, empty, errorBox, field, h, id, keepFocus, loading, toast, dateInput } from '../dom';
import { barClock, fmtAgo, fmtBarTime, fmtDateTime, fmtDuration, fmtInt, fmtNumber, fmtParamValue, fmtPct, fmtPctFraction, fmtRatio, fmtRange, fmtTime, rangeFor, signClass, statusClass } from '../format';
import { href, navigate, type Cleanup } from '../router';
import { LEVELS, differingParams, insertLogLine, normLevel } from '../shape';
import { taskSocket, watchTasks, type TaskEvent, type TaskSocket } from '../ws';
import { infosFromParams, paramForm, type ParamForm } from './params';

const ACTIVE = new Set(['pending', 'running']);

/** A log line as the run view shows it: from the logs route or from a live log event. */
interface ShownLine {
  level: string;
  message: string;
  timestamp: number;
  bar?: string | null; // the bar being processed (RFC 3339), when there was one
  attempt?: number;
}

export function progressBar(task: Pick<Task, 'progress' | 'status' | 'task_id'>): HTMLElement {
  const pct = Math.max(0, Math.min(100, Number(task.progress) || 0));
  return h(
    'div',
    { class: `progress ${task.status}`, role: 'progressbar', 'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-valuenow': String(Math.round(pct)), 'aria-label': `Progress of ${task.task_id}` },
    h('div', { class: 'bar', style: { width: `${pct}%` } }),
    h('span', { class: 'pct' }, fmtPct(pct, 0)),
  );
}

function setProgress(el: Element | null, pct: number, status?: string) {
  if (!el) return;
  const p = Math.max(0, Math.min(100, pct));
  el.setAttribute('aria-valuenow', String(Math.round(p)));
  (el.querySelector('.bar') as HTMLElement).style.width = `${p}%`;
  el.querySelector('.pct')!.textContent = fmtPct(p, 0);
  if (status) el.className = `progress ${status}`;
}

export function statusBadge(status: string): HTMLElement {
  return h('span', { class: statusClass(status), 'data-status': status }, status);
}

// lookaheadNote says in words, under a flagged run's or study's title, what the badge means
// (its title shows only on hover, which a phone has not).
export function lookaheadNote(what: 'run' | 'study'): HTMLElement {
  return h('p', { class: 'card lookahead-note', id: 'lookahead-note' }, lookaheadBadge(), ` ${lookaheadWords(what)}${what === 'run' ? ' “Check for look-ahead” lists what it read.' : ''}`);
}

// lookaheadWords is what a look-ahead flag means, the same on a run's page, a study's and
// the runs list.
function lookaheadWords(what: 'run' | 'study'): string {
  return `A look-ahead check found that this ${what}'s strategy version reads bars after the one it decides on: its figures could not have been had in real time.`;
}

// lookaheadLine is a flagged run's row note in the runs list: the badge's meaning in words,
// since its title shows only on hover, which a phone has not.
function lookaheadLine(): HTMLElement {
  return h('p', { class: 'task-lookahead small', 'data-lookahead-note': '' }, lookaheadWords('run'));
}

// lookaheadBadge marks a run whose strategy version a look-ahead check flagged.
export function lookaheadBadge(): HTMLElement {
  return h('span', { class: 'status lookahead-flag', 'data-lookahead': 'true', title: 'A look-ahead check found that this strategy version reads bars after the one it decides on: its figures cannot be had.' }, 'look-ahead');
}

export async function cancelTask(taskID: string): Promise<void> {
  await backtests.cancelTask(taskID);
  toast(`Cancelled ${taskID}.`, 'ok');
}

export async function retryTask(taskID: string): Promise<void> {
  await backtests.retryTask(taskID);
  toast(`Retrying ${taskID}.`, 'ok');
}

/** "bar 120 of 5,000" while it runs; nothing for a run that ended before its first bar. */
function barsLine(t: Task): string {
  if (!t.total_bars) return '';
  const at = t.current_bar ?? 0;
  if (!ACTIVE.has(t.status) && at === 0) return '';
  return `${t.status === 'failed' ? 'stopped at ' : ''}bar ${fmtInt(at)} of ${fmtInt(t.total_bars)}`;
}

function today(): string {
  return new Date().toISOString().slice(0, 10);
}

// ---- the runs page ------------------------------------------------------------------------

export async function runsView(main: HTMLElement, _p: Record<string, string>, query: URLSearchParams): Promise<Cleanup> {
  const formBox = h('div', null, loading('Loading the form…'));
  const listBox = h('div', { id: 'task-list' }, loading('Loading runs…'));
  const compareBtn = h('button', { type: 'button', class: 'btn', disabled: true, id: 'compare-selected' }, 'Compare selected') as HTMLButtonElement;
  main.append(
    h('div', { class: 'page-head' }, h('h1', null, 'Runs')),
    h('div', { class: 'runs-layout' }, h('section', { class: 'run-form-box', 'aria-labelledby': 'h-new' }, h('h2', { id: 'h-new' }, 'New backtest'), formBox), h('section', { 'aria-labelledby': 'h-tasks', class: 'tasks-box' }, h('div', { class: 'section-head' }, h('h2', { id: 'h-tasks' }, 'Tasks'), compareBtn), listBox)),
  );
  void buildRunForm(formBox, query);

  const selected = new Set<string>();
  compareBtn.addEventListener('click', () => navigate(`/compare?ids=${[...selected].join(',')}`));
  // What the list shows: filters, the order and the page; kept while the page is open.
  const q: backtests.TaskQuery = { sort: 'created_at', order: 'desc', skip: 0, limit: PAGE };
  let total = 0;
  // One socket follows every active task's progress; the list is re-read when one ends and,
  // for tasks submitted elsewhere, every few seconds.
  const watched = new Set<string>();
  const watcher = watchTasks((e) => {
    const tid = String(e.data?.task_id ?? '');
    if (!watched.has(tid)) return;
    if (e.event === 'progress' && e.data) {
      const task = tasks.find((x) => x.task_id === tid);
      const row = listBox.querySelector(`[data-task="${tid}"]`);
      if (task) {
        task.progress = Number(e.data.progress);
        if (task.status === 'pending') {
          task.status = 'running';
          row?.setAttribute('data-status', 'running');
          row?.querySelector('.status')?.replaceWith(statusBadge('running'));
        }
      }
      setProgress(row?.querySelector('.progress') ?? null, Number(e.data.progress));
    } else if (e.event === 'complete') {
      watched.delete(tid);
      watcher.forget(tid);
      void refreshSoon();
    }
  });
  let tasks: Task[] = [];
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const refresh = async (): Promise<void> => {
    try {
      const page = await backtests.listTaskPage(q);
      // A page emptied by deletions or a narrower filter: go back to the last one with rows.
      if (!page.tasks.length && page.total > 0 && (q.skip ?? 0) > 0) {
        q.skip = Math.floor((page.total - 1) / PAGE) * PAGE;
        return refreshSoon();
      }
      tasks = page.tasks;
      total = page.total;
      keepFocus(listBox, renderList);
    } catch (e) {
      listBox.replaceChildren(errorBox(e));
    }
    if (!stopped) timer = setTimeout(refresh, 8000);
  };

  const renderList = () => {
    clear(listBox);
    if (!tasks.length) {
      const filtered = q.status || q.strategy_id || q.symbol;
      listBox.append(empty(filtered ? 'No backtest matches these filters.' : 'No backtests yet. Fill in the form to start one.'));
      return;
    }
    compareBtn.disabled = selected.size < 2;
    const differing = differingParams(tasks.map((t) => t.strategy_params as Record<string, unknown> | undefined));
    listBox.append(
      h(
        'ul',
        { class: 'task-list' },
        tasks.map((t) => {
          const check = h('input', { type: 'checkbox', id: `cmp-${t.task_id}`, checked: selected.has(t.task_id), disabled: t.status !== 'completed' || (!selected.has(t.task_id) && selected.size >= 5), 'aria-label': `Select ${t.task_id} for comparison` }) as HTMLInputElement;
          check.addEventListener('change', () => {
            if (check.checked) selected.add(t.task_id);
            else selected.delete(t.task_id);
            keepFocus(listBox, renderList);
          });
          return h(
            'li',
            { class: 'task', 'data-task': t.task_id, 'data-status': t.status },
            h('div', { class: 'task-main' }, check, h('a', { href: href(`/runs/${t.task_id}`), class: 'task-id', 'data-focus': `open-${t.task_id}` }, t.task_id), statusBadge(t.status), t.lookahead === true ? lookaheadBadge() : null, t.pinned_at ? h('span', { class: 'status pinned-flag', 'data-pinned': 'true', title: 'Pinned: retention keeps this run whatever its age' }, 'pinned') : null, h('span', { class: 'muted small', title: t.strategy_id ? `Strategy ${t.strategy_id} v${t.strategy_version}` : undefined }, [strategyName(t), (t.symbols ?? [t.symbol]).join(', ')].filter(Boolean).join(' · ')), h('span', { class: 'muted small hide-sm' }, fmtAgo(t.created_at))),
            paramsLine(t, differing),
            t.lookahead === true ? lookaheadLine() : null,
            t.figures ? figuresLine(t) : progressBar(t),
            t.error ? h('div', { class: 'task-error' }, t.error) : null,
            h('div', { class: 'task-actions' }, taskActions(t, refresh, true, () => (selected.delete(t.task_id), refresh()))),
          );
        }),
      ),
      pager(total, q, () => void refreshSoon()),
    );
    // live progress for active tasks (the server takes up to 100 subscriptions a socket)
    for (const t of tasks) {
      if (ACTIVE.has(t.status) && !watched.has(t.task_id) && watched.size < 100) {
        watched.add(t.task_id);
        watcher.watch(t.task_id);
      }
    }
    for (const tid of watched) {
      if (!tasks.some((t) => t.task_id === tid && ACTIVE.has(t.status))) {
        watched.delete(tid);
        watcher.forget(tid);
      }
    }
  };
  const refreshSoon = (): Promise<void> => {
    clearTimeout(timer);
    return refresh();
  };
  await loadStrategyNames();
  listBox.before(
    listControls(q, strategyNames, () => {
      q.skip = 0;
      void refreshSoon();
    }),
  );
  await refresh();
  return () => {
    stopped = true;
    clearTimeout(timer);
    watcher.close();
  };
}

/** Runs a page of the list shows. */
const PAGE = 20;

const SORTS: [NonNullable<backtests.TaskQuery['sort']>, string][] = [
  ['created_at', 'Created'],
  ['total_return', 'Return'],
  ['max_drawdown', 'Max drawdown'],
  ['sharpe_ratio', 'Sharpe ratio'],
  ['total_trades', 'Trades'],
];

/** The list's filters and order: status, strategy, symbol, sort by, ascending or descending. */
function listControls(q: backtests.TaskQuery, names: Map<string, string>, changed: () => void): HTMLElement {
  const status = h('select', { id: 'runs-status' }, h('option', { value: '' }, 'Any status'), ['pending', 'running', 'completed', 'failed', 'cancelled'].map((s) => h('option', { value: s }, s))) as HTMLSelectElement;
  const strategy = h('select', { id: 'runs-strategy' }, h('option', { value: '' }, 'Any strategy'), [...names].map(([sid, name]) => h('option', { value: sid }, `${name} (${sid})`))) as HTMLSelectElement;
  const symbol = h('input', { type: 'search', id: 'runs-symbol', placeholder: 'Any symbol', autocomplete: 'off', size: 10 }) as HTMLInputElement;
  const sort = h('select', { id: 'runs-sort' }, SORTS.map(([v, l]) => h('option', { value: v }, l))) as HTMLSelectElement;
  const order = h('button', { type: 'button', class: 'btn small', id: 'runs-order' }) as HTMLButtonElement;
  const showOrder = () => {
    const desc = q.order !== 'asc';
    order.textContent = desc ? '↓ Desc' : '↑ Asc';
    order.setAttribute('aria-label', desc ? 'Descending: highest or newest first. Switch to ascending' : 'Ascending: lowest or oldest first. Switch to descending');
  };
  showOrder();
  status.addEventListener('change', () => {
    q.status = status.value || undefined;
    changed();
  });
  strategy.addEventListener('change', () => {
    q.strategy_id = strategy.value || undefined;
    changed();
  });
  let typing: ReturnType<typeof setTimeout> | undefined;
  symbol.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      q.symbol = symbol.value.trim().toUpperCase() || undefined;
      changed();
    }, 300);
  });
  sort.addEventListener('change', () => {
    q.sort = sort.value as backtests.TaskQuery['sort'];
    changed();
  });
  order.addEventListener('click', () => {
    q.order = q.order === 'asc' ? 'desc' : 'asc';
    showOrder();
    changed();
  });
  return h(
    'div',
    { class: 'runs-filters', role: 'group', 'aria-label': 'Filter and sort the runs' },
    field('Status', status),
    field('Strategy', strategy),
    field('Symbol', symbol),
    field('Sort by', sort),
    order,
  );
}

/** A finished run's key figures: return, drawdown, Sharpe, trades and the period. */
function figuresLine(t: Task): HTMLElement {
  const f = t.figures!;
  const cell = (label: string, value: string, cls = '') => h('div', { class: 'fig' }, h('dt', null, label), h('dd', { class: cls }, value));
  return h(
    'dl',
    { class: 'figures' },
    cell('Return', fmtPctFraction(f.total_return), signClass(f.total_return)),
    cell('Max DD', fmtPct(f.max_drawdown_pct)),
    cell('Sharpe', fmtRatio(f.sharpe_ratio)),
    cell('Trades', fmtInt(f.total_trades)),
    cell('Period', `${t.start_date} → ${t.end_date}`),
  );
}

/** The most runs the service counts: a total of this many means this many or more. */
const COUNT_CAP = 10000;

/** "Page 2 of 5 · 93 runs" with the previous and next buttons. */
function pager(total: number, q: backtests.TaskQuery, go: () => void): HTMLElement {
  const capped = total >= COUNT_CAP;
  const pages = Math.max(1, Math.ceil(total / PAGE));
  const at = Math.floor((q.skip ?? 0) / PAGE) + 1;
  const move = (to: number) => () => {
    q.skip = (to - 1) * PAGE;
    go();
  };
  return h(
    'div',
    { class: 'pager', id: 'runs-pager' },
    button('Previous', move(at - 1), 'btn small', { id: 'runs-prev', disabled: at <= 1 }),
    h('span', { id: 'runs-page', 'aria-live': 'polite' }, capped ? `Page ${fmtInt(at)} · ${fmtInt(COUNT_CAP)}+ runs` : `Page ${at} of ${pages} · ${fmtInt(total)} ${total === 1 ? 'run' : 'runs'}`),
    button('Next', move(at + 1), 'btn small', { id: 'runs-next', disabled: !capped && at >= pages }),
  );
}

/** Strategy names by id, for tasks (which carry only the id). */
const strategyNames = new Map<string, string>();
async function loadStrategyNames(): Promise<void> {
  try {
    for (const s of await strategyAPI.listStrategies()) strategyNames.set(s.id, s.name);
  } catch {
    /* ids are shown instead */
  }
}
/** A task's strategy by name (its id until the names are known). */
function strategyName(t: Task): string | undefined {
  return (t.strategy_id && strategyNames.get(t.strategy_id)) || t.strategy_id;
}

/** The run's values of the parameters that differ among the runs shown. */
function paramsLine(t: Task, keys: string[]): HTMLElement | null {
  const p = (t.strategy_params ?? {}) as Record<string, unknown>;
  const own = keys.filter((k) => k in p);
  if (!own.length) return null;
  return h('dl', { class: 'task-params', 'aria-label': 'Parameters that differ among these runs' }, own.map((k) => h('div', { class: 'fig', 'data-param': k }, h('dt', null, k), h('dd', null, fmtParamValue(p[k])))));
}

function strategyLabel(t: Task): string | undefined {
  const name = t.strategy_id ? strategyNames.get(t.strategy_id) : undefined;
  return name ? `${name} (${t.strategy_id})` : t.strategy_id;
}

/** The buttons for what can be done with a task; onDeleted runs after a delete (default: after). */
function taskActions(t: Task, after: () => Promise<void> | void, withResults = true, onDeleted: () => Promise<void> | void = after): HTMLElement[] {
  const out: HTMLElement[] = [];
  // What the state allows comes from the service (its state machine, docs/task-states.md).
  if (t.can_cancel) {
    out.push(
      button('Cancel', async () => {
        if (!(await confirmDialog(`Cancel ${t.task_id}?`, 'The run stops and keeps no result; Retry runs it again later.', 'Cancel the run', 'Keep running'))) return;
        try {
          await cancelTask(t.task_id);
          await after();
        } catch (e) {
          toast((e as Error).message, 'error');
        }
      }, 'btn small', { 'aria-label': `Cancel ${t.task_id}` }),
    );
  }
  if (t.can_retry) {
    out.push(
      button('Retry', async () => {
        try {
          await retryTask(t.task_id);
          await after();
        } catch (e) {
          toast((e as Error).message, 'error');
        }
      }, 'btn small', { 'aria-label': `Retry ${t.task_id}` }),
    );
  }
  out.push(
    button(
      t.pinned_at ? 'Unpin' : 'Pin',
      async () => {
        try {
          await backtests.pinTask(t.task_id, !t.pinned_at);
          toast(t.pinned_at ? `Unpinned ${t.task_id}: retention may delete it once it is old.` : `Pinned ${t.task_id}: retention keeps it.`, 'ok');
          await after();
        } catch (e) {
          toast((e as Error).message, 'error');
        }
      },
      t.pinned_at ? 'btn small pinned' : 'btn small',
      { 'aria-label': `${t.pinned_at ? 'Unpin' : 'Pin'} ${t.task_id}`, 'aria-pressed': t.pinned_at ? 'true' : 'false', title: 'A pinned run is kept by retention whatever its age' },
    ),
  );
  if (withResults && t.status === 'completed') out.push(h('a', { class: 'btn small primary', href: href(`/results/${t.task_id}`), 'aria-label': `Results of ${t.task_id}` }, 'Results'));
  if (t.can_delete) {
    out.push(
      button('Delete', async () => {
        if (!(await confirmDialog(`Delete ${t.task_id}?`, 'The run, its result, trades and log are removed for good.', 'Delete', 'Keep it'))) return;
        try {
          await backtests.deleteTask(t.task_id);
          toast(`Deleted ${t.task_id}.`, 'ok');
          await onDeleted();
        } catch (e) {
          toast((e as Error).message, 'error');
        }
      }, 'btn small danger', { 'aria-label': `Delete ${t.task_id}` }),
    );
  }
  return out;
}

async function buildRunForm(box: HTMLElement, query: URLSearchParams): Promise<void> {
  let strategies: Strategy[];
  let sources: DataSource[];
  try {
    [strategies, sources] = await Promise.all([strategyAPI.listStrategies(), data.listSources()]);
  } catch (e) {
    box.replaceChildren(errorBox(e));
    return;
  }
  if (!strategies.length) {
    box.replaceChildren(empty('Create a strategy first.', h('a', { class: 'btn primary', href: href('/strategies/new') }, 'New strategy')));
    return;
  }
  const want = query.get('strategy');
  const stratSel = h('select', { name: 'strategy_id', required: true }, strategies.map((s) => h('option', { value: s.id, selected: s.id === want }, `${s.name} (${s.id})`))) as HTMLSelectElement;
  const versionSel = h('select', { name: 'strategy_version' }, h('option', { value: '' }, 'Latest')) as HTMLSelectElement;
  const wantSource = sources.some((s) => s.name === query.get('source')) ? query.get('source') : sources[0]?.name;
  const sourceSel = h('select', { name: 'data_source' }, sources.map((s) => h('option', { value: s.name, selected: s.name === wantSource, title: s.description }, s.name))) as HTMLSelectElement;
  const listID = id('symbols');
  const symbolIn = h('input', { type: 'search', name: 'symbol', list: listID, autocomplete: 'off', placeholder: 'Search symbols', required: true }) as HTMLInputElement;
  const symbolList = h('datalist', { id: listID });
  // Several symbols (a portfolio, pairs): each added one is a chip, the feeds in order.
  const chosen: string[] = [];
  const chips = h('ul', { class: 'chips', id: 'symbol-chips', 'aria-label': 'Symbols of the run, in order' });
  const renderChips = () =>
    chips.replaceChildren(
      ...chosen.map((s, i) =>
        h('li', { class: 'chip', 'data-symbol': s }, s, button('×', () => (chosen.splice(i, 1), renderChips()), 'chip-remove', { 'aria-label': `Remove ${s}`, type: 'button' })),
      ),
    );
  const addSymbol = () => {
    const s = symbolIn.value.trim();
    if (s && !chosen.includes(s)) chosen.push(s);
    symbolIn.value = '';
    renderChips();
    symbolIn.focus();
  };
  const addBtn = button('Add', addSymbol, 'btn small', { id: 'add-symbol', type: 'button', title: 'Add the symbol to the run: several symbols are several feeds (this.datas[i])' });
  symbolIn.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && symbolIn.value.trim()) {
      e.preventDefault();
      addSymbol();
    }
  });
  // The label names the search field itself; Add and the chips sit beside it.
  const symbolField = field('Symbols', symbolIn, 'Type to search; Add (or Enter) for several symbols, in order');
  const picker = h('div', { class: 'symbol-picker' });
  symbolField.insertBefore(picker, symbolIn);
  picker.append(h('div', { class: 'row' }, symbolIn, addBtn), chips);
  const tfSel = h('select', { name: 'timeframe', id: 'run-timeframe' }, ['1m', '5m', '15m', '1h', '4h', '1d', '1w', '1M'].map((tf) => h('option', { value: tf, selected: tf === (query.get('timeframe') ?? '1d') }, tf))) as HTMLSelectElement;
  const benchIn = h('input', { type: 'search', name: 'benchmark', id: 'run-benchmark', list: listID, autocomplete: 'off', placeholder: 'The first symbol', value: query.get('benchmark') ?? '' }) as HTMLInputElement;
  const startIn = dateInput({ name: 'start_date', required: true, value: query.get('start') ?? '2020-01-01' });
  const endIn = dateInput({ name: 'end_date', required: true, value: query.get('end') ?? today() });
  const cashIn = h('input', { type: 'number', name: 'initial_cash', min: '0', step: 'any', value: '10000', required: true }) as HTMLInputElement;
  const commIn = h('input', { type: 'number', name: 'commission', min: '0', max: '1', step: 'any', value: '0.001', required: true }) as HTMLInputElement;
  const paramsBox = h('fieldset', { class: 'params-box' }, h('legend', null, 'Parameters'));
  const formError = h('div', { class: 'error-box', role: 'alert', hidden: true });
  const submit = h('button', { type: 'submit', class: 'btn primary' }, 'Run backtest') as HTMLButtonElement;
  let pform: ParamForm | null = null;

  // Dates follow the symbol's own stored range until the user sets them.
  const known = new Map<string, SymbolInfo>();
  let datesSet = query.has('start') || query.has('end');
  startIn.addEventListener('input', () => (datesSet = true));
  endIn.addEventListener('input', () => (datesSet = true));
  const followSymbol = () => {
    if (datesSet) return;
    const r = rangeFor(known.get(chosen[0] ?? symbolIn.value.trim())?.ranges, tfSel.value);
    if (!r) return;
    startIn.value = r.first.slice(0, 10);
    endIn.value = r.last.slice(0, 10);
  };
  const loadSymbols = async (search: string) => {
    try {
      const list = await data.listSymbols(sourceSel.value, search, 20);
      for (const s of list) known.set(s.symbol, s);
      symbolList.replaceChildren(...list.map((s) => h('option', { value: s.symbol }, [s.name ?? '', rangeFor(s.ranges) ? `(${fmtRange(rangeFor(s.ranges)!)})` : ''].filter(Boolean).join(' '))));
      if (!symbolIn.value && list.length && !search) symbolIn.value = query.get('symbol') ?? list[0].symbol;
      followSymbol();
    } catch {
      /* the field still accepts free text */
    }
  };
  symbolIn.addEventListener('change', followSymbol);
  tfSel.addEventListener('change', followSymbol);
  let debounce: ReturnType<typeof setTimeout> | undefined;
  symbolIn.addEventListener('input', () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => void loadSymbols(symbolIn.value.trim()), 200);
  });
  sourceSel.addEventListener('change', () => {
    symbolIn.value = '';
    chosen.length = 0;
    renderChips();
    void loadSymbols('');
  });

  // The parameters of the latest version (with the saved configuration) and every
  // version's own, so the form follows the version chosen.
  let latestInfos: ParamInfo[] = [];
  let versionList: StrategyVersion[] = [];
  const showParams = (infos: ParamInfo[]) => {
    pform = paramForm(infos, { idPrefix: 'rp' });
    paramsBox.replaceChildren(h('legend', null, 'Parameters'), pform.el);
  };
  versionSel.addEventListener('change', () => {
    const v = versionList.find((x) => String(x.version) === versionSel.value);
    showParams(v ? infosFromParams(v.params) : latestInfos);
  });
  const loadStrategy = async () => {
    const sid = stratSel.value;
    paramsBox.replaceChildren(h('legend', null, 'Parameters'), loading('Loading parameters…'));
    versionSel.replaceChildren(h('option', { value: '' }, 'Latest'));
    const [infos, versions] = await Promise.all([
      strategyAPI
        .listParameters(sid)
        .catch(() => infosFromParams(strategies.find((s) => s.id === sid)?.params)),
      strategyAPI.listVersions(sid).catch(() => [] as StrategyVersion[]),
    ]);
    versions.sort((a, b) => b.version - a.version);
    latestInfos = infos;
    versionList = versions;
    versionSel.append(...versions.map((v) => h('option', { value: String(v.version) }, `v${v.version} · ${fmtDateTime(v.created_at)}`)));
    pform = paramForm(infos, { idPrefix: 'rp' });
    const preset = query.get('params');
    if (preset && sid === want) {
      try {
        pform.set(JSON.parse(preset));
      } catch {
        /* ignore a malformed link */
      }
    }
    paramsBox.replaceChildren(h('legend', null, 'Parameters'), pform.el);
  };
  stratSel.addEventListener('change', () => void loadStrategy());

  const form = h(
    'form',
    { class: 'run-form', novalidate: true, 'aria-describedby': 'run-form-error' },
    h('div', { class: 'grid2' }, field('Strategy', stratSel), field('Version', versionSel), field('Data source', sourceSel), symbolField, symbolList, field('Timeframe', tfSel, 'Bars finer than stored are refused; coarser ones are built from them'), field('Benchmark', benchIn, 'Bought and held from the same cash: the dashed equity line, alpha, beta, tracking error. Empty: the first symbol'), field('Start date', startIn), field('End date', endIn), field('Initial cash', cashIn), field('Commission', commIn, 'Fraction of the traded value, e.g. 0.001 = 0.1%')),
    paramsBox,
    formError,
    h('div', { class: 'actions' }, submit),
  );
  formError.id = 'run-form-error';
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    formError.hidden = true;
    const problems: string[] = [];
    symbolIn.required = chosen.length === 0;
    for (const el of [symbolIn, startIn, endIn, cashIn, commIn]) {
      const bad = !el.checkValidity() || (el.required && !el.value.trim());
      el.setAttribute('aria-invalid', String(bad));
      if (bad) problems.push(`${el.closest('.field')?.querySelector('label')?.textContent}: ${el.validationMessage || 'required'}`);
    }
    if (startIn.value && endIn.value && startIn.value > endIn.value) problems.push('Start date must be before the end date');
    const values = pform?.values();
    if (values === null) problems.push('Fix the parameters marked below');
    if (problems.length) {
      formError.textContent = problems.join('. ');
      formError.hidden = false;
      return;
    }
    const body: BacktestRequest = {
      strategy_id: stratSel.value,
      strategy_params: values ?? {},
      data_source: sourceSel.value,
      start_date: startIn.value,
      end_date: endIn.value,
      initial_cash: Number(cashIn.value),
      commission: Number(commIn.value),
    };
    const symbols = [...chosen];
    const typed = symbolIn.value.trim();
    if (typed && !symbols.includes(typed)) symbols.push(typed);
    if (symbols.length > 1) body.symbols = symbols;
    else body.symbol = symbols[0];
    if (tfSel.value !== '1d') body.timeframe = tfSel.value as BacktestRequest['timeframe'];
    if (benchIn.value.trim()) body.benchmark = benchIn.value.trim();
    if (versionSel.value) body.strategy_version = Number(versionSel.value);
    submit.disabled = true;
    try {
      const t = await backtests.createTask(body);
      if (body.strategy_version && t.strategy_version && t.strategy_version !== body.strategy_version) {
        toast(`The service ran the current version v${t.strategy_version}: it cannot run an older version yet.`, 'error');
      } else {
        toast(`Started ${t.task_id}.`, 'ok');
      }
      navigate(`/runs/${t.task_id}`);
    } catch (err) {
      formError.textContent = err instanceof ApiError ? err.message : String(err);
      formError.hidden = false;
    } finally {
      submit.disabled = false;
    }
  });
  box.replaceChildren(form);
  await Promise.all([loadStrategy(), loadSymbols('').then(() => (symbolIn.value && !known.has(symbolIn.value) ? loadSymbols(symbolIn.value) : undefined))]);
}

// ---- the task page --------------------------------------------------------------------------

export async function taskView(main: HTMLElement, params: Record<string, string>): Promise<Cleanup | void> {
  const tid = params.task;
  main.append(loading());
  let task: Task;
  try {
    task = await backtests.getTask(tid);
  } catch (e) {
    main.replaceChildren(errorBox(e), h('p', null, h('a', { href: href('/runs') }, 'Back to runs')));
    return;
  }
  await loadStrategyNames();
  main.replaceChildren();
  const head = h('div', { class: 'page-head' });
  const meta = h('dl', { class: 'meta' });
  const bar = progressBar(task);
  const barsText = h('span', { class: 'muted small', id: 'bars-text' });
  const actions = h('div', { class: 'actions' });
  const errorEl = h('div', { class: 'error-box', role: 'alert', hidden: true });
  const renderHead = () => {
    head.replaceChildren(h('h1', null, `Run ${task.task_id}`), statusBadge(task.status));
    setProgress(bar, task.progress, task.status);
    barsText.textContent = barsLine(task);
    renderMeta();
    actions.replaceChildren(...taskActions(task, reload, false, () => navigate('/runs')), ...(ACTIVE.has(task.status) ? [] : [button('Run with the latest code', () => void rerunLatest(), 'btn small', { id: 'rerun-latest', title: "A new run of the strategy's current version with this run's settings" })]));
    errorEl.hidden = !task.error;
    errorEl.textContent = task.error ?? '';
  };
  // Retry runs the same version again; this runs the strategy as it is now, same settings.
  const rerunLatest = async () => {
    try {
      // The values this run took (defaults included) that the current version still declares:
      // a parameter the code has dropped since is left out rather than refused.
      const declared = new Set(Object.keys((await strategyAPI.getStrategy(task.strategy_id!)).params ?? {}));
      const kept = Object.fromEntries(Object.entries((task.strategy_params ?? {}) as Record<string, unknown>).filter(([k]) => declared.has(k)));
      const again = await backtests.createTask({
        strategy_id: task.strategy_id!, strategy_params: kept, data_source: task.data_source, symbols: task.symbols ?? (task.symbol ? [task.symbol] : undefined),
        timeframe: task.timeframe as BacktestRequest['timeframe'], benchmark: task.benchmark, start_date: task.start_date!, end_date: task.end_date!, initial_cash: task.initial_cash, commission: task.commission,
      });
      toast(`Started ${again.task_id} with the latest code.`, 'ok');
      navigate(`/runs/${again.task_id}`);
    } catch (e) {
      toast((e as Error).message, 'error');
    }
  };
  const renderMeta = () => {
    const cur = task.attempts?.find((a) => a.attempt === task.attempt);
    // Runs of this attempt whose worker was lost (died, froze, lost the database): each ran again elsewhere.
    const lost = cur?.interruptions?.length
      ? cur.interruptions.map((i) => `worker ${i.worker} stopped responding at ${fmtDateTime(i.last_heartbeat)}`).join('; ') + ' — ran again on another worker'
      : undefined;
    const m: [string, unknown][] = [
      ['Strategy', strategyLabel(task)],
      ['Version', task.strategy_version ? `v${task.strategy_version}` : undefined],
      ['Data', [task.data_source, (task.symbols ?? [task.symbol]).join(', ')].filter(Boolean).join(' / ') + (task.timeframe && task.timeframe !== '1d' ? ` · ${task.timeframe}` : '')],
      ['Benchmark', task.benchmark ?? task.symbol],
      ['Time zone', task.timezone && task.timezone !== 'UTC' ? `${task.timezone} (bar times are shown in it)` : undefined],
      ['Period', task.start_date ? `${task.start_date} → ${task.end_date}` : undefined],
      ['Parameters', task.strategy_params && Object.keys(task.strategy_params).length ? Object.entries(task.strategy_params).map(([k, v]) => `${k}=${fmtParamValue(v)}`).join(', ') : undefined],
      ['Attempt', task.attempt],
      ['Worker', cur?.worker ?? undefined],
      ['Interrupted', lost],
      ['Created', fmtDateTime(task.created_at)],
      ['Submitted by', task.created_by ?? undefined],
      ['Duration', task.started_at ? fmtDuration(task.started_at, task.completed_at ?? new Date().toISOString()) : undefined],
    ];
    meta.replaceChildren(...m.filter(([, v]) => v !== undefined && v !== '' && v !== null).flatMap(([k, v]) => [h('dt', null, k), h('dd', null, String(v))]));
  };
  const reload = async () => {
    try {
      task = await backtests.getTask(tid);
      renderHead();
      if (ACTIVE.has(task.status) && !sock) openSocket();
    } catch (e) {
      toast((e as Error).message, 'error');
    }
  };

  // ---- log panel ----
  const enabled = new Set<string>(LEVELS);
  let term = ''; // the search, lower case
  const visible = (l: ShownLine) => enabled.has(normLevel(l.level)) && (!term || l.message.toLowerCase().includes(term));
  const lines: ShownLine[] = [];
  const seen = new Set<string>();
  const logBox = h('div', { class: 'log', id: 'log', tabindex: '0', role: 'log', 'aria-label': 'Task log', 'aria-live': 'off' });
  const count = h('span', { class: 'muted small', id: 'log-count' });
  let follow = true;
  const jump = button('Jump to latest ↓', () => {
    follow = true;
    logBox.scrollTop = logBox.scrollHeight;
    jump.hidden = true;
  }, 'btn small jump');
  jump.hidden = true;
  logBox.addEventListener('scroll', () => {
    const atBottom = logBox.scrollHeight - logBox.scrollTop - logBox.clientHeight < 24;
    follow = atBottom;
    jump.hidden = atBottom;
    logBox.dataset.follow = String(follow);
  });
  // A line shows the bar it was logged at (the wall-clock time on hover), or the wall-clock
  // time when it came outside a bar.
  const lineEl = (l: ShownLine) => {
    const lv = normLevel(l.level);
    const when = l.bar
      ? h('time', { datetime: l.bar, title: `logged at ${fmtTime(l.timestamp)}`, class: 'bar-time' }, fmtBarTime(l.bar, barClock(task)))
      : h('time', { title: 'wall-clock time' }, fmtTime(l.timestamp));
    return h('div', { class: `ll lv-${lv}`, 'data-level': lv }, when, h('span', { class: 'lv' }, lv), h('span', { class: 'msg' }, l.message));
  };
  // The lines to show, with a separator where a retried attempt's lines begin.
  const shownEls = (ls: ShownLine[], prevAttempt: number | undefined) => {
    const out: HTMLElement[] = [];
    let prev = prevAttempt;
    for (const l of ls) {
      if (!visible(l)) continue;
      if (l.attempt !== undefined && prev !== undefined && l.attempt !== prev) {
        out.push(h('div', { class: 'attempt-sep', role: 'separator' }, `attempt ${l.attempt}`));
      }
      if (l.attempt !== undefined) prev = l.attempt;
      out.push(lineEl(l));
    }
    return out;
  };
  const lastShownAttempt = () => {
    for (let i = lines.length - 1; i >= 0; i--) if (visible(lines[i]) && lines[i].attempt !== undefined) return lines[i].attempt;
    return undefined;
  };
  const updateCount = () => {
    const shown = lines.filter(visible).length;
    count.textContent = `${shown} of ${lines.length} lines`;
  };
  const addLines = (ls: ShownLine[]) => {
    const frag = document.createDocumentFragment();
    const fresh: ShownLine[] = [];
    const before = lastShownAttempt();
    let inside = false; // a line landed before lines already shown: draw them all again
    for (const l of ls) {
      const key = `${l.timestamp}|${l.level}|${l.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (insertLogLine(lines, l) < lines.length - 1) inside = true;
      fresh.push(l);
    }
    if (inside) return rerender();
    frag.append(...shownEls(fresh, before));
    if (!frag.childNodes.length) return updateCount();
    logBox.querySelector('.empty-log')?.remove();
    logBox.appendChild(frag);
    updateCount();
    if (follow) logBox.scrollTop = logBox.scrollHeight;
  };
  const rerender = () => {
    logBox.replaceChildren(...shownEls(lines, undefined));
    if (!logBox.childNodes.length) logBox.append(h('p', { class: 'empty-log muted' }, lines.length ? (term ? 'No line matches the search at the selected levels.' : 'No lines at the selected levels.') : 'No log lines yet.'));
    updateCount();
    if (follow) logBox.scrollTop = logBox.scrollHeight;
  };
  const filters = h(
    'fieldset',
    { class: 'level-filter' },
    h('legend', { class: 'sr-only' }, 'Log levels'),
    LEVELS.map((lv) => {
      const cb = h('input', { type: 'checkbox', checked: true, id: `lv-${lv}`, 'data-level': lv }) as HTMLInputElement;
      cb.addEventListener('change', () => {
        if (cb.checked) enabled.add(lv);
        else enabled.delete(lv);
        rerender();
      });
      return h('label', { class: `lvl lv-${lv}`, for: cb.id }, cb, lv);
    }),
  );

  // Search within the lines, and the whole log as a text file.
  const searchIn = h('input', { type: 'search', id: 'log-search', placeholder: 'Search the log', 'aria-label': 'Search the log', autocomplete: 'off' }) as HTMLInputElement;
  let searchTimer: ReturnType<typeof setTimeout> | undefined;
  searchIn.addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      term = searchIn.value.trim().toLowerCase();
      rerender();
    }, 150);
  });
  const downloadBtn = button('Download', () => void downloadLog(), 'btn small', { id: 'log-download', title: 'The whole log of every attempt as a text file' });
  const downloadLog = async () => {
    try {
      const all = await backtests.allTaskLogs(tid);
      const text = all.map((l) => [l.attempt !== undefined ? `#${l.attempt}` : '', l.bar_time ?? '', new Date(Number(l.timestamp) * 1000).toISOString(), normLevel(l.level), l.message].join('\t')).join('\n');
      download(`${tid}.log`, `attempt\tbar\ttime\tlevel\tmessage\n${text}\n`, 'text/plain');
    } catch (e) {
      toast((e as Error).message, 'error');
    }
  };

  const resultsLink = h('div', { class: 'results-link' });
  main.append(
    head,
    h('div', { class: 'task-top' }, h('div', { class: 'progress-wrap' }, bar, barsText), actions),
    errorEl,
    resultsLink,
    h('details', { class: 'meta-box', open: true }, h('summary', null, 'Details'), meta),
    h('section', { class: 'log-section', 'aria-labelledby': 'h-log' }, h('div', { class: 'section-head' }, h('h2', { id: 'h-log' }, 'Log'), filters, h('div', { class: 'log-tools' }, searchIn, downloadBtn), count, h('span', { class: 'conn muted small', id: 'ws-state' })), h('div', { class: 'log-wrap' }, logBox, jump)),
  );
  const showResultsLink = () => {
    resultsLink.replaceChildren(task.status === 'completed' ? h('a', { class: 'btn primary', href: href(`/results/${task.task_id}`), id: 'view-results' }, 'View results →') : '');
  };
  renderHead();
  showResultsLink();
  rerender();

  let sock: TaskSocket | null = null;
  const wsState = main.querySelector('#ws-state')!;
  const onEvent = (e: TaskEvent) => {
    const d = e.data ?? {};
    if (e.event === 'progress') {
      task.progress = Number(d.progress) || 0;
      task.current_bar = Number(d.current_bar) || 0;
      task.total_bars = Number(d.total_bars) || task.total_bars;
      if (task.status === 'pending') task.status = 'running';
      setProgress(bar, task.progress, task.status);
      barsText.textContent = barsLine(task);
      head.querySelector('.status')?.replaceWith(statusBadge(task.status));
    } else if (e.event === 'log') {
      addLines([{ level: String(d.level ?? 'INFO'), message: String(d.message ?? ''), timestamp: d.timestamp as number, bar: (d.bar_time as string) ?? null, attempt: task.attempt }]);
    } else if (e.event === 'complete') {
      void reload().then(() => {
        showResultsLink();
        if (!ACTIVE.has(task.status)) {
          sock?.close();
          sock = null;
          wsState.textContent = '';
        }
        void fetchLogs();
      });
    }
  };
  const openSocket = () => {
    let opened = false;
    sock = taskSocket(tid, onEvent, (c) => {
      wsState.textContent = c ? '● live' : '○ reconnecting…';
      // Back after a lost connection (the API restarted, the network dropped): what was
      // published meanwhile is gone, so catch up from what is stored — now, and once more
      // a second later: a worker stores log lines every 250 ms but publishes them sooner,
      // so lines published before this socket subscribed may be stored only after the
      // first fetch.
      if (c && opened) {
        const catchUp = () =>
          void reload().then(() => {
            showResultsLink();
            void fetchLogs();
          });
        catchUp();
        setTimeout(catchUp, 1000);
      }
      opened ||= c;
    });
  };
  const fetchLogs = async () => {
    try {
      const ls = (await backtests.taskLogs(tid, 10000)).map((l): ShownLine => ({ level: l.level, message: l.message, timestamp: l.timestamp, bar: l.bar_time, attempt: l.attempt }));
      addLines(ls);
      if (!lines.length) rerender();
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) toast((e as Error).message, 'error');
    }
  };
  if (ACTIVE.has(task.status)) openSocket();
  await fetchLogs();
  // keep the duration fresh while running
  const tick = setInterval(() => ACTIVE.has(task.status) && renderMeta(), 1000);
  return () => {
    clearInterval(tick);
    sock?.close();
  };
}

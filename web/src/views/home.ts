// The start page: the newest runs and studies (what people come back for), with the ways to
// start new ones.

import { backtests, strategies as strategyAPI, studies as studyAPI, type Study, type Task } from '../api';
import { empty, errorBox, h, loading } from '../dom';
import { fmtAgo, fmtInt, fmtPctFraction, fmtRatio, signClass } from '../format';
import { href } from '../router';
import { statusBadge } from './runs';

const RECENT = 8;

export async function homeView(main: HTMLElement): Promise<void> {
  const runsBox = h('div', { id: 'recent-runs' }, loading('Loading runs…'));
  const studiesBox = h('div', { id: 'recent-studies' }, loading('Loading studies…'));
  main.append(
    h(
      'div',
      { class: 'page-head' },
      h('h1', null, 'Recent work'),
      h('div', { class: 'head-actions' }, h('a', { class: 'btn primary', href: href('/runs') }, 'New backtest'), h('a', { class: 'btn', href: href('/studies') }, 'New study'), h('a', { class: 'btn', href: href('/strategies') }, 'Strategies')),
    ),
    h('section', { 'aria-labelledby': 'h-recent-runs' }, h('div', { class: 'section-head' }, h('h2', { id: 'h-recent-runs' }, 'Recent runs'), h('a', { href: href('/runs') }, 'All runs →')), runsBox),
    h('section', { 'aria-labelledby': 'h-recent-studies' }, h('div', { class: 'section-head' }, h('h2', { id: 'h-recent-studies' }, 'Recent studies'), h('a', { href: href('/studies') }, 'All studies →')), studiesBox),
  );
  const names = new Map<string, string>();
  const named = strategyAPI.listStrategies().then(
    (list) => list.forEach((s) => names.set(s.id, s.name)),
    () => undefined,
  );
  const strategyName = (id?: string | null) => (id && names.get(id)) || id || '';

  const [page, studyList] = await Promise.all([
    backtests.listTaskPage({ sort: 'created_at', order: 'desc', limit: RECENT }).catch((e: unknown) => e as Error),
    studyAPI.listStudies().catch((e: unknown) => e as Error),
    named,
  ]);

  if (page instanceof Error) runsBox.replaceChildren(errorBox(page));
  else if (!page.tasks.length) runsBox.replaceChildren(empty('No backtests yet.', h('a', { class: 'btn primary', href: href('/runs') }, 'Start a backtest')));
  else runsBox.replaceChildren(runsTable(page.tasks, strategyName));

  if (studyList instanceof Error) studiesBox.replaceChildren(errorBox(studyList));
  else if (!studyList.length) studiesBox.replaceChildren(empty('No studies yet.', h('a', { class: 'btn', href: href('/studies') }, 'Start a study')));
  else {
    const newest = [...studyList].sort((a, b) => String(b.created_at ?? '').localeCompare(String(a.created_at ?? ''))).slice(0, RECENT);
    studiesBox.replaceChildren(studiesTable(newest, strategyName));
  }
}

// recentTable is the one shape of the start page's two lists: a caption for screen readers,
// column heads (numeric ones right-aligned) and one row per item.
function recentTable(caption: string, heads: [string, boolean?][], rows: HTMLElement[]): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table recent-table' },
      h('caption', { class: 'sr-only' }, caption),
      h('thead', null, h('tr', null, heads.map(([label, num]) => h('th', { scope: 'col', class: num ? 'num' : undefined }, label)))),
      h('tbody', null, rows),
    ),
  );
}

function runsTable(tasks: Task[], strategyName: (id?: string | null) => string): HTMLElement {
  return recentTable(
    'The newest runs',
    [['Run'], ['Status'], ['Strategy'], ['Symbol'], ['Return', true], ['Sharpe', true], ['Created']],
    tasks.map((t) =>
      h(
        'tr',
        { 'data-task': t.task_id },
        h('td', null, h('a', { href: href(t.status === 'completed' ? `/results/${t.task_id}` : `/runs/${t.task_id}`) }, t.task_id)),
        h('td', null, statusBadge(t.status)),
        h('td', null, strategyName(t.strategy_id)),
        h('td', null, (t.symbols ?? [t.symbol]).join(', ')),
        h('td', { class: `num ${signClass(t.figures?.total_return)}` }, fmtPctFraction(t.figures?.total_return)),
        h('td', { class: 'num' }, fmtRatio(t.figures?.sharpe_ratio)),
        h('td', { class: 'muted' }, fmtAgo(t.created_at)),
      ),
    ),
  );
}

function studiesTable(list: Study[], strategyName: (id?: string | null) => string): HTMLElement {
  return recentTable(
    'The newest studies',
    [['Study'], ['Status'], ['Strategy'], ['Objective'], ['Done', true], ['Created']],
    list.map((s) =>
      h(
        'tr',
        { 'data-study': s.id },
        h('td', null, h('a', { href: href(`/studies/${s.id}`) }, s.name || s.id)),
        h('td', null, statusBadge(s.status)),
        h('td', null, strategyName(s.strategy_id)),
        h('td', null, s.objective ?? ''),
        h('td', { class: 'num' }, `${fmtInt(s.done)} of ${fmtInt(s.total)}`),
        h('td', { class: 'muted' }, fmtAgo(s.created_at)),
      ),
    ),
  );
}

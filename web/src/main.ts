import './style.css';
import { route, startRouter, onRouteChange, href } from './router';
import { leave } from './lifecycle';
import type { View } from './router';

// Pages load on demand: the editor (CodeMirror) and the charts (ECharts) only where used.
const lazy =
  <M>(load: () => Promise<M>, pick: (m: M) => View): View =>
  async (main, params, query) =>
    pick(await load())(main, params, query);
const strategies = () => import('./views/strategies');
const runs = () => import('./views/runs');
const results = () => import('./views/results');
const compare = () => import('./views/compare');
const data = () => import('./views/data');

// Links in the static shell are written for /ui/; rewrite them for a BASE_PATH prefix.
for (const a of document.querySelectorAll<HTMLAnchorElement>('a[data-link]')) {
  a.setAttribute('href', href(a.getAttribute('href')!.replace(/^\/ui/, '') || '/'));
}

const wrap =
  (v: View): View =>
  (main, params, query) => {
    leave();
    return v(main, params, query);
  };

route('/', wrap(lazy(strategies, (m) => m.strategiesView)));
route('/strategies', wrap(lazy(strategies, (m) => m.strategiesView)));
route('/strategies/new', wrap(lazy(strategies, (m) => (main, _p, q) => m.strategyView(main, { id: '' }, q))));
route('/strategies/:id', wrap(lazy(strategies, (m) => m.strategyView)));
route('/runs', wrap(lazy(runs, (m) => m.runsView)));
route('/runs/:task', wrap(lazy(runs, (m) => m.taskView)));
route('/results/:task', wrap(lazy(results, (m) => m.resultView)));
route('/compare', wrap(lazy(compare, (m) => m.compareView)));
route('/data', wrap(lazy(data, (m) => m.dataView)));
route('/data/:source/:symbol', wrap(lazy(data, (m) => m.symbolView)));

const nav = document.getElementById('nav')!;
const toggle = document.querySelector<HTMLButtonElement>('.menu-toggle')!;
toggle.addEventListener('click', () => {
  const open = nav.classList.toggle('open');
  toggle.setAttribute('aria-expanded', String(open));
});

onRouteChange((path) => {
  const section = '/' + (path.split('/')[1] || 'strategies');
  const current = section === '/results' ? '/runs' : section;
  for (const a of nav.querySelectorAll('a')) {
    const target = a.getAttribute('href')!.replace(/^.*\/ui/, '');
    if (target === current) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  nav.classList.remove('open');
  toggle.setAttribute('aria-expanded', 'false');
  const titles: Record<string, string> = { '/strategies': 'Strategies', '/runs': 'Runs', '/compare': 'Compare', '/data': 'Data' };
  document.title = `${titles[current] ?? 'backtestd'} · backtestd`;
});

startRouter();

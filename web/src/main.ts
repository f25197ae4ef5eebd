import './style.css';
import { route, startRouter, onRouteChange, href } from './router';
import { disposeCharts } from './charts';
import { strategiesView, strategyView } from './views/strategies';
import { runsView, taskView } from './views/runs';
import { resultView } from './views/results';
import { compareView } from './views/compare';
import { dataView, symbolView } from './views/data';

// Links in the static shell are written for /ui/; rewrite them for a BASE_PATH prefix.
for (const a of document.querySelectorAll<HTMLAnchorElement>('a[data-link]')) {
  a.setAttribute('href', href(a.getAttribute('href')!.replace(/^\/ui/, '') || '/'));
}

const wrap =
  (v: Parameters<typeof route>[1]): Parameters<typeof route>[1] =>
  (main, params, query) => {
    disposeCharts();
    return v(main, params, query);
  };

route('/', wrap(strategiesView));
route('/strategies', wrap(strategiesView));
route('/strategies/new', wrap((m, _p, q) => strategyView(m, { id: '' }, q)));
route('/strategies/:id', wrap(strategyView));
route('/runs', wrap(runsView));
route('/runs/:task', wrap(taskView));
route('/results/:task', wrap(resultView));
route('/compare', wrap(compareView));
route('/data', wrap(dataView));
route('/data/:source/:symbol', wrap(symbolView));

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

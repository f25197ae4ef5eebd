import './style.css';
import { route, startRouter, onRouteChange, href, appPath } from './router';
import { leave } from './lifecycle';
import type { View } from './router';
import { accounts, ApiError, apiURL, whenUnauthenticated } from './api';
import { accountView, loginView, onIdentity, setIdentity, toLogin } from './views/account';
import { field, h } from './dom';
import { applySettings, loadSettings, saveSettings, type Settings } from './settings';

// Colours and theme before anything is drawn.
applySettings();
if (typeof matchMedia === 'function') matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => loadSettings().theme === 'system' && saveSettings(loadSettings()));

// Pages load on demand: the editor (CodeMirror) and the charts (ECharts) only where used.
const lazy =
  <M>(load: () => Promise<M>, pick: (m: M) => View): View =>
  async (main, params, query) =>
    pick(await load())(main, params, query);
const strategies = () => import('./views/strategies');
const runs = () => import('./views/runs');
const results = () => import('./views/results');
const compare = () => import('./views/compare');
const provenance = () => import('./views/provenance');
const data = () => import('./views/data');
const studies = () => import('./views/studies');
const home = () => import('./views/home');

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

route('/', wrap(lazy(home, (m) => m.homeView)));
route('/strategies', wrap(lazy(strategies, (m) => m.strategiesView)));
route('/strategies/new', wrap(lazy(strategies, (m) => (main, _p, q) => m.strategyView(main, { id: '' }, q))));
route('/strategies/:id', wrap(lazy(strategies, (m) => m.strategyView)));
route('/runs', wrap(lazy(runs, (m) => m.runsView)));
route('/runs/:task', wrap(lazy(runs, (m) => m.taskView)));
route('/results/:task', wrap(lazy(results, (m) => m.resultView)));
route('/studies', wrap(lazy(studies, (m) => m.studiesView)));
route('/studies/:id', wrap(lazy(studies, (m) => m.studyView)));
route('/compare', wrap(lazy(compare, (m) => m.compareView)));
route('/diff', wrap(lazy(provenance, (m) => m.diffView)));
route('/data', wrap(lazy(data, (m) => m.dataView)));
route('/data/:source/:symbol', wrap(lazy(data, (m) => m.symbolView)));
route('/login', wrap(loginView));
route('/account', wrap(accountView));

// The header names who is signed in (team mode) with the way to their account and out.
const who = document.getElementById('who')!;
onIdentity((m) => {
  // Signed out in team mode the page is only the sign-in form: no navigation to pages that
  // would each answer 401.
  document.body.classList.toggle('signed-out', !m);
  if (m?.accounts) remember(true);
  else if (!m) remember(false);
  if (!m || !m.accounts) {
    who.hidden = true;
    who.replaceChildren();
    return;
  }
  who.hidden = false;
  who.replaceChildren(
    h('a', { href: href('/account'), 'data-link': '', id: 'who-user', title: `Signed in as ${m.user} (${m.role})` }, `${m.user} · ${m.role}`),
    h(
      'button',
      {
        class: 'btn small ghost',
        type: 'button',
        id: 'sign-out',
        onclick: async () => {
          try {
            await accounts.logout();
          } finally {
            toLogin('/');
          }
        },
      },
      'Sign out',
    ),
  );
});
// Any 401 (never signed in, session ended, user disabled) leads to sign-in.
whenUnauthenticated((path) => {
  if (path !== '/api/auth/login') toLogin(appPath() + window.location.search);
});

// Display settings: the colour of gains and losses, and the theme; kept in this browser.
{
  const s = loadSettings();
  const select = (name: keyof Settings, options: [string, string][], current: string) => {
    const el = h('select', { id: `display-${name}` }, options.map(([v, label]) => h('option', { value: v, selected: v === current }, label))) as HTMLSelectElement;
    el.addEventListener('change', () => saveSettings({ ...loadSettings(), [name]: el.value }));
    return el;
  };
  document.getElementById('display-panel')!.append(
    field('Gains and rising prices', select('updown', [['green-up', 'Green (losses red)'], ['red-up', 'Red (losses green)']], s.updown), 'Red for up is the convention of several Asian markets.'),
    field('Theme', select('theme', [['system', 'As the system'], ['light', 'Light'], ['dark', 'Dark']], s.theme)),
  );
  const box = document.getElementById('display') as HTMLDetailsElement;
  document.addEventListener('click', (e) => box.open && !box.contains(e.target as Node) && (box.open = false));
  box.addEventListener('keydown', (e) => e.key === 'Escape' && ((box.open = false), box.querySelector('summary')!.focus()));
}

const nav = document.getElementById('nav')!;
const toggle = document.querySelector<HTMLButtonElement>('.menu-toggle')!;
toggle.addEventListener('click', () => {
  const open = nav.classList.toggle('open');
  toggle.setAttribute('aria-expanded', String(open));
});

onRouteChange((path) => {
  const section = '/' + (path.split('/')[1] ?? '');
  const current = section === '/results' ? '/runs' : section;
  for (const a of nav.querySelectorAll('a')) {
    const target = a.getAttribute('href')!.replace(/^.*\/ui/, '');
    if (target === current) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  nav.classList.remove('open');
  toggle.setAttribute('aria-expanded', 'false');
  const titles: Record<string, string> = { '/': 'Recent work', '/strategies': 'Strategies', '/runs': 'Runs', '/compare': 'Compare', '/studies': 'Studies', '/data': 'Data', '/login': 'Sign in', '/account': 'Account' };
  document.title = `${titles[current] ?? 'backtestd'} · backtestd`;
});

// Whether this browser has a session to ask about: set on signing in, cleared on signing out
// or on a 401. Without it, and with accounts on, the page opens on sign-in without asking
// who the caller is (that question's 401 would be a newcomer's first console error).
const SIGNED_IN = 'backtestd.signed-in';
const remember = (on: boolean) => {
  try {
    if (on) localStorage.setItem(SIGNED_IN, '1');
    else localStorage.removeItem(SIGNED_IN);
  } catch {
    /* storage off: the page asks every time */
  }
};
const remembered = () => {
  try {
    return localStorage.getItem(SIGNED_IN) === '1';
  } catch {
    return true;
  }
};
const toSignIn = () => {
  const from = appPath() + window.location.search;
  if (!from.startsWith('/login')) window.history.replaceState(null, '', href(`/login?next=${encodeURIComponent(from)}`));
};

async function start(): Promise<void> {
  let accountsOn = true;
  try {
    const res = await fetch(apiURL('/health'), { headers: { Accept: 'application/json' } });
    accountsOn = ((await res.json()) as { accounts?: boolean }).accounts !== false;
  } catch {
    /* ask who the caller is */
  }
  if (accountsOn && !remembered()) {
    setIdentity(null);
    toSignIn();
    startRouter();
    return;
  }
  try {
    setIdentity(await accounts.me());
  } catch (e) {
    // Not signed in (any more): straight to sign-in, back here afterwards.
    if (e instanceof ApiError && e.status === 401) {
      remember(false);
      setIdentity(null);
      toSignIn();
    }
  }
  startRouter();
}
void start();

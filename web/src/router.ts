// History-API router for the pages under /ui/ (any BASE_PATH prefix is kept).

import { basePath } from './api';
import { confirmDialog } from './dom';

export type Cleanup = () => void;
export type View = (main: HTMLElement, params: Record<string, string>, query: URLSearchParams) => Cleanup | void | Promise<Cleanup | void>;

interface Route {
  re: RegExp;
  keys: string[];
  view: View;
}

const routes: Route[] = [];
let cleanup: Cleanup | void;
// navigation counts renders: a view still loading when the user navigates again paints into
// its own detached container, never over the newer view, and is cleaned up when it returns.
let navigation = 0;
let onChange: (path: string) => void = () => {};
// leaveGuard, set by a view with work that is not saved, says what leaving would lose
// (null: nothing). Every navigation asks it first; a new view starts without one.
let leaveGuard: (() => string | null) | null = null;
// here is the URL the router last rendered, to return to when a back/forward is refused.
let here = '';

/** Sets the current view's guard against leaving with unsaved work. */
export function setLeaveGuard(fn: () => string | null): void {
  leaveGuard = fn;
}

/** Asks the user before leaving a view with unsaved work; true: go ahead. */
async function mayLeave(): Promise<boolean> {
  const loss = leaveGuard?.();
  if (!loss) return true;
  return confirmDialog('Leave this page?', loss, 'Leave without saving');
}

export function route(pattern: string, view: View): void {
  const keys: string[] = [];
  const re = new RegExp(
    '^' +
      pattern.replace(/\/:([a-z_]+)/gi, (_m, k: string) => {
        keys.push(k);
        return '/([^/]+)';
      }) +
      '/?$',
  );
  routes.push({ re, keys, view });
}

/** The app-relative path (e.g. "/runs/task_1") of a full location path. */
export function appPath(pathname = window.location.pathname): string {
  const p = pathname.slice(basePath(pathname).length).replace(/^\/ui/, '');
  return p === '' ? '/' : p;
}

export function href(path: string): string {
  return `${basePath()}/ui${path}`;
}

export function navigate(path: string, replace = false): void {
  void (async () => {
    if (!(await mayLeave())) return;
    const url = href(path);
    if (replace) history.replaceState(null, '', url);
    else history.pushState(null, '', url);
    void render();
  })();
}

export function onRouteChange(fn: (path: string) => void): void {
  onChange = fn;
}

function runCleanup(fn: Cleanup | void): void {
  if (typeof fn !== 'function') return;
  try {
    fn();
  } catch {
    /* a view's cleanup must not block navigation */
  }
}

export async function render(): Promise<void> {
  const token = ++navigation;
  const main = document.getElementById('main')!;
  runCleanup(cleanup);
  cleanup = undefined;
  leaveGuard = null;
  here = window.location.pathname + window.location.search;
  const path = appPath();
  const query = new URLSearchParams(window.location.search);
  onChange(path);
  for (const r of routes) {
    const m = r.re.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    r.keys.forEach((k, i) => (params[k] = decodeURIComponent(m[i + 1])));
    const view = document.createElement('div');
    view.className = 'view';
    main.replaceChildren(view);
    const done = await r.view(view, params, query);
    if (token === navigation) {
      cleanup = done;
      if (moveFocus) focusPage(main);
      moveFocus = true;
    } else runCleanup(done); // navigated away while it loaded
    return;
  }
  main.replaceChildren();
  const p = document.createElement('p');
  p.textContent = 'Page not found.';
  main.append(p);
}

// The first page of a visit keeps the browser's focus; every later one takes it (below).
let moveFocus = false;

/**
 * After a navigation the focus moves to the new page's heading, so a keyboard or screen
 * reader user starts on the page rather than on the link that led there.
 */
function focusPage(main: HTMLElement): void {
  const active = document.activeElement;
  if (active && active !== document.body && main.contains(active)) return; // the view chose
  const h1 = main.querySelector<HTMLElement>('h1');
  const target = h1 ?? main;
  if (h1 && !h1.hasAttribute('tabindex')) h1.setAttribute('tabindex', '-1');
  target.focus({ preventScroll: true });
}

export function startRouter(): void {
  window.addEventListener('popstate', () => {
    void (async () => {
      if (await mayLeave()) return void render();
      history.pushState(null, '', here); // refused: back where the user was
    })();
  });
  // Closing or reloading the tab: the browser's own prompt.
  window.addEventListener('beforeunload', (e) => {
    if (leaveGuard?.()) e.preventDefault();
  });
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element).closest?.('a');
    if (!a || a.target || a.hasAttribute('download')) return;
    const url = new URL(a.href, window.location.href);
    if (url.origin !== window.location.origin || !url.pathname.startsWith(basePath() + '/ui')) return;
    e.preventDefault();
    void (async () => {
      if (!(await mayLeave())) return;
      history.pushState(null, '', url.pathname + url.search);
      void render();
    })();
  });
  void render();
}

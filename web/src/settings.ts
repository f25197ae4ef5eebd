// Display settings kept in this browser: the colour convention for gains and losses and the
// theme. One convention holds on the whole page: text (.pos/.neg), candles, bars, the heatmap,
// buy/sell markers and drawdowns all take their colours from here.

export type UpDown = 'green-up' | 'red-up';
export type Theme = 'system' | 'light' | 'dark';

export interface Settings {
  updown: UpDown;
  theme: Theme;
}

const KEY = 'backtestd.display';
const GREEN = '#26a69a';
const RED = '#ef5350';

export function loadSettings(): Settings {
  let raw: Partial<Settings> = {};
  try {
    raw = JSON.parse(localStorage.getItem(KEY) ?? '{}') as Partial<Settings>;
  } catch {
    /* a damaged entry: defaults */
  }
  return { updown: raw.updown === 'red-up' ? 'red-up' : 'green-up', theme: raw.theme === 'light' || raw.theme === 'dark' ? raw.theme : 'system' };
}

const listeners: (() => void)[] = [];

/** Stores s, applies it to the document and tells the listeners (pages redraw their charts). */
export function saveSettings(s: Settings): void {
  try {
    localStorage.setItem(KEY, JSON.stringify(s));
  } catch {
    /* private mode: the setting lasts this page */
  }
  applySettings(s);
  for (const fn of listeners) fn();
}

/** Calls fn after each change; the result stops it. */
export function onSettingsChange(fn: () => void): () => void {
  listeners.push(fn);
  return () => {
    const i = listeners.indexOf(fn);
    if (i >= 0) listeners.splice(i, 1);
  };
}

/** The theme in effect: the setting, or the system's preference. */
export function darkTheme(s: Settings = loadSettings()): boolean {
  if (s.theme !== 'system') return s.theme === 'dark';
  return typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches;
}

export function applySettings(s: Settings = loadSettings()): void {
  const root = document.documentElement;
  root.dataset.updown = s.updown;
  root.dataset.theme = darkTheme(s) ? 'dark' : 'light';
}

/** Chart colours for the settings: gains/up, losses/down, and the neutral middle of a scale. */
export interface Palette {
  up: string;
  down: string;
  neutral: string;
  text: string;
  grid: string;
  dark: boolean;
}

export function palette(s: Settings = loadSettings()): Palette {
  const dark = darkTheme(s);
  const redUp = s.updown === 'red-up';
  return { up: redUp ? RED : GREEN, down: redUp ? GREEN : RED, neutral: dark ? '#2a3142' : '#f7f7f7', text: dark ? '#d8dee9' : '#1d2330', grid: dark ? '#333b4d' : '#e6e9ef', dark };
}

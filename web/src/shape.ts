// Data shaping: diffs, indicators, chart options, statistics, comparison and import reports.
// Pure functions (no DOM, no ECharts instance) so Vitest checks them directly.

import type { ChartConfig, ParamInfo } from './api';
import { MINUS, MISSING, STAT_DEFS, fmtBarTime, fmtChartValue, fmtNumber, fmtParamValue, fmtSigned, fmtStat, type BarClock, type StatDef } from './format';
import type { Palette } from './settings';

// ---- line diff --------------------------------------------------------------------------------

export interface DiffLine {
  op: ' ' | '+' | '-';
  text: string;
  a?: number; // line number in the old text
  b?: number; // line number in the new text
}

/** Line diff by longest common subsequence (strategy files are small). */
export function lineDiff(oldText: string, newText: string): DiffLine[] {
  const a = oldText.split('\n');
  const b = newText.split('\n');
  const n = a.length;
  const m = b.length;
  // lcs[i][j] = LCS length of a[i:] and b[j:]
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ op: ' ', text: a[i], a: i + 1, b: j + 1 });
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
      out.push({ op: '-', text: a[i], a: i + 1 });
      i++;
    } else {
      out.push({ op: '+', text: b[j], b: j + 1 });
      j++;
    }
  }
  for (; i < n; i++) out.push({ op: '-', text: a[i], a: i + 1 });
  for (; j < m; j++) out.push({ op: '+', text: b[j], b: j + 1 });
  return out;
}

export function diffStats(d: DiffLine[]): { added: number; removed: number } {
  return { added: d.filter((x) => x.op === '+').length, removed: d.filter((x) => x.op === '-').length };
}

// ---- load errors ----------------------------------------------------------------------------

export interface LoadError {
  message: string;
  line?: number;
  column?: number;
}

/** The position of a strategy load error: the 400 body's line/column, else found in the text. */
export function parseLoadError(body: unknown, fallback: string): LoadError {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const message = typeof b.detail === 'string' ? b.detail : fallback;
  let line = typeof b.line === 'number' && b.line > 0 ? b.line : undefined;
  let column = typeof b.column === 'number' && b.column > 0 ? b.column : undefined;
  if (line === undefined) {
    const m = /\bline (\d+)(?::(\d+)|,? col(?:umn)? (\d+))?/i.exec(message) ?? /\((?:[^():]*:)?(\d+):(\d+)\)/.exec(message) ?? /(?:^|[\s(:])(\d+):(\d+)(?!\d)/.exec(message);
    if (m) {
      line = Number(m[1]);
      const c = m[2] ?? m[3];
      if (c) column = Number(c);
    }
  }
  return { message, line, column };
}

// ---- import reports -------------------------------------------------------------------------

export interface Rejected {
  line: number | null;
  reason: string;
}

/** Rejected lines of a failed CSV import, from structured errors or from the detail text. */
export function rejectedLines(body: unknown, detail: string): Rejected[] {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  for (const key of ['errors', 'rejected', 'lines']) {
    const list = b[key];
    if (Array.isArray(list) && list.length) {
      return list.map((e) => {
        if (typeof e === 'string') return fromText(e);
        const o = e as Record<string, unknown>;
        return { line: typeof o.line === 'number' ? o.line : null, reason: String(o.message ?? o.reason ?? o.error ?? o.detail ?? '') };
      });
    }
  }
  const parts = detail
    .split(/\n|;\s+(?=line\s+\d)/i)
    .map((s) => s.trim())
    .filter(Boolean);
  return parts.map(fromText);
}

function fromText(s: string): Rejected {
  const m = /line\s+(\d+)\s*[:,-]?\s*(.*)$/i.exec(s);
  if (m) return { line: Number(m[1]), reason: m[2] || s };
  return { line: null, reason: s };
}

// ---- colours ---------------------------------------------------------------------------------

/** The page's default colours (green up), for callers without a palette. */
const DEFAULT_PALETTE: Palette = { up: '#26a69a', down: '#ef5350', neutral: '#f7f7f7', text: '#1d2330', grid: '#e6e9ef', dark: false };

const withAlpha = (hex: string, a: number) => {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${a})`;
};

// Trade markers in colours of their own, apart from the green and red of the candles.
export const BUY_COLOUR = '#1f6feb';
export const SELL_COLOUR = '#f08c00';

/**
 * Puts one colour convention on a server chart: the server writes the spec's fixed colours
 * (rising candles red), the page shows gains, rising candles and buys in the palette's `up`
 * colour and losses, falling candles and drawdowns in its `down` colour; buys are blue and
 * sells orange whatever the palette.
 */
export function recolour(opt: Record<string, unknown>, pal: Palette): Record<string, unknown> {
  const series = asArray(opt.series as Record<string, unknown>[]).map((s) => {
    const name = String(s.name ?? '');
    if (s.type === 'candlestick') return { ...s, itemStyle: { ...((s.itemStyle as object) ?? {}), color: pal.up, color0: pal.down, borderColor: pal.up, borderColor0: pal.down } };
    if (s.type === 'scatter' && /^(▲ )?buy/i.test(name)) return { ...s, symbolSize: Math.max(Number(s.symbolSize) || 0, 12), itemStyle: { ...((s.itemStyle as object) ?? {}), color: BUY_COLOUR, borderColor: '#ffffff', borderWidth: 1 } };
    if (s.type === 'scatter' && /^(▼ )?sell/i.test(name)) return { ...s, symbolSize: Math.max(Number(s.symbolSize) || 0, 12), itemStyle: { ...((s.itemStyle as object) ?? {}), color: SELL_COLOUR, borderColor: '#ffffff', borderWidth: 1 } };
    if (s.type === 'bar' && /^losses$/i.test(name)) return { ...s, itemStyle: { ...((s.itemStyle as object) ?? {}), color: pal.down } };
    if (s.type === 'bar' && /^gains$/i.test(name)) return { ...s, itemStyle: { ...((s.itemStyle as object) ?? {}), color: pal.up } };
    if (/drawdown|underwater/i.test(name)) return { ...s, lineStyle: { ...((s.lineStyle as object) ?? {}), color: pal.down }, itemStyle: { ...((s.itemStyle as object) ?? {}), color: pal.down }, areaStyle: { ...((s.areaStyle as object) ?? {}), color: withAlpha(pal.down, 0.15) } };
    if (s.type === 'bar' && Array.isArray(s.data) && s.data.some((d) => d && typeof d === 'object' && 'itemStyle' in (d as object))) {
      // bars coloured one by one by their sign (yearly returns)
      const data = (s.data as Record<string, unknown>[]).map((d) => {
        const v = Number((d as { value?: unknown })?.value);
        return d && typeof d === 'object' ? { ...d, itemStyle: { ...((d.itemStyle as object) ?? {}), color: v < 0 ? pal.down : pal.up } } : d;
      });
      return { ...s, data };
    }
    return s;
  });
  const out: Record<string, unknown> = { ...opt, series };
  if (opt.visualMap) {
    const vm = opt.visualMap as Record<string, unknown>;
    out.visualMap = { ...vm, inRange: { ...((vm.inRange as object) ?? {}), color: [pal.down, pal.neutral, pal.up] }, textStyle: { color: pal.text } };
  }
  if (pal.dark) out.backgroundColor = 'transparent';
  return out;
}

// ---- server chart configurations --------------------------------------------------------------

function asArray<T>(v: T | T[] | undefined): T[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

/** The dates of a chart config's first category axis. */
export function categoryDates(cfg: ChartConfig): string[] {
  const axis = asArray(cfg.xAxis as { data?: unknown[] } | { data?: unknown[] }[])[0];
  return (axis?.data ?? []).map(String);
}

/** Counts the data points of a chart config's series (to tell an empty chart from a full one). */
export function seriesPoints(cfg: ChartConfig): number {
  return asArray(cfg.series as Record<string, unknown>[]).reduce((n, s) => n + (Array.isArray(s?.data) ? (s.data as unknown[]).length : 0), 0);
}

/**
 * Turns a server ChartConfig (spec shape: title string, type, series, axes) into a complete
 * interactive ECharts option: unified axis tooltip, zoom and pan, a legend that toggles series,
 * the 70/30 layout for two-grid charts. What the server already set is kept.
 */
export function prepareChartOption(cfg: ChartConfig, chartType: string, opts: { narrow?: boolean; visibleBars?: number; clock?: BarClock } = {}): Record<string, unknown> {
  const { type: _kind, title, ...rest } = cfg;
  const opt: Record<string, unknown> = { animation: false, ...rest };
  const text = typeof title === 'string' ? title : (title as { text?: string } | undefined)?.text;
  // The page shows the title above the chart; exports switch it on (charts.ts).
  opt.title = { text: text ?? '', show: false, left: 0, top: 0, textStyle: { fontSize: 14 } };
  const series = asArray(opt.series as Record<string, unknown>[]).map((s) => ({ ...s }));
  opt.series = series;
  const xAxes = asArray(opt.xAxis as Record<string, unknown>[]);
  const isHeatmap = chartType === 'monthly_heatmap' || series.some((s) => s.type === 'heatmap');
  const twoGrids = xAxes.length >= 2 || series.some((s) => s.xAxisIndex === 1);

  if (!opt.tooltip) opt.tooltip = isHeatmap ? { trigger: 'item' } : { trigger: 'axis', axisPointer: { type: 'cross' } };
  // Values rounded for people, and the box kept inside the chart (a phone's edge cuts it).
  const percent = chartType === 'drawdown' || chartType === 'underwater' || chartType === 'yearly_returns';
  opt.tooltip = { confine: true, valueFormatter: (v: unknown) => fmtChartValue(v, percent ? '%' : ''), ...(opt.tooltip as object) };
  if (isHeatmap) opt.tooltip = { ...(opt.tooltip as object), formatter: heatTip(opt) };
  const names = series.map((s) => s.name).filter((n): n is string => typeof n === 'string' && n !== '');
  if (!opt.legend && names.length > 0 && !isHeatmap) opt.legend = { data: names };
  if (opt.legend && !isHeatmap) {
    // At the top, clear of the zoom slider at the bottom; scrolls when it is too long for a phone.
    const { bottom: _b, top: _t, ...legend } = opt.legend as Record<string, unknown>;
    opt.legend = { type: 'scroll', left: 'center', ...legend, top: 0 };
  }
  if (!opt.xAxis && !isHeatmap) opt.xAxis = { type: 'category' };
  if (!opt.yAxis && !isHeatmap) opt.yAxis = { type: 'value', scale: true };

  if (twoGrids) {
    if (!opt.grid) {
      opt.grid = [
        { left: 60, right: 16, top: 40, height: '50%' },
        { left: 60, right: 16, top: '70%', height: '18%' },
      ];
    }
    const xs = xAxes.map((x, i) => ({ ...x, gridIndex: (x as Record<string, unknown>).gridIndex ?? i }));
    opt.xAxis = xs.length >= 2 ? xs : [{ ...(xs[0] ?? { type: 'category' }) }, { type: 'category', gridIndex: 1, data: (xs[0] as Record<string, unknown> | undefined)?.data }];
    const ys = asArray(opt.yAxis as Record<string, unknown>[]);
    opt.yAxis = ys.length >= 2 ? ys.map((y, i) => ({ scale: true, ...y, gridIndex: y.gridIndex ?? i })) : [{ scale: true, ...(ys[0] ?? {}) }, { scale: true, gridIndex: 1, splitNumber: 2 }];
    opt.axisPointer = opt.axisPointer ?? { link: [{ xAxisIndex: 'all' }] };
  } else if (!opt.grid) {
    // Room at the top for the legend and, below it, the names of the y axes.
    const named = asArray(opt.yAxis as Record<string, unknown>[]).some((y) => typeof y?.name === 'string' && y.name !== '');
    // A heatmap names its months above the cells and has its colour scale below them, so
    // the scale's labels never sit on the month names.
    opt.grid = isHeatmap ? { left: 60, right: 16, top: 28, bottom: 64 } : { left: 60, right: 16, top: named ? 64 : 40, bottom: 56 };
  }
  if (isHeatmap) opt.xAxis = asArray(opt.xAxis as Record<string, unknown>[]).map((x) => ({ ...x, position: 'top' }));
  // Value axes in the page's convention ("−1,200", "−5%").
  if (opt.yAxis) opt.yAxis = asArray(opt.yAxis as Record<string, unknown>[]).map((y) =>
    y.type === 'value' && !(y.axisLabel as Record<string, unknown> | undefined)?.formatter ? { ...y, axisLabel: { ...((y.axisLabel as object) ?? {}), formatter: (v: number) => fmtChartValue(v, percent ? '%' : '') } } : y,
  );

  if (!opt.dataZoom && !isHeatmap) {
    const idx = twoGrids ? [0, 1] : [0];
    opt.dataZoom = [
      { type: 'inside', xAxisIndex: idx },
      { type: 'slider', xAxisIndex: idx, bottom: 4, height: 18 },
    ];
  }
  if (isHeatmap) {
    for (const s of series) {
      if (s.type !== 'heatmap') continue;
      const label = (s.label ?? {}) as Record<string, unknown>;
      s.label = { ...label, show: !opts.narrow && label.show !== false, fontSize: 10, formatter: heatLabel };
    }
  }
  if (chartType === 'returns_histogram') {
    // Bins are named "-0.50% to -0.25%": the axis shows their lower edges, the tooltip the range.
    opt.xAxis = asArray(opt.xAxis as Record<string, unknown>[]).map((x) => ({ ...x, nameLocation: 'middle', nameGap: 30, axisLabel: { formatter: (v: string) => String(v).split(' to ')[0].replace(/^-/, MINUS) } }));
  }
  // Long price series open on their most recent bars; the slider and the mouse wheel show the rest.
  const cats = asArray((asArray(opt.xAxis as Record<string, unknown>[])[0] as Record<string, unknown> | undefined)?.data as unknown[]);
  const visible = opts.visibleBars ?? 0;
  if (Array.isArray(opt.dataZoom)) {
    opt.dataZoom = (opt.dataZoom as Record<string, unknown>[]).map((z) => (z.type === 'slider' ? { ...z, height: z.height ?? 18, bottom: z.bottom ?? 4 } : z));
  }
  if (visible > 0 && cats.length > visible * 1.2 && Array.isArray(opt.dataZoom)) {
    const start = Math.round((1 - visible / cats.length) * 1000) / 10;
    opt.dataZoom = (opt.dataZoom as Record<string, unknown>[]).map((z) => ({ start, end: 100, ...z }));
  }
  // Bar times come as UTC instants: the axis and its pointer (the tooltip's heading) show
  // them in the data's zone, while the categories stay the instants the routes take.
  const clock = opts.clock;
  if (clock?.intraday && !isHeatmap) {
    const label = (v: unknown) => fmtBarTime(String(v), clock);
    opt.xAxis = asArray(opt.xAxis as Record<string, unknown>[]).map((x) =>
      x.type && x.type !== 'category'
        ? x
        : {
            ...x,
            axisLabel: { ...((x.axisLabel as Record<string, unknown>) ?? {}), formatter: label },
            axisPointer: { ...((x.axisPointer as Record<string, unknown>) ?? {}), label: { formatter: (p: { value: unknown }) => label(p.value) } },
          },
    );
  }
  if (isHeatmap && !opt.visualMap) {
    const values: number[] = [];
    for (const s of series) for (const d of asArray(s.data as unknown[])) {
      const v = Array.isArray(d) ? d[2] : (d as { value?: unknown[] })?.value?.[2];
      if (typeof v === 'number') values.push(v);
    }
    const m = Math.max(1, ...values.map(Math.abs));
    opt.visualMap = { min: -m, max: m, calculable: true, orient: 'horizontal', left: 'center', bottom: 4, inRange: { color: [DEFAULT_PALETTE.down, DEFAULT_PALETTE.neutral, DEFAULT_PALETTE.up] } };
  }
  if (isHeatmap && opt.visualMap) {
    // The scale's ends in percent, with the same rounding as the cells.
    opt.visualMap = { ...(opt.visualMap as object), bottom: 4, itemWidth: 12, precision: 1, formatter: (v: unknown) => `${heatNumber(Number(v))}%` };
  }
  return opt; // coloured by the chart panel, in the palette of the moment (recolour)
}

/** A heatmap cell's value to one decimal, never "−0.0". */
function heatNumber(v: number): string {
  return fmtNumber(v, 1);
}

function heatLabel(p: { value?: unknown; data?: unknown }): string {
  const v = Array.isArray(p.value) ? p.value[2] : Array.isArray(p.data) ? p.data[2] : p.value;
  return typeof v === 'number' ? heatNumber(v) : '';
}

/** The heatmap's tooltip: "2021 Mar: +1.2%", the year and month read from the axes. */
function heatTip(opt: Record<string, unknown>): (p: { value?: unknown; data?: unknown }) => string {
  const xs = asArray((asArray(opt.xAxis as Record<string, unknown>[])[0] as Record<string, unknown> | undefined)?.data as unknown[]);
  const ys = asArray((asArray(opt.yAxis as Record<string, unknown>[])[0] as Record<string, unknown> | undefined)?.data as unknown[]);
  return (p) => {
    const d = (Array.isArray(p.value) ? p.value : Array.isArray(p.data) ? p.data : []) as unknown[];
    const [x, y, v] = d;
    const month = typeof x === 'number' ? String(xs[x] ?? x) : String(x ?? '');
    const year = typeof y === 'number' ? String(ys[y] ?? y) : String(y ?? '');
    const n = Number(v);
    const text = Number.isFinite(n) ? `${fmtSigned(n, 1)}%` : MISSING;
    return `${year} ${month}: ${text}`;
  };
}

// ---- statistics -----------------------------------------------------------------------------

export interface StatItem {
  key: string;
  label: string;
  value: unknown;
  display: string;
  explanation: string;
}

export interface StatGroup {
  name: string;
  items: StatItem[];
}

const GROUP_NAMES: Record<string, string> = { curve: 'Curve', trade: 'Trade', trades: 'Trade', time: 'Time', risk: 'Risk' };

/**
 * Brings the statistics answer into its groups of {key, label, value, display, explanation},
 * whatever its exact form: groups as a list, groups as an object, or a flat record. Missing
 * labels and display strings come from the spec's table; explanations only from the answer,
 * whose statistics own them (a second copy here drifted from them).
 */
export function normaliseStatistics(raw: unknown): StatGroup[] {
  const byKey = new Map<string, StatDef>(STAT_DEFS.map((d) => [d.key, d]));
  const item = (key: string, v: unknown): StatItem => {
    const def = byKey.get(key);
    let value = v;
    let label = def?.label ?? key;
    let display: string | undefined;
    let explanation = '';
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      value = o.value ?? o.raw ?? null;
      if (typeof o.label === 'string') label = o.label;
      if (typeof o.display === 'string') display = o.display;
      if (typeof o.explanation === 'string' && o.explanation) explanation = o.explanation;
      else if (typeof o.description === 'string' && o.description) explanation = o.description;
    }
    // The page's own convention (format.ts) writes every figure it knows.
    return { key, label, value, display: def ? fmtStat(def.format, value) : (display ?? fmtChartValue(value)), explanation };
  };
  const groupFrom = (name: string, body: unknown): StatGroup => {
    if (Array.isArray(body)) {
      return {
        name,
        items: body.map((e) => {
          const o = e as Record<string, unknown>;
          const key = String(o.key ?? o.name ?? o.field ?? '');
          return item(key, o);
        }),
      };
    }
    const o = (body ?? {}) as Record<string, unknown>;
    return { name, items: Object.entries(o).map(([k, v]) => item(k, v)) };
  };

  const r = (raw ?? {}) as Record<string, unknown>;
  const groups = r.groups ?? (Array.isArray(raw) ? raw : undefined);
  if (Array.isArray(groups)) {
    return groups.map((g) => {
      const o = g as Record<string, unknown>;
      const name = String(o.name ?? o.group ?? o.title ?? '');
      return groupFrom(GROUP_NAMES[name.toLowerCase()] ?? name, o.metrics ?? o.items ?? o.stats ?? o.fields ?? []);
    });
  }
  if (groups && typeof groups === 'object') {
    return Object.entries(groups as Record<string, unknown>).map(([k, v]) => groupFrom(GROUP_NAMES[k.toLowerCase()] ?? k, v));
  }
  const keyed = Object.keys(r).filter((k) => GROUP_NAMES[k.toLowerCase()]);
  if (keyed.length) return keyed.map((k) => groupFrom(GROUP_NAMES[k.toLowerCase()], r[k]));
  // flat record
  const out: StatGroup[] = ['Curve', 'Trade', 'Time', 'Risk', 'Benchmark'].map((name) => ({ name, items: [] }));
  for (const [k, v] of Object.entries(r)) {
    const def = byKey.get(k);
    if (!def) continue;
    out.find((g) => g.name === def.group)!.items.push(item(k, v));
  }
  return out.filter((g) => g.items.length);
}

// ---- comparison -----------------------------------------------------------------------------

export const LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR'] as const;

/** The canonical level name: WARN → WARNING, lower case accepted, unknown → INFO. */
export function normLevel(level: unknown): string {
  const l = String(level ?? '').toUpperCase();
  if (l === 'WARN') return 'WARNING';
  if (l === 'ERR' || l === 'CRITICAL' || l === 'FATAL') return 'ERROR';
  return (LEVELS as readonly string[]).includes(l) ? l : 'INFO';
}

/**
 * Puts a log line in its place among lines in log order: by attempt, then by the time it
 * was logged (microseconds, the same in a live event and in the stored line), after the
 * lines of the same key. Lines reach the page two ways — the stored ones fetched when the
 * page opens and the live ones over the socket — and either can arrive first. Returns the
 * index it took.
 */
export function insertLogLine<T extends { timestamp: number; attempt?: number }>(lines: T[], l: T): number {
  const before = (a: T, b: T) => (a.attempt ?? 0) < (b.attempt ?? 0) || ((a.attempt ?? 0) === (b.attempt ?? 0) && a.timestamp < b.timestamp);
  let lo = 0;
  let hi = lines.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (before(l, lines[mid])) hi = mid;
    else lo = mid + 1;
  }
  lines.splice(lo, 0, l);
  return lo;
}

export function filterLogs<T extends { level: string }>(lines: T[], enabled: Set<string>): T[] {
  return lines.filter((l) => enabled.has(normLevel(l.level)));
}

// ---- paging and parameters --------------------------------------------------------------------

/**
 * The parameters whose values differ among runs (a run without one counts as differing),
 * in the order they first appear: what tells the runs of a list or a comparison apart.
 */
export function differingParams(params: (Record<string, unknown> | null | undefined)[]): string[] {
  const keys: string[] = [];
  for (const p of params) for (const k of Object.keys(p ?? {})) if (!keys.includes(k)) keys.push(k);
  return keys.filter((k) => new Set(params.map((p) => (p && k in p ? fmtParamValue(p[k]) : '\u0000'))).size > 1);
}

export function pageCount(total: number, limit: number): number {
  return Math.max(1, Math.ceil(total / Math.max(1, limit)));
}

/** Parses a form value for a parameter of the given type; throws with the spec's text. */
export function coerceParam(name: string, type: string, raw: string): unknown {
  const t = type.toLowerCase();
  const s = raw.trim();
  if (t === 'int' || t === 'integer') {
    if (!/^[-+]?\d+$/.test(s)) {
      // 1.5 is a number, just not a whole one: say so rather than "str"
      const got = s === '' ? 'empty' : Number.isFinite(Number(s)) ? `float (${s}): use a whole number` : 'str';
      throw new Error(`Parameter '${name}': expected int, got ${got}`);
    }
    return Number(s);
  }
  if (t === 'float' || t === 'number') {
    if (s === '' || !Number.isFinite(Number(s))) throw new Error(`Parameter '${name}': expected float, got ${s === '' ? 'empty' : 'str'}`);
    return Number(s);
  }
  if (t === 'bool' || t === 'boolean') return ['true', '1', 'yes'].includes(s.toLowerCase());
  if (t === 'list' || t === 'array' || t === 'dict' || t === 'object') {
    try {
      return JSON.parse(s);
    } catch {
      throw new Error(`Parameter '${name}': expected ${t}, got str`);
    }
  }
  return raw;
}

/** The type name of a parameter's default value, as the parameter info reports it. */
export function typeOfValue(v: unknown): ParamInfo['type'] {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (Array.isArray(v)) return 'list';
  if (v && typeof v === 'object') return 'object';
  return 'str';
}

/**
 * Adds the drawdown series of a drawdown chart config to an equity option, on a second y axis
 * at the right, unless the equity option already shows a drawdown.
 */
export function overlayDrawdown(equity: Record<string, unknown>, drawdown: ChartConfig | null, pal: Palette = DEFAULT_PALETTE): Record<string, unknown> {
  const series = asArray(equity.series as Record<string, unknown>[]);
  if (!drawdown || series.some((s) => /drawdown/i.test(String(s.name ?? '')))) return equity;
  const dd = asArray(drawdown.series as Record<string, unknown>[])[0];
  if (!dd || !Array.isArray(dd.data)) return equity;
  // Drawdown in percent, below the equity in a panel of its own: 0 at the top, the deepest
  // fall at the bottom (a drawdown is at most 100%, so the axis never runs past it).
  const below = (v: unknown) => (v === null || v === undefined || v === '' || v === '-' || !Number.isFinite(Number(v)) ? null : -Math.abs(Number(v)));
  const data = (dd.data as unknown[]).map((v) => (Array.isArray(v) ? [v[0], below(v[1])] : below(v)));
  const deepest = Math.max(0, ...data.map((v) => -(Number(Array.isArray(v) ? v[1] : v) || 0)));
  const bottom = deepest > 0 ? Math.min(100, niceCeil(deepest)) : 1;
  const xs = asArray(equity.xAxis as Record<string, unknown>[]);
  const grid = equity.grid as Record<string, unknown> | undefined;
  if (xs.length !== 1 || (grid && Array.isArray(grid))) return equity;
  const x0 = xs[0];
  const ys = asArray(equity.yAxis as Record<string, unknown>[]);
  const name = 'Drawdown (%)';
  const ddAxis = {
    type: 'value',
    gridIndex: 1,
    name,
    nameLocation: 'middle',
    nameGap: 44,
    max: 0,
    min: -bottom,
    interval: bottom / 2,
    // A tick of −2.5% reads −2.5%, not −3%: as many decimals as the tick has (up to 2).
    axisLabel: { color: pal.down, formatter: (v: number) => `${fmtNumber(v, tickDigits(v))}%` },
    nameTextStyle: { color: pal.down },
  };
  const yAxis = [...(ys.length ? ys : [{ type: 'value', scale: true }]).map((y) => ({ ...y, gridIndex: 0 })), ddAxis];
  const ddDates = categoryDates(drawdown);
  const xAxis = [
    { ...x0, gridIndex: 0, axisLabel: { ...((x0.axisLabel as object) ?? {}), show: false } },
    { ...x0, gridIndex: 1, data: ddDates.length ? ddDates : x0.data },
  ];
  const top = Math.max(Number(grid?.top) || 0, 64);
  const out: Record<string, unknown> = {
    ...equity,
    grid: [
      { left: 60, right: 16, ...(grid ?? {}), top, bottom: '36%' },
      { left: Number(grid?.left) || 60, right: Number(grid?.right) || 16, top: '70%', bottom: 56 },
    ],
    xAxis,
    yAxis,
    axisPointer: { link: [{ xAxisIndex: 'all' }] },
    dataZoom: asArray(equity.dataZoom as Record<string, unknown>[]).map((z) => ({ ...z, xAxisIndex: [0, 1] })),
    series: [...series, { ...dd, data, name, type: 'line', xAxisIndex: 1, yAxisIndex: yAxis.length - 1, showSymbol: false, lineStyle: { color: pal.down, width: 1 }, areaStyle: { color: withAlpha(pal.down, 0.15) }, itemStyle: { color: pal.down }, tooltip: { valueFormatter: (v: unknown) => fmtChartValue(v, '%') } }],
  };
  const legend = equity.legend as { data?: unknown[] } | undefined;
  if (legend && Array.isArray(legend.data)) out.legend = { ...legend, data: [...legend.data, name] };
  return out;
}

/** The smallest of 1, 2, 2.5, 5 × 10^k at or above v (an axis end people can read). */
export function niceCeil(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return ([1, 2, 2.5, 5, 10].find((m) => m * p >= v - 1e-12) ?? 10) * p;
}

// ---- comparison shaping ---------------------------------------------------------------------

/** The prose of a strategy's leading doc comment, up to the first "param: ..." line. */
export function docSummary(code: string, params: string[]): string {
  const m = /\/\*\*([\s\S]*?)\*\//.exec(code ?? '');
  if (!m) return '';
  const out: string[] = [];
  for (const raw of m[1].split('\n')) {
    const line = raw.replace(/^\s*\*\s?/, '').trim();
    const pm = /^(\w+)\s*:/.exec(line);
    if (pm && (params.length === 0 || params.includes(pm[1]))) break;
    if (line.startsWith('@')) break;
    if (line) out.push(line);
  }
  return out.join(' ');
}

/** How many values a study's range gives: start, start+step, … up to stop (included), as the server expands it; 0 for a range that gives none. */
export function rangeCount(start: number, stop: number, step: number): number {
  if (![start, stop, step].every(Number.isFinite) || step <= 0 || stop < start) return 0;
  return Math.floor((stop - start) / step + 1e-9) + 1;
}

/**
 * The moving-average periods a strategy's parameters name (fast, slow, period, window,
 * length, lookback, ma…), for the price chart to draw the lines the strategy trades on: whole
 * numbers from 2 to 1000, at most three, in ascending order; none when no parameter looks like one.
 */
export function maPeriods(params: Record<string, unknown> | null | undefined): number[] {
  const out = new Set<number>();
  for (const [k, v] of Object.entries(params ?? {})) {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 2 || v > 1000) continue;
    // An oscillator's period (RSI 14) is not a moving average of the price.
    if (/rsi|atr|adx|cci|stoch|signal|dev|vol/i.test(k)) continue;
    if (/(^|_)(fast|slow|period|window|length|len|lookback|ma|sma|ema)(_|$)|period/i.test(k)) out.add(v);
  }
  return [...out].sort((a, b) => a - b).slice(0, 3);
}

/** The decimals a tick value needs to read exactly, up to 2: 50 → 0, 2.5 → 1, 1.25 → 2. */
export function tickDigits(v: number): number {
  for (let d = 0; d < 2; d++) if (Math.abs(Math.round(v * 10 ** d) - v * 10 ** d) < 1e-9) return d;
  return 2;
}

/** Text split at its backticks: the `inline code` parts marked, a backtick without its pair kept as text. */
export function inlineCodeParts(text: string): { text: string; code: boolean }[] {
  const parts = text.split('`');
  const out: { text: string; code: boolean }[] = [];
  parts.forEach((p, i) => {
    const code = i % 2 === 1 && i < parts.length - 1;
    const t = i % 2 === 1 && !code ? '`' + p : p;
    if (t) out.push({ text: t, code });
  });
  return out;
}

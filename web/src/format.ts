// The page's one formatting convention. Every figure the page shows is written by a function
// of this module, so a number reads the same wherever it appears:
//
// - Numbers: en-US digit grouping ("1,234.56") with a fixed number of decimals for each kind
//   of figure; no scientific notation.
// - Negative numbers: the minus sign "−" (U+2212), never the hyphen "-"; a value that rounds
//   to zero shows no sign ("0.00", not "−0.00").
// - Percent: 2 decimals ("12.34%"). The API gives returns as fractions (0.1234) and some
//   figures already in percent (max_drawdown_pct 12.34): fmtPctFraction and fmtPct say which,
//   and the ×100 happens here only.
// - Money: 2 decimals, grouped, no currency symbol (the data carries no currency).
// - Ratios (Sharpe, profit factor, beta…): 2 decimals. Counts: whole and grouped.
// - Dates: ISO "YYYY-MM-DD"; times "YYYY-MM-DD HH:MM[:SS]" (bar times in the data's zone).
// - A missing or non-finite figure: "—".
//
// The browser tests (internal/e2e) format the API's figures with the same rules in Go and
// compare them with the rendered text.

export const MINUS = '−';
export const MISSING = '—';

export function isNum(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/** A number with exactly `digits` decimals, grouped, with "−" for a negative one. */
export function fmtNumber(v: unknown, digits = 2): string {
  if (!isNum(v)) return MISSING;
  const s = Math.abs(v).toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return v < 0 && /[1-9]/.test(s) ? MINUS + s : s;
}

/** A number with a "+" before a positive one (changes, heatmap cells). */
export function fmtSigned(v: unknown, digits = 2): string {
  const s = fmtNumber(v, digits);
  return isNum(v) && v > 0 && /[1-9]/.test(s) ? `+${s}` : s;
}

/** A ratio (Sharpe, profit factor, efficiency): 2 decimals. */
export function fmtRatio(v: unknown): string {
  return fmtNumber(v, 2);
}

/**
 * A chart value for a tooltip: thousands separated, two decimals (four below 1 in size, so a
 * small ratio keeps its digits), a unit after it; "—" for a missing value.
 */
export function fmtChartValue(v: unknown, unit = ''): string {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (!isNum(n)) return MISSING;
  if (unit === '%') return fmtPct(n);
  const digits = Math.abs(n) < 1 && n !== 0 ? 4 : 2;
  const s = Math.abs(n).toLocaleString('en-US', { minimumFractionDigits: 0, maximumFractionDigits: digits });
  return (n < 0 && /[1-9]/.test(s) ? MINUS + s : s) + unit;
}

/** Whether a statistic is a gain or loss (coloured by its sign): money and returns, not counts, durations or risk. */
export function signedStat(key: string): boolean {
  const def = STAT_DEFS.find((d) => d.key === key);
  if (!def) return /return|pnl|profit/.test(key);
  // Risk measures, a probability and a stake are fractions but no gain or loss.
  return (def.format === 'money' || def.format === 'pctFraction') && !/volatility|tracking_error|value_at_risk|expected_shortfall|probabilistic|kelly/.test(key);
}

export interface BarRange {
  timeframe: string;
  first: string;
  last: string;
  bars: number;
}

/** The stored range a symbol's runs default to: of timeframe when it has one, else daily, else its longest. */
export function rangeFor(ranges: BarRange[] | undefined, timeframe = '1d'): BarRange | undefined {
  const rs = ranges ?? [];
  return rs.find((r) => r.timeframe === timeframe) ?? rs.find((r) => r.timeframe === '1d') ?? [...rs].sort((a, b) => b.bars - a.bars)[0];
}

/** "1d · 2000-01-03 → 2009-12-31 · 2,515 bars". */
export function fmtRange(r: BarRange): string {
  return `${r.timeframe} · ${r.first.slice(0, 10)} → ${r.last.slice(0, 10)} · ${fmtInt(r.bars)} bars`;
}

export function fmtInt(v: unknown): string {
  return isNum(v) ? fmtNumber(Math.round(v), 0) : MISSING;
}

/** Money: 2 decimals, grouped, no currency symbol. */
export function fmtMoney(v: unknown): string {
  return fmtNumber(v, 2);
}

/** A fraction (0.1234) as a percent (12.34%). */
export function fmtPctFraction(v: unknown, digits = 2): string {
  return isNum(v) ? fmtPct(v * 100, digits) : MISSING;
}

/** A value already in percent (12.34) as 12.34%. */
export function fmtPct(v: unknown, digits = 2): string {
  return isNum(v) ? `${fmtNumber(v, digits)}%` : MISSING;
}

/** Calendar days: "12 days", or with one decimal "3.5 days". */
export function fmtDays(v: unknown, digits = 0): string {
  return isNum(v) ? `${fmtNumber(v, digits)} ${digits === 0 && Math.round(v) === 1 ? 'day' : 'days'}` : MISSING;
}

export function signClass(v: unknown): string {
  if (!isNum(v) || v === 0) return '';
  return v > 0 ? 'pos' : 'neg';
}

/** ISO timestamp or epoch seconds → "2024-01-31 14:05:09" in local time. */
export function fmtDateTime(v: unknown): string {
  const d = toDate(v);
  if (!d) return MISSING;
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function fmtTime(v: unknown): string {
  const d = toDate(v);
  if (!d) return '';
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

/**
 * How a run's bar times are shown: in its data's time zone (an IANA name), and whether its
 * bars are instants (intraday) or dates (daily and coarser, stored at midnight UTC).
 */
export interface BarClock {
  tz: string;
  intraday: boolean;
}

const INTRADAY = new Set(['1m', '5m', '15m', '1h', '4h']);

/** The clock of a task, from its `timezone` and `timeframe`. */
export function barClock(task: { timezone?: string | null; timeframe?: string | null } | null | undefined): BarClock {
  return { tz: task?.timezone || 'UTC', intraday: INTRADAY.has(task?.timeframe ?? '') };
}

/** The clock of several tasks shown on one axis: theirs when all are intraday in one zone. */
export function sharedClock(tasks: Parameters<typeof barClock>[0][]): BarClock | undefined {
  const clocks = tasks.map(barClock);
  return clocks.length && clocks.every((k) => k.intraday && k.tz === clocks[0].tz) ? clocks[0] : undefined;
}

// Offsets of a zone by UTC hour: formatToParts is slow, and a zone's offset changes at most
// a few times a year, so a long intraday run asks Intl once per hour of data.
const offsets = new Map<string, number>();
const zoneFormats = new Map<string, Intl.DateTimeFormat>();

function zoneOffsetMinutes(tz: string, ms: number): number {
  const key = `${tz} ${Math.floor(ms / 3_600_000)}`;
  let off = offsets.get(key);
  if (off !== undefined) return off;
  let f = zoneFormats.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric' });
    zoneFormats.set(tz, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(new Date(Math.floor(ms / 3_600_000) * 3_600_000))) p[part.type] = Number(part.value);
  const local = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute);
  off = Math.round((local - Math.floor(ms / 3_600_000) * 3_600_000) / 60_000);
  if (offsets.size > 50_000) offsets.clear();
  offsets.set(key, off);
  return off;
}

/**
 * A bar's time. Without a clock, as stored (UTC): the date for a daily bar (midnight UTC),
 * else the date and the UTC time of day, "2024-10-01 14:35". With an intraday clock, the
 * date and time in its zone; with a daily one, the date.
 */
export function fmtBarTime(iso: string, clock?: BarClock): string {
  const m = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2})(:\d{2})?)?/.exec(iso);
  if (!m) return iso;
  if (clock && !clock.intraday) return m[1];
  if (clock && clock.tz !== 'UTC') {
    const ms = Date.parse(m[2] ? iso : `${m[1]}T00:00:00Z`);
    if (Number.isNaN(ms)) return iso;
    try {
      const local = new Date(ms + zoneOffsetMinutes(clock.tz, ms) * 60_000).toISOString();
      return `${local.slice(0, 10)} ${local.slice(11, 16)}`;
    } catch {
      return iso; // a zone this browser does not know
    }
  }
  if (!m[2]) return m[1];
  return m[2] === '00:00' && (!m[3] || m[3] === ':00') && !clock ? m[1] : `${m[1]} ${m[2]}`;
}

export function fmtDate(v: unknown): string {
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}/.test(v)) return v.slice(0, 10);
  const d = toDate(v);
  if (!d) return MISSING;
  return d.toISOString().slice(0, 10);
}

export function toDate(v: unknown): Date | null {
  if (v === null || v === undefined || v === '') return null;
  if (v instanceof Date) return v;
  if (typeof v === 'number') return new Date(v < 1e12 ? v * 1000 : v);
  const d = new Date(String(v));
  return Number.isNaN(d.getTime()) ? null : d;
}

/** "3 min ago" style relative time; `now` is injectable for tests. */
export function fmtAgo(v: unknown, now: number = Date.now()): string {
  const d = toDate(v);
  if (!d) return MISSING;
  const s = Math.round((now - d.getTime()) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

export function fmtDuration(startISO: unknown, endISO: unknown): string {
  const a = toDate(startISO);
  const b = toDate(endISO);
  if (!a || !b) return MISSING;
  const ms = b.getTime() - a.getTime();
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60000) return `${fmtNumber(ms / 1000, 1)} s`;
  return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
}

export function fmtParamValue(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

// ---- the statistics record ------------------------------------------------------------------

export type StatFormat = 'pctFraction' | 'pct' | 'ratio' | 'days' | 'days1' | 'int' | 'money';

export interface StatDef {
  key: string;
  label: string;
  group: 'Curve' | 'Trade' | 'Time' | 'Risk' | 'Benchmark';
  format: StatFormat;
}

export const STAT_DEFS: StatDef[] = [
  { key: 'total_return', label: 'Total Return', group: 'Curve', format: 'pctFraction' },
  { key: 'cagr', label: 'CAGR', group: 'Curve', format: 'pctFraction' },
  { key: 'sharpe_ratio', label: 'Sharpe Ratio', group: 'Curve', format: 'ratio' },
  { key: 'annual_volatility', label: 'Annual Volatility', group: 'Curve', format: 'pctFraction' },
  { key: 'sqn', label: 'SQN', group: 'Curve', format: 'ratio' },
  { key: 'r_squared', label: 'R-Squared', group: 'Curve', format: 'ratio' },
  { key: 'max_drawdown', label: 'Max Drawdown', group: 'Curve', format: 'pct' },
  { key: 'max_drawdown_duration', label: 'Max DD Duration', group: 'Curve', format: 'days' },
  { key: 'win_rate', label: 'Win Rate', group: 'Trade', format: 'pct' },
  { key: 'avg_trade', label: 'Average Trade', group: 'Trade', format: 'money' },
  { key: 'avg_win', label: 'Average Win', group: 'Trade', format: 'money' },
  { key: 'avg_loss', label: 'Average Loss', group: 'Trade', format: 'money' },
  { key: 'best_trade', label: 'Best Trade', group: 'Trade', format: 'money' },
  { key: 'worst_trade', label: 'Worst Trade', group: 'Trade', format: 'money' },
  { key: 'avg_trade_duration', label: 'Avg Duration', group: 'Trade', format: 'days1' },
  { key: 'total_trades', label: 'Total Trades', group: 'Trade', format: 'int' },
  { key: 'win_month_pct', label: 'Win Months %', group: 'Time', format: 'pct' },
  { key: 'avg_win_month', label: 'Avg Win Month', group: 'Time', format: 'pctFraction' },
  { key: 'avg_loss_month', label: 'Avg Loss Month', group: 'Time', format: 'pctFraction' },
  { key: 'best_month', label: 'Best Month', group: 'Time', format: 'pctFraction' },
  { key: 'worst_month', label: 'Worst Month', group: 'Time', format: 'pctFraction' },
  { key: 'win_year_pct', label: 'Win Years %', group: 'Time', format: 'pct' },
  { key: 'best_year', label: 'Best Year', group: 'Time', format: 'pctFraction' },
  { key: 'worst_year', label: 'Worst Year', group: 'Time', format: 'pctFraction' },
  { key: 'sortino_ratio', label: 'Sortino Ratio', group: 'Risk', format: 'ratio' },
  { key: 'calmar_ratio', label: 'Calmar Ratio', group: 'Risk', format: 'ratio' },
  { key: 'omega_ratio', label: 'Omega Ratio', group: 'Risk', format: 'ratio' },
  { key: 'value_at_risk', label: 'Value at Risk (95%)', group: 'Risk', format: 'pctFraction' },
  { key: 'expected_shortfall', label: 'Expected Shortfall', group: 'Risk', format: 'pctFraction' },
  { key: 'tail_ratio', label: 'Tail Ratio', group: 'Risk', format: 'ratio' },
  { key: 'ulcer_index', label: 'Ulcer Index', group: 'Risk', format: 'ratio' },
  { key: 'kelly_criterion', label: 'Kelly Criterion', group: 'Risk', format: 'pctFraction' },
  { key: 'skew', label: 'Skew', group: 'Risk', format: 'ratio' },
  { key: 'kurtosis', label: 'Kurtosis', group: 'Risk', format: 'ratio' },
  { key: 'probabilistic_sharpe_ratio', label: 'Probabilistic Sharpe', group: 'Risk', format: 'pctFraction' },
  { key: 'max_consecutive_wins', label: 'Max Consecutive Wins', group: 'Risk', format: 'int' },
  { key: 'max_consecutive_losses', label: 'Max Consecutive Losses', group: 'Risk', format: 'int' },
  { key: 'recovery_factor', label: 'Recovery Factor', group: 'Risk', format: 'ratio' },
  { key: 'benchmark_return', label: 'Benchmark Return', group: 'Benchmark', format: 'pctFraction' },
  { key: 'alpha', label: 'Alpha', group: 'Benchmark', format: 'pctFraction' },
  { key: 'beta', label: 'Beta', group: 'Benchmark', format: 'ratio' },
  { key: 'correlation', label: 'Correlation', group: 'Benchmark', format: 'ratio' },
  { key: 'tracking_error', label: 'Tracking Error', group: 'Benchmark', format: 'pctFraction' },
  { key: 'information_ratio', label: 'Information Ratio', group: 'Benchmark', format: 'ratio' },
];

/** The spec's display rule for one statistic. */
export function fmtStat(format: StatFormat, v: unknown): string {
  if (!isNum(v)) return MISSING;
  switch (format) {
    case 'pctFraction':
      return fmtPctFraction(v, 2);
    case 'pct':
      return fmtPct(v, 2);
    case 'ratio':
      return fmtRatio(v);
    case 'days':
      return fmtDays(v);
    case 'days1':
      return fmtDays(v, 1);
    case 'int':
      return fmtInt(v);
    case 'money':
      return fmtMoney(v);
  }
}

// ---- the summary cards ------------------------------------------------------------------------

export interface SummaryCard {
  key: string;
  label: string;
  display: string;
  tone: string;
}

const SUMMARY_FORMATS: [string, string, (v: unknown) => string, boolean][] = [
  ['final_value', 'Final Value', fmtMoney, false],
  ['total_return', 'Total Return', (v) => fmtPctFraction(v), true],
  ['annual_return', 'Annual Return', (v) => fmtPctFraction(v), true],
  ['sharpe_ratio', 'Sharpe Ratio', fmtRatio, false],
  ['max_drawdown_pct', 'Max Drawdown', (v) => fmtPct(v), false],
  ['max_drawdown', 'Max Drawdown ($)', fmtMoney, false],
  ['total_trades', 'Trades', fmtInt, false],
  ['win_rate', 'Win Rate', (v) => fmtPct(v), false],
  ['profit_factor', 'Profit Factor', fmtRatio, false],
  ['avg_win', 'Average Win', fmtMoney, false],
  ['avg_loss', 'Average Loss', fmtMoney, false],
  ['initial_cash', 'Initial Cash', fmtMoney, false],
];

export function summaryCards(summary: Record<string, unknown>): SummaryCard[] {
  return SUMMARY_FORMATS.map(([key, label, f, signed]) => ({
    key,
    label,
    display: f(summary[key]),
    tone: signed ? signClass(summary[key]) : '',
  }));
}

export const SUMMARY_LABELS: Record<string, string> = Object.fromEntries(SUMMARY_FORMATS.map(([k, l]) => [k, l]));

/** A summary figure written as its card writes it (a fraction in percent); any other as a chart value. */
export function fmtSummary(key: string, v: unknown): string {
  const f = SUMMARY_FORMATS.find(([k]) => k === key);
  return f ? f[2](v) : fmtChartValue(v);
}

export function statusClass(status: string): string {
  return `status status-${status}`;
}

// Results of one run: summary cards, statistics, charts with export, trades, result exports.

import { ApiError, backtests, results as api, type ChartConfig, type SymbolResult, type Task } from '../api';
import { chartPanel } from '../charts';
import { button, clear, download, empty, errorBox, h, loading, toast } from '../dom';
import { barClock, fmtBarTime, fmtDate, fmtMoney, fmtNumber, fmtPctFraction, signClass, summaryCards } from '../format';
import { href } from '../router';
import { normaliseStatistics, overlayDrawdown, pageCount, prepareChartOption } from '../shape';
import { statusBadge } from './runs';

export // The line charts the server samples for long runs (and narrows to a zoomed range).
const LINE_CHARTS = new Set(['equity', 'drawdown', 'underwater']);
const CHARTS: [string, string][] = [
  ['candlestick', 'Price, moving averages and volume'],
  ['equity', 'Equity, drawdown and benchmark'],
  ['underwater', 'Underwater'],
  ['monthly_heatmap', 'Monthly returns (%)'],
  ['yearly_returns', 'Yearly returns (%)'],
  ['trades', 'Trades on price'],
];

export async function resultView(main: HTMLElement, params: Record<string, string>): Promise<void> {
  const tid = params.task;
  main.append(loading('Loading the result…'));
  let summary: Record<string, unknown>;
  let task: Task | null = null;
  try {
    [summary, task] = await Promise.all([api.getSummary(tid), backtests.getTask(tid).catch(() => null)]);
  } catch (e) {
    const notYet = e instanceof ApiError && e.status === 404;
    main.replaceChildren(errorBox(e), notYet ? h('p', null, 'The result exists once the run has completed. ', h('a', { href: href(`/runs/${tid}`) }, `Watch ${tid}`)) : '');
    return;
  }
  main.replaceChildren();
  // Bar times are shown in the data's time zone.
  const clock = barClock(task);
  const exportBtn = (fmt: string, label: string) => button(label, () => void exportResult(tid, fmt), 'btn small', { 'data-result-export': fmt });
  main.append(
    h(
      'div',
      { class: 'page-head' },
      h('h1', null, `Results of ${tid}`),
      task ? statusBadge(task.status) : null,
      h('div', { class: 'head-actions' }, h('a', { class: 'btn small', href: href(`/runs/${tid}`) }, 'Task and log'), h('a', { class: 'btn small', href: href(`/compare?ids=${tid}`) }, 'Compare…'), exportBtn('json', 'Export JSON'), exportBtn('csv', 'Export CSV'), exportBtn('html', 'HTML report')),
    ),
    task ? h('p', { class: 'muted' }, [task.strategy_id, (task.symbols ?? [task.symbol]).join(', '), task.timeframe && task.timeframe !== '1d' ? task.timeframe : '', task.benchmark && task.benchmark !== task.symbol ? `benchmark ${task.benchmark}` : '', task.start_date && `${task.start_date} → ${task.end_date}`, clock.intraday ? `times in ${clock.tz}` : ''].filter(Boolean).join(' · ')) : '',
    h('section', { 'aria-label': 'Summary' }, h('ul', { class: 'cards summary', id: 'summary-cards' }, summaryCards(summary).map((c) => h('li', { class: 'card stat-card', 'data-key': c.key }, h('span', { class: 'label' }, c.label), h('span', { class: `value ${c.tone}` }, c.display))))),
  );

  const statsBox = h('div', { id: 'statistics' }, loading('Loading statistics…'));
  const chartsBox = h('div', { class: 'charts', id: 'charts' });
  const tradesBox = h('div', { id: 'trades' }, loading('Loading trades…'));
  const symbolsBox = h('div', { id: 'symbols' }, loading('Loading the breakdown…'));
  const feeds = task?.symbols ?? (task?.symbol ? [task.symbol] : []);
  // A run on several symbols: the price charts show one of them at a time.
  const symbolSel = h('select', { id: 'chart-symbol', 'aria-label': 'Symbol of the price charts' }, feeds.map((s) => h('option', { value: s }, s))) as HTMLSelectElement;
  main.append(
    h('section', { 'aria-labelledby': 'h-symbols' }, h('h2', { id: 'h-symbols' }, 'By symbol'), symbolsBox),
    h('section', { 'aria-labelledby': 'h-charts' }, h('div', { class: 'section-head' }, h('h2', { id: 'h-charts' }, 'Charts'), feeds.length > 1 ? h('label', { class: 'inline' }, 'Price charts of ', symbolSel) : null), chartsBox),
    h('section', { 'aria-labelledby': 'h-stats' }, h('h2', { id: 'h-stats' }, 'Statistics'), statsBox),
    h('section', { 'aria-labelledby': 'h-trades' }, h('h2', { id: 'h-trades' }, 'Trades'), tradesBox),
  );

  // charts
  const drawdownCfg = api.getChart(tid, 'drawdown').catch(() => null);
  const priceCharts: [string, () => void][] = [];
  for (const [type, label] of CHARTS) {
    const panel = chartPanel(`${tid}_${type}`, label, { height: type === 'candlestick' ? 440 : type === 'monthly_heatmap' ? 320 : 340 });
    panel.el.dataset.chartType = type;
    chartsBox.append(panel.el);
    // A line chart of a long run comes sampled: zooming in loads the range's exact points.
    const note = h('p', { class: 'muted small sampling-note', hidden: true, 'aria-live': 'polite' });
    panel.el.append(note);
    let range: { from: string; to: string } | undefined;
    const load = () => {
      panel.chart.showLoading({ text: 'Loading…' });
      const symbol = type === 'candlestick' || type === 'trades' ? symbolSel.value || undefined : undefined;
      api.getChart(tid, type, symbol, range)
        .then(async (cfg) => {
          let opt = prepareChartOption(cfg, type, { narrow: panel.el.clientWidth < 560, visibleBars: type === 'candlestick' ? 250 : 0, clock });
          if (type === 'equity') opt = overlayDrawdown(opt, await (range ? api.getChart(tid, 'drawdown', undefined, range).catch(() => null) : drawdownCfg));
          panel.chart.hideLoading();
          panel.set(opt);
          if (symbol) panel.el.dataset.symbol = symbol;
          showSampling(cfg.sampling);
        })
        .catch((e) => {
          panel.chart.hideLoading();
          panel.el.querySelector('.chart')?.replaceWith(errorBox(e));
          panel.el.dataset.error = 'true';
        });
    };
    const showSampling = (s: ChartConfig['sampling']) => {
      panel.el.dataset.sampled = s ? 'true' : 'false';
      const whole = button('Whole run', () => ((range = undefined), load()), 'btn small link', { 'data-action': 'whole-run' });
      if (s) note.replaceChildren(`Showing ${fmtNumber(s.points, 0)} of ${fmtNumber(s.of, 0)} points, sampled on the server: zoom in for every point.`, ' ', range ? whole : '');
      else if (range) note.replaceChildren(`Every point from ${fmtBarTime(range.from, clock)} to ${fmtBarTime(range.to, clock)}.`, ' ', whole);
      note.hidden = !s && !range;
    };
    if (LINE_CHARTS.has(type)) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      panel.chart.on('datazoom', () => {
        if (panel.el.dataset.sampled !== 'true') return;
        clearTimeout(timer);
        timer = setTimeout(() => {
          const opt = panel.chart.getOption() as { dataZoom?: { start?: number; end?: number }[]; xAxis?: { data?: string[] }[] };
          const cats = opt.xAxis?.[0]?.data ?? [];
          const z = opt.dataZoom?.[0];
          if (!cats.length || !z || (z.start ?? 0) <= 0 && (z.end ?? 100) >= 100) return;
          const at = (p: number) => cats[Math.min(cats.length - 1, Math.max(0, Math.round(((cats.length - 1) * p) / 100)))];
          range = { from: at(z.start ?? 0), to: at(z.end ?? 100) };
          load();
        }, 400);
      });
    }
    if (type === 'candlestick' || type === 'trades') priceCharts.push([type, load]);
    load();
  }
  symbolSel.addEventListener('change', () => priceCharts.forEach(([, load]) => load()));

  // the breakdown by symbol
  api.getSymbols(tid).then(
    (rows) => symbolsBox.replaceChildren(symbolTable(rows)),
    (e) => symbolsBox.replaceChildren(errorBox(e)),
  );

  // statistics
  api.getStatistics(tid).then(
    (raw) => {
      const groups = normaliseStatistics(raw);
      clear(statsBox);
      if (!groups.length) {
        statsBox.append(empty('No statistics for this result.'));
        return;
      }
      statsBox.append(
        h(
          'div',
          { class: 'stat-groups' },
          groups.map((g) =>
            h(
              'section',
              { class: 'stat-group card', 'aria-label': `${g.name} statistics` },
              h('h3', null, g.name),
              h(
                'ul',
                { class: 'stat-list' },
                g.items.map((it) =>
                  h(
                    'li',
                    { 'data-key': it.key },
                    h('details', null, h('summary', null, h('span', { class: 'label' }, it.label), h('span', { class: `value ${typeof it.value === 'number' && /return|month|year|trade|win|loss/.test(it.key) ? signClass(it.value) : ''}` }, it.display)), h('p', { class: 'explain' }, it.explanation || 'No explanation available.')),
                  ),
                ),
              ),
            ),
          ),
        ),
      );
    },
    (e) => statsBox.replaceChildren(errorBox(e)),
  );

  // trades
  let skip = 0;
  let limit = 20;
  const loadTrades = async () => {
    try {
      const d = await api.getTrades(tid, skip, limit);
      renderTrades(d.total, d.trades);
    } catch (e) {
      tradesBox.replaceChildren(errorBox(e));
    }
  };
  const renderTrades = (total: number, trades: Record<string, unknown>[]) => {
    clear(tradesBox);
    if (!total) {
      tradesBox.append(empty('This run made no trades.'));
      return;
    }
    const pages = pageCount(total, limit);
    const page = Math.floor(skip / limit) + 1;
    const sizeSel = h('select', { id: 'trade-page-size', 'aria-label': 'Trades per page' }, [10, 20, 50, 100].map((n) => h('option', { value: String(n), selected: n === limit }, `${n} per page`))) as HTMLSelectElement;
    sizeSel.addEventListener('change', () => {
      limit = Number(sizeSel.value);
      skip = 0;
      void loadTrades();
    });
    const prev = button('← Previous', () => ((skip = Math.max(0, skip - limit)), void loadTrades()), 'btn small', { disabled: page <= 1, id: 'trades-prev' });
    const next = button('Next →', () => ((skip = skip + limit), void loadTrades()), 'btn small', { disabled: page >= pages, id: 'trades-next' });
    tradesBox.append(
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table trades-table' },
          h('caption', { class: 'sr-only' }, `Trades ${skip + 1} to ${Math.min(total, skip + limit)} of ${total}`),
          h('thead', null, h('tr', null, h('th', { scope: 'col' }, '#'), h('th', { scope: 'col' }, 'Date'), feeds.length > 1 ? h('th', { scope: 'col' }, 'Symbol') : null, h('th', { scope: 'col' }, 'Type'), h('th', { scope: 'col', class: 'num' }, 'Price'), h('th', { scope: 'col', class: 'num' }, 'Size'), h('th', { scope: 'col', class: 'num' }, 'P&L'))),
          h(
            'tbody',
            null,
            trades.map((t, i) =>
              h(
                'tr',
                null,
                h('td', { class: 'muted' }, skip + i + 1),
                h('td', null, fmtBarTime(String(t.date ?? t.datetime ?? ''), clock)),
                feeds.length > 1 ? h('td', null, String(t.symbol ?? '')) : null,
                h('td', null, h('span', { class: `side ${String(t.type).toLowerCase()}` }, String(t.type ?? ''))),
                h('td', { class: 'num' }, fmtNumber(t.price, 2)),
                h('td', { class: 'num' }, fmtNumber(t.size, 0)),
                h('td', { class: `num ${signClass(t.pnl)}` }, t.pnl === null || t.pnl === undefined ? '—' : fmtMoney(t.pnl)),
              ),
            ),
          ),
        ),
      ),
      h('nav', { class: 'pager', 'aria-label': 'Trades pages' }, prev, h('span', { 'aria-live': 'polite', id: 'trades-page' }, `Page ${page} of ${pages} · ${total} trades`), next, sizeSel),
    );
  };
  void loadTrades();
}

/** The per-symbol breakdown: each feed's share of the run, summing to the portfolio's. */
function symbolTable(rows: SymbolResult[]): HTMLElement {
  if (!rows.length) return empty('No breakdown for this result.');
  const th = (label: string, num = true, title?: string) => h('th', { scope: 'col', class: num ? 'num' : '', title }, label);
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table symbols-table' },
      h('caption', { class: 'sr-only' }, 'Profit and loss, trades and exposure of each symbol'),
      h('thead', null, h('tr', null, th('Symbol', false), th('P&L', true, 'Realised and unrealised, net of commission'), th('Contribution', true, 'P&L as a share of the initial cash: the rows sum to the total return'), th('Trades', true, 'Closed round trips (won / lost)'), th('Open', true, 'Round trips still open at the end'), th('Commission'), th('Exposure', true, 'Share of the bars that ended holding the symbol'), th('Final position'))),
      h(
        'tbody',
        null,
        rows.map((r) =>
          h(
            'tr',
            { 'data-symbol': r.symbol },
            h('th', { scope: 'row' }, r.symbol),
            h('td', { class: `num ${signClass(r.pnl)}` }, fmtMoney(r.pnl)),
            h('td', { class: `num ${signClass(r.contribution)}` }, fmtPctFraction(r.contribution)),
            h('td', { class: 'num' }, `${r.trades} (${r.won} / ${r.lost})`),
            h('td', { class: 'num' }, r.open_trades),
            h('td', { class: 'num' }, fmtMoney(r.commission)),
            h('td', { class: 'num' }, fmtPctFraction(r.exposure, 1)),
            h('td', { class: 'num' }, r.final_size ? `${fmtNumber(r.final_size, 0)} @ ${fmtNumber(r.final_price, 2)}` : '—'),
          ),
        ),
      ),
    ),
  );
}

export async function exportResult(tid: string, fmt: string): Promise<void> {
  try {
    const data = await api.getExport(tid, fmt);
    if (fmt === 'json') download(`${tid}.json`, JSON.stringify(data, null, 2), 'application/json');
    else if (fmt === 'csv') download(`${tid}.csv`, typeof data === 'string' ? data : String((data as { data?: string }).data ?? ''), 'text/csv');
    else download(`${tid}_report.${fmt}`, typeof data === 'string' ? data : JSON.stringify(data), fmt === 'html' ? 'text/html' : 'application/octet-stream');
  } catch (e) {
    toast((e as Error).message, 'error');
  }
}

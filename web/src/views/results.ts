// Results of one run: summary cards, statistics, charts with export, trades, result exports.

import { ApiError, backtests, results as api, strategies, type ChartConfig, type DrawdownPeriod, type Fill, type Finding, type RoundTrip, type StrategyResult, type SymbolResult, type Task, type BacktestRequest } from '../api';
import { chartPanel, type ChartPanel } from '../charts';
import { button, clear, download, empty, errorBox, h, keepFocus, loading, toast } from '../dom';
import { barClock, fmtBarTime, type BarClock, fmtInt, fmtMoney, fmtNumber, fmtPct, fmtPctFraction, signClass, signedStat, summaryCards } from '../format';
import { href } from '../router';
import { palette } from '../settings';
import { BUY_COLOUR, SELL_COLOUR, maPeriods, normaliseStatistics, overlayDrawdown, pageCount, prepareChartOption } from '../shape';
import { analyseTrades, candlesOf, chartFeeds, excursions, isLong, tradeReturn, type Candles, type SideStats, type TradeAnalysis } from '../trades';
import { lookaheadBadge, lookaheadNote, statusBadge } from './runs';
import { analyzersPanel } from './analyzers';
import { monteCarloSection } from './montecarlo';
import { provenanceCard, reproduceButton, reproductionCard } from './provenance';

export // The line charts the server samples for long runs (and narrows to a zoomed range).
const LINE_CHARTS = new Set(['equity', 'drawdown', 'underwater', 'rolling_sharpe']);
const CHARTS: [string, string][] = [
  ['candlestick', 'Price, moving averages and volume'],
  ['equity', 'Equity, drawdown and benchmark'],
  ['underwater', 'Underwater'],
  ['monthly_heatmap', 'Monthly returns (%)'],
  ['yearly_returns', 'Yearly returns (%)'],
  ['trades', 'Trades on price'],
  ['rolling_sharpe', 'Rolling Sharpe ratio (half a year)'],
  ['returns_histogram', 'Returns per bar (%)'],
];

// findingsList shows what the result should be read with: warnings and critical findings
// first, as cards, then the information in one muted list (docs/backtests.md, Findings).
export function findingsList(fs: Finding[]): HTMLElement {
  const rank = { critical: 0, warning: 1, info: 2 } as const;
  const sorted = [...fs].sort((a, b) => rank[a.severity] - rank[b.severity]);
  const item = (f: Finding) =>
    h('li', { class: `finding finding-${f.severity}`, 'data-finding': f.id, 'data-severity': f.severity }, h('span', { class: `status finding-chip` }, f.severity), ' ', h('strong', null, f.title), h('span', { class: 'finding-detail' }, ` ${f.detail}`));
  const serious = sorted.filter((f) => f.severity !== 'info');
  const info = sorted.filter((f) => f.severity === 'info');
  return h(
    'div',
    { class: 'card findings' },
    h('h2', { class: 'findings-head' }, serious.length ? `Findings: ${serious.length} to read before trusting the figures` : 'Findings: nothing suspect'),
    serious.length ? h('ul', { class: 'findings-list' }, serious.map(item)) : null,
    info.length ? h('ul', { class: 'findings-list muted small' }, info.map(item)) : null,
  );
}

export async function resultView(main: HTMLElement, params: Record<string, string>): Promise<void> {
  const tid = params.task;
  main.append(loading('Loading the result…'));
  let summary: Record<string, unknown>;
  let task: Task | null = null;
  // The task is asked for apart: when the result is missing, it tells why.
  let taskGone = false;
  const taskP = backtests.getTask(tid).catch((e) => {
    taskGone = e instanceof ApiError && e.status === 404;
    return null;
  });
  try {
    [summary, task] = await Promise.all([api.getSummary(tid), taskP]);
  } catch (e) {
    task = await taskP;
    main.replaceChildren(errorBox(e), missingResult(tid, e, task, taskGone));
    return;
  }
  main.replaceChildren();
  // Bar times are shown in the data's time zone.
  const clock = barClock(task);
  const strategyName = task?.strategy_id ? await strategies.getStrategy(task.strategy_id).then((s) => s.name, () => task!.strategy_id) : '';
  const lookaheadBox = h('div', { id: 'lookahead' }, task?.lookahead === true ? lookaheadNote('run') : '');
  const reproBox = h('div', { id: 'reproduce' }, task?.reproduction ? reproductionCard(tid, task.reproduction) : '');
  const findingsBox = h('section', { id: 'findings', 'aria-label': 'Findings' });
  void api.getFindings(tid).then(
    (fs) => findingsBox.replaceChildren(findingsList(fs)),
    () => {},
  );
  const exportBtn = (fmt: string, label: string) => button(label, () => void exportResult(tid, fmt), 'btn small', { 'data-result-export': fmt });
  main.append(
    h(
      'div',
      { class: 'page-head' },
      h('h1', null, `Results of ${tid}`),
      task ? statusBadge(task.status) : null,
      task?.lookahead === true ? lookaheadBadge() : null,
      h('div', { class: 'head-actions' }, task ? lookaheadButton(task, () => lookaheadBox) : null, task ? reproduceButton(task, () => reproBox) : null, h('a', { class: 'btn small', href: href(`/runs/${tid}`) }, 'Task and log'), h('a', { class: 'btn small', href: href(`/compare?ids=${tid}`) }, 'Compare…'), h('a', { class: 'btn small', href: href(`/diff?a=${tid}`), 'data-diff': '' }, 'Diff…'), exportBtn('json', 'Export JSON'), exportBtn('csv', 'Export CSV'), exportBtn('html', 'HTML report')),
    ),
    task ? h('p', { class: 'muted', id: 'result-subtitle' }, [strategyName && strategyName !== task.strategy_id ? `${strategyName} (${task.strategy_id} v${task.strategy_version})` : task.strategy_id, (task.symbols ?? [task.symbol]).join(', '), task.timeframe && task.timeframe !== '1d' ? task.timeframe : '', task.benchmark && task.benchmark !== task.symbol ? `benchmark ${task.benchmark}` : '', task.start_date && `${task.start_date} → ${task.end_date}`, clock.intraday ? `times in ${clock.tz}` : ''].filter(Boolean).join(' · ')) : '',
    lookaheadBox,
    reproBox,
    findingsBox,
    h('section', { 'aria-label': 'Summary' }, h('ul', { class: 'cards summary', id: 'summary-cards' }, summaryCards(summary).map((c) => h('li', { class: 'card stat-card', 'data-key': c.key }, h('span', { class: 'label' }, c.label), h('span', { class: `value ${c.tone}` }, c.display))))),
  );

  const statsBox = h('div', { id: 'statistics' }, loading('Loading statistics…'));
  const drawdownsBox = h('div', { id: 'drawdowns' }, loading('Loading the drawdowns…'));
  const chartsBox = h('div', { class: 'charts', id: 'charts' });
  const tradesBox = h('div', { id: 'trades' }, loading('Loading trades…'));
  const symbolsBox = h('div', { id: 'symbols' }, loading('Loading the breakdown…'));
  // A run of several strategies: a section of their own, and the trades name theirs.
  const strategiesSection = h('section', { 'aria-labelledby': 'h-strategies', id: 'strategies-section', hidden: true }, h('h2', { id: 'h-strategies' }, 'By strategy'));
  let strategyNames: string[] = [];
  const strategyOf = (i: number | undefined) => strategyNames[i ?? 0] ?? String(i ?? 0);
  const analyzersBox = h('div', { id: 'analyzers' }, loading('Loading the analyzers…'));
  const taskFeeds = task?.symbols ?? (task?.symbol ? [task.symbol] : []);
  // A run on several symbols: the price charts show one of them at a time. A strategy that
  // joined feeds (static chain or rollover) traded the joined ones, which the symbols route
  // names: the charts and the trades show those in place of the contracts.
  let feeds = taskFeeds;
  const symbolSel = h('select', { id: 'chart-symbol', 'aria-label': 'Symbol of the price charts' }, feeds.map((s) => h('option', { value: s }, s))) as HTMLSelectElement;
  const symbolLabel = h('label', { class: 'inline', hidden: feeds.length <= 1 }, 'Price charts of ', symbolSel);
  const symbolRows = api.getSymbols(tid);
  const feedsReady =
    taskFeeds.length > 1
      ? symbolRows.then(
          (rows) => {
            feeds = chartFeeds(taskFeeds, rows);
            if (feeds === taskFeeds) return;
            symbolSel.replaceChildren(...feeds.map((s) => h('option', { value: s }, s)));
            symbolLabel.hidden = feeds.length <= 1;
          },
          () => {},
        )
      : Promise.resolve();
  main.append(
    h('section', { 'aria-labelledby': 'h-symbols' }, h('h2', { id: 'h-symbols' }, 'By symbol'), symbolsBox),
    strategiesSection,
    h('section', { 'aria-labelledby': 'h-charts' }, h('div', { class: 'section-head' }, h('h2', { id: 'h-charts' }, 'Charts'), symbolLabel), chartsBox),
    h('section', { 'aria-labelledby': 'h-stats' }, h('h2', { id: 'h-stats' }, 'Statistics'), statsBox),
    h('section', { 'aria-labelledby': 'h-analyzers' }, h('h2', { id: 'h-analyzers' }, 'Analyzers'), analyzersBox),
    h('section', { 'aria-labelledby': 'h-drawdowns' }, h('h2', { id: 'h-drawdowns' }, 'Drawdown periods'), drawdownsBox),
    monteCarloSection(tid, Number(summary.total_trades) || 0),
    h('section', { 'aria-labelledby': 'h-trades' }, h('h2', { id: 'h-trades' }, 'Trades'), tradesBox),
    provenanceCard(task?.provenance),
  );

  const allTrips = api.allRoundTrips(tid).catch(() => null);
  // charts
  const drawdownCfg = api.getChart(tid, 'drawdown').catch(() => null);
  const priceCharts: [string, () => void][] = [];
  // The price chart's bars (for the trades' excursions and zooming to a trade) and its trade
  // markers, which come from the trades chart of the same symbol.
  const priceRows: { dates: string[]; candles: Candles } = { dates: [], candles: candlesOf([]) };
  let pricePanel: ChartPanel | undefined;
  let priceDone: () => void = () => {};
  let priceReady = new Promise<void>((r) => (priceDone = r));
  const tradeCharts = new Map<string, Promise<ChartConfig | null>>();
  const tradesChartOf = (symbol: string | undefined) => {
    const key = symbol ?? '';
    if (!tradeCharts.has(key)) tradeCharts.set(key, api.getChart(tid, 'trades', symbol).catch(() => null));
    return tradeCharts.get(key)!;
  };
  // The price chart's moving averages are the strategy's own periods when its parameters name them.
  const ownMAs = maPeriods(task?.strategy_params as Record<string, unknown> | undefined);
  for (const [type, label] of CHARTS) {
    const panel = chartPanel(`${tid}_${type}`, label, { height: type === 'candlestick' || type === 'equity' ? 440 : type === 'monthly_heatmap' ? 340 : 340 });
    panel.el.dataset.chartType = type;
    chartsBox.append(panel.el);
    // A line chart of a long run comes sampled: zooming in loads the range's exact points.
    const note = h('p', { class: 'muted small sampling-note', hidden: true, 'aria-live': 'polite' });
    panel.el.append(note);
    let range: { from: string; to: string } | undefined;
    const load = () => {
      panel.chart.showLoading({ text: 'Loading…' });
      const price = type === 'candlestick' || type === 'trades';
      let symbol: string | undefined;
      const pal = palette();
      (price ? feedsReady : Promise.resolve())
        .then(() => {
          symbol = price ? symbolSel.value || undefined : undefined;
          return type === 'trades' ? tradesChartOf(symbol).then((c) => c ?? api.getChart(tid, type, symbol)) : api.getChart(tid, type, symbol, range, type === 'candlestick' ? ownMAs : undefined);
        })
        .then(async (cfg) => {
          let opt = prepareChartOption(cfg, type, { narrow: panel.el.clientWidth < 560, visibleBars: type === 'candlestick' ? 250 : 0, clock });
          if (type === 'equity') opt = overlayDrawdown(opt, await (range ? api.getChart(tid, 'drawdown', undefined, range).catch(() => null) : drawdownCfg), pal);
          if (type === 'candlestick') {
            const rows = ((cfg.series as { data?: unknown[] }[])[0]?.data ?? []) as unknown[];
            priceRows.dates = rows.map((r) => String(Array.isArray(r) ? r[0] : ''));
            priceRows.candles = candlesOf(rows);
            opt = withTradeMarkers(opt, await tradesChartOf(symbol), await allTrips, feeds.length > 1 ? symbol ?? feeds[0] : undefined, priceRows.candles);
            pricePanel = panel;
          }
          panel.chart.hideLoading();
          panel.set(opt);
          if (symbol) panel.el.dataset.symbol = symbol;
          showSampling(cfg.sampling);
        })
        .catch((e) => {
          panel.chart.hideLoading();
          panel.el.querySelector('.chart')?.replaceWith(errorBox(e));
          panel.el.dataset.error = 'true';
        })
        .finally(() => type === 'candlestick' && priceDone());
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
      panel.on('datazoom', () => {
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
  symbolSel.addEventListener('change', () => {
    priceReady = new Promise<void>((r) => (priceDone = r));
    tradeCharts.clear();
    priceCharts.forEach(([, load]) => load());
    // the excursions in the table are those of the symbol shown
    void priceReady.then(loadTrades);
  });

  // the breakdown by symbol
  const strategiesLoaded = api.getStrategies(tid).then(
    (rows) => {
      strategyNames = rows.map((r) => r.label);
      if (rows.length) {
        strategiesSection.hidden = false;
        strategiesSection.append(strategyTable(rows));
      }
    },
    (e) => {
      strategiesSection.hidden = false;
      strategiesSection.append(errorBox(e));
    },
  );
  symbolRows.then(
    (rows) => symbolsBox.replaceChildren(symbolTable(rows)),
    (e) => symbolsBox.replaceChildren(errorBox(e)),
  );

  // backtrader's analyzers
  api.getAnalyzers(tid).then(
    (a) => analyzersBox.replaceChildren(analyzersPanel(a)),
    (e) => analyzersBox.replaceChildren(errorBox(e)),
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
                    h('details', null, h('summary', null, h('span', { class: 'label' }, it.label), h('span', { class: `value ${signedStat(it.key) ? signClass(it.value) : ''}` }, it.display)), h('p', { class: 'explain' }, it.explanation || 'No explanation available.')),
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

  api.getDrawdowns(tid, 10).then(
    (rows) => drawdownsBox.replaceChildren(drawdownTable(rows, clock)),
    (e) => drawdownsBox.replaceChildren(errorBox(e)),
  );

  // trades: round trips by default, the fills on a second tab, the analysis of all of them
  const analysisBox = h('div', { id: 'trade-analysis' }, loading('Analysing the trades…'));
  tradesBox.before(analysisBox);
  let kind: 'round_trips' | 'executions' = 'round_trips';
  let skip = 0;
  let limit = 20;
  const loadTrades = async () => {
    try {
      if (kind === 'round_trips') {
        const d = await api.getRoundTrips(tid, skip, limit);
        keepFocus(tradesBox, () => renderTrades(d.total, roundTripTable(d.trades)));
      } else {
        const d = await api.getFills(tid, skip, limit);
        keepFocus(tradesBox, () => renderTrades(d.total, fillTable(d.trades)));
      }
    } catch (e) {
      tradesBox.replaceChildren(errorBox(e));
    }
  };
  const tab = (k: typeof kind, label: string) =>
    h('button', { type: 'button', role: 'tab', id: `trades-tab-${k}`, 'aria-selected': String(kind === k), 'aria-controls': 'trades-panel', tabindex: kind === k ? '0' : '-1', onclick: () => {
      if (kind === k) return;
      kind = k;
      skip = 0;
      void loadTrades();
    } }, label);
  const roundTripTable = (trips: RoundTrip[]) => {
    const candles = priceRows.candles;
    const withExcursions = candles.low.length > 0;
    const th = (label: string, num = false, title?: string) => h('th', { scope: 'col', class: num ? 'num' : undefined, title }, label);
    return h(
      'table',
      { class: 'table trades-table round-trips' },
      h('caption', { class: 'sr-only' }, 'Round trips: select one to zoom the price chart to it'),
      h('thead', null, h('tr', null, th('#'), feeds.length > 1 ? th('Symbol') : null, strategyNames.length ? th('Strategy') : null, th('Side'), th('Entry'), th('Exit'), th('Held', true, 'Bars from entry to exit'), th('Size', true), th('Entry price', true), th('Exit price', true), th('Net P&L', true, 'After commission'), th('Fees', true, 'Commission paid on entry and exit'), th('Return', true, 'Net P&L over the entry value'), withExcursions ? th('MAE', true, 'Maximum adverse excursion: how far the price went against the trade') : null, withExcursions ? th('MFE', true, 'Maximum favourable excursion: how far the price went for the trade') : null)),
      h(
        'tbody',
        null,
        trips.map((t) => {
          const ret = tradeReturn(t);
          const exc = withExcursions && (feeds.length <= 1 || t.symbol === symbolSel.value) ? excursions(t, candles) : null;
          const zoom = () => zoomPriceTo(t);
          return h(
            'tr',
            { 'data-seq': t.seq, class: 'clickable', tabindex: '0', title: 'Zoom the price chart to this trade', onclick: zoom, onkeydown: (e: KeyboardEvent) => (e.key === 'Enter' || e.key === ' ') && (e.preventDefault(), zoom()) },
            h('td', { class: 'muted' }, t.seq),
            feeds.length > 1 ? h('td', null, t.symbol) : null,
            strategyNames.length ? h('td', { class: 'strategy' }, strategyOf(t.strategy)) : null,
            h('td', null, h('span', { class: `side ${isLong(t) ? 'buy' : 'sell'}` }, isLong(t) ? 'Long' : 'Short')),
            h('td', null, fmtBarTime(t.entry_date, clock)),
            h('td', null, t.exit_date ? fmtBarTime(t.exit_date, clock) : h('span', { class: 'muted' }, 'open')),
            h('td', { class: 'num' }, `${fmtInt(t.bars_held)} ${t.bars_held === 1 ? 'bar' : 'bars'}`),
            h('td', { class: 'num' }, fmtNumber(Math.abs(t.size), 0)),
            h('td', { class: 'num' }, fmtNumber(t.entry_price, 2)),
            h('td', { class: 'num' }, t.exit_price === null ? '—' : fmtNumber(t.exit_price, 2)),
            h('td', { class: `num ${signClass(t.pnl_net)}` }, fmtMoney(t.pnl_net)),
            h('td', { class: 'num' }, fmtMoney(t.commission)),
            h('td', { class: `num ${signClass(ret)}` }, fmtPctFraction(ret)),
            withExcursions ? h('td', { class: 'num' }, exc ? fmtPctFraction(exc.mae) : '—') : null,
            withExcursions ? h('td', { class: 'num' }, exc ? fmtPctFraction(exc.mfe) : '—') : null,
          );
        }),
      ),
    );
  };
  const fillTable = (fills: Fill[]) =>
    h(
      'table',
      { class: 'table trades-table fills' },
      h('caption', { class: 'sr-only' }, 'Fills: one row per execution'),
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, '#'), h('th', { scope: 'col' }, 'Date'), feeds.length > 1 ? h('th', { scope: 'col' }, 'Symbol') : null, strategyNames.length ? h('th', { scope: 'col' }, 'Strategy') : null, h('th', { scope: 'col' }, 'Type'), h('th', { scope: 'col', class: 'num' }, 'Price'), h('th', { scope: 'col', class: 'num' }, 'Size'), h('th', { scope: 'col', class: 'num' }, 'Value'), h('th', { scope: 'col', class: 'num' }, 'Fees'), h('th', { scope: 'col', class: 'num', title: 'P&L realised by the fill; none for a fill that opens or adds to a position' }, 'Realised P&L'))),
      h(
        'tbody',
        null,
        fills.map((t, i) =>
          h(
            'tr',
            null,
            h('td', { class: 'muted' }, skip + i + 1),
            h('td', null, fmtBarTime(String(t.date ?? ''), clock)),
            feeds.length > 1 ? h('td', null, String(t.symbol ?? '')) : null,
            strategyNames.length ? h('td', { class: 'strategy' }, strategyOf(t.strategy)) : null,
            h(
              'td',
              null,
              h('span', { class: `side ${String(t.type).toLowerCase()}` }, String(t.type ?? '')),
              // an order filled over several bars (a volume filler): every part but its last
              t.status === 'Partial' ? h('span', { class: 'fill-partial', title: `Order ${t.order_ref} filled in part: the rest fills on later bars` }, 'Partial') : null,
            ),
            h('td', { class: 'num' }, fmtNumber(t.price, 2)),
            h('td', { class: 'num' }, fmtNumber(t.size, 0)),
            h('td', { class: 'num' }, fmtMoney(t.value)),
            h('td', { class: 'num' }, fmtMoney(t.commission)),
            h('td', { class: `num ${signClass(t.pnl)}` }, t.pnl ? fmtMoney(t.pnl) : '—'),
          ),
        ),
      ),
    );
  const renderTrades = (total: number, table: HTMLElement) => {
    clear(tradesBox);
    const tabs = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Trades as' }, tab('round_trips', 'Round trips'), tab('executions', 'Fills'));
    tabs.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
      const other = tabs.querySelector<HTMLButtonElement>('[aria-selected="false"]');
      other?.click();
      other?.focus();
    });
    tradesBox.append(tabs);
    if (!total) {
      tradesBox.append(h('div', { id: 'trades-panel', role: 'tabpanel', 'aria-labelledby': `trades-tab-${kind}` }, empty('This run made no trades.')));
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
    const noun = kind === 'round_trips' ? 'round trips' : 'fills';
    tradesBox.append(
      h('div', { id: 'trades-panel', role: 'tabpanel', 'aria-labelledby': `trades-tab-${kind}` }, h('div', { class: 'table-wrap' }, table), h('nav', { class: 'pager', 'aria-label': 'Trades pages' }, prev, h('span', { 'aria-live': 'polite', id: 'trades-page' }, `Page ${page} of ${pages} · ${fmtInt(total)} ${noun}`), next, sizeSel)),
    );
  };
  // The trades wait for the price chart's bars (their excursions come from them).
  void Promise.all([priceReady, strategiesLoaded]).then(loadTrades);
  void allTrips.then((trips) => analysisBox.replaceChildren(trips ? analysisTable(analyseTrades(trips)) : empty('The trade analysis could not be loaded.')));

  /** Zooms the price chart to a trade (a few bars either side) and brings it into view. */
  function zoomPriceTo(t: RoundTrip) {
    if (feeds.length > 1 && t.symbol !== symbolSel.value) {
      symbolSel.value = t.symbol;
      symbolSel.dispatchEvent(new Event('change'));
      void priceReady.then(() => zoomPriceTo(t));
      return;
    }
    const panel = pricePanel;
    const dates = priceRows.dates;
    const i = dates.indexOf(t.entry_date);
    let j = t.exit_date ? dates.indexOf(t.exit_date) : dates.length - 1;
    if (!panel || i < 0) return;
    if (j < i) j = i;
    const pad = Math.max(5, Math.round((j - i) * 0.3));
    const from = Math.max(0, i - pad);
    const to = Math.min(dates.length - 1, j + pad);
    panel.chart.dispatchAction({ type: 'dataZoom', startValue: from, endValue: to });
    panel.el.dataset.zoom = `${dates[from]}..${dates[to]}`;
    highlightTrade(panel, t, dates[dates.length - 1]);
    for (const row of tradesBox.querySelectorAll('.round-trips tbody tr')) {
      const on = (row as HTMLElement).dataset.seq === String(t.seq);
      row.classList.toggle('selected', on);
      if (on) row.setAttribute('aria-current', 'true');
      else row.removeAttribute('aria-current');
    }
    panel.el.scrollIntoView({ block: 'center', behavior: 'smooth' });
  }
}

/** The trade analysis: all, long and short closed round trips side by side. */
function analysisTable(a: TradeAnalysis): HTMLElement {
  if (!a.all.trades) return empty(a.open ? `${a.open} trade still open at the end; none closed.` : 'No closed trades to analyse.');
  const cols: [string, SideStats][] = [['All', a.all], ['Long', a.long], ['Short', a.short]];
  const rows: [string, string, (s: SideStats) => string, ((s: SideStats) => number | null)?][] = [
    ['Trades', 'Closed round trips, and how many of them won', (s) => `${fmtInt(s.trades)} (${fmtInt(s.won)} won)`],
    ['Win rate', 'Share of trades with a positive net P&L', (s) => fmtPctFraction(s.winRate)],
    ['Net P&L', 'Sum of the net P&L', (s) => fmtMoney(s.netPnL), (s) => s.netPnL],
    ['Expectancy', 'Mean net P&L per trade: what one more trade is worth on average', (s) => fmtMoney(s.expectancy), (s) => s.expectancy],
    ['Average return', 'Mean return per trade on its entry value', (s) => fmtPctFraction(s.avgReturn), (s) => s.avgReturn],
    ['Average win', '', (s) => fmtMoney(s.avgWin), (s) => s.avgWin],
    ['Average loss', '', (s) => fmtMoney(s.avgLoss), (s) => s.avgLoss],
    ['Profit factor', 'Gross wins over gross losses', (s) => fmtNumber(s.profitFactor, 2)],
    ['Holding time', 'Mean bars from entry to exit', (s) => (s.avgBars === null ? '—' : `${fmtNumber(s.avgBars, 1)} bars`)],
  ];
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table analysis-table' },
      h('caption', null, `Trade analysis${a.open ? ` (${a.open} open at the end, not counted)` : ''}`),
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, ''), cols.map(([c]) => h('th', { scope: 'col', class: 'num' }, c)))),
      h('tbody', null, rows.map(([label, title, f, sign]) => h('tr', { 'data-row': label }, h('th', { scope: 'row', title: title || undefined }, label), cols.map(([, s]) => h('td', { class: `num ${s.trades && sign ? signClass(sign(s)) : ''}` }, s.trades ? f(s) : '—'))))),
    ),
  );
}

// Trade markers in colours of their own (the candles are green and red): blue buys below
// the bar pointing up at it, orange sells above the bar pointing down, both outlined white.
const MARK_GAP = 10; // pixels between a bar's end and its marker

/**
 * The candlestick option with the run's fills (from the trades chart) as markers below (buys)
 * and above (sells) their bars, and each closed round trip as a line from its entry to its
 * exit, green for a gain and red for a loss.
 */
function withTradeMarkers(opt: Record<string, unknown>, trades: ChartConfig | null, trips: RoundTrip[] | null, symbol: string | undefined, candles: Candles): Record<string, unknown> {
  const marks = ((trades?.series ?? []) as Record<string, unknown>[]).filter((s) => s.type === 'scatter');
  const pal = palette();
  const series = (opt.series as Record<string, unknown>[]).map((s, i) => (i === 0 ? { ...s, id: 'price' } : s));
  const place = (rows: unknown[], buy: boolean) =>
    rows.flatMap((r) => {
      if (!Array.isArray(r)) return [];
      const at = candles.at.get(String(r[0]));
      if (at === undefined) return [];
      // [date, where the marker sits, price, size, P&L]: the tooltip shows the price
      return [[r[0], buy ? candles.low[at] : candles.high[at], r[1], r[2], r[3]]];
    });
  const added: Record<string, unknown>[] = [];
  for (const m of marks) {
    const buy = /^buy/i.test(String(m.name ?? ''));
    added.push({
      name: buy ? '▲ Buy' : '▼ Sell',
      type: 'scatter',
      data: place((m.data as unknown[]) ?? [], buy),
      dimensions: ['date', 'at', 'Price', 'Size', 'P&L'],
      encode: { x: 0, y: 1, tooltip: [2, 3] },
      symbol: 'triangle',
      symbolRotate: buy ? 0 : 180,
      symbolSize: 14,
      symbolOffset: [0, buy ? MARK_GAP : -MARK_GAP],
      itemStyle: { color: buy ? BUY_COLOUR : SELL_COLOUR, borderColor: '#ffffff', borderWidth: 1 },
      xAxisIndex: 0,
      yAxisIndex: 0,
      z: 5,
    });
  }
  const closed = (trips ?? []).filter((t) => t.exit_date && t.exit_price !== null && (!symbol || t.symbol === symbol) && candles.at.has(t.entry_date) && candles.at.has(t.exit_date));
  if (closed.length) {
    series[0] = {
      ...series[0],
      markLine: {
        silent: true,
        symbol: ['circle', 'arrow'],
        symbolSize: 6,
        label: { show: false },
        animation: false,
        data: closed.map((t) => [
          { coord: [t.entry_date, t.entry_price], lineStyle: { color: t.pnl_net >= 0 ? pal.up : pal.down, width: 1.5, type: 'solid', opacity: 0.9 } },
          { coord: [t.exit_date, t.exit_price] },
        ]),
      },
    };
  }
  const legend = opt.legend as { data?: unknown[] } | undefined;
  return { ...opt, series: [...series, ...added], legend: legend?.data ? { ...legend, data: [...legend.data, ...added.map((s) => s.name)] } : legend };
}

/** Highlights a round trip on the price chart: a band from its entry to its exit bar. */
function highlightTrade(panel: ChartPanel, t: RoundTrip, last: string): void {
  const to = t.exit_date ?? last;
  panel.chart.setOption({
    series: [
      {
        id: 'price',
        markArea: {
          silent: true,
          itemStyle: { color: 'rgba(255, 193, 7, 0.22)', borderColor: '#f0b400', borderWidth: 1 },
          label: { show: true, position: 'insideTop', formatter: `Trade ${t.seq}`, color: palette().text },
          data: [[{ xAxis: t.entry_date }, { xAxis: to }]],
        },
      },
    ],
  });
  panel.el.dataset.selectedTrade = String(t.seq);
}

/** The per-symbol breakdown: each feed's share of the run, summing to the portfolio's. */
/** The deepest falls below a previous peak: when, how deep, how long, and whether they recovered. */
function drawdownTable(rows: DrawdownPeriod[], clock: BarClock): HTMLElement {
  if (!rows.length) return empty('The equity never fell below a previous peak.');
  const th = (label: string, num = true, title?: string) => h('th', { scope: 'col', class: num ? 'num' : '', title }, label);
  const days = (d: number) => `${fmtNumber(d, Number.isInteger(d) ? 0 : 1)} d`;
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table drawdowns-table' },
      h('caption', { class: 'sr-only' }, 'The deepest drawdown periods, deepest first'),
      h('thead', null, h('tr', null, th('#'), th('Depth', true, 'Fall from the peak to the trough, in percent of the peak'), th('Peak', false, 'The last bar at the previous high'), th('Trough', false), th('Recovered', false, 'The first bar back at the peak'), th('To trough', true, 'Calendar days from the peak to the trough'), th('Length', true, 'Calendar days (and bars) from the peak to the recovery, or to the end of the run'))),
      h(
        'tbody',
        null,
        rows.map((r, i) =>
          h(
            'tr',
            { 'data-rank': String(i + 1) },
            h('td', { class: 'num' }, fmtInt(i + 1)),
            h('td', { class: 'num neg' }, fmtPct(-Math.abs(r.depth_pct))),
            h('td', null, fmtBarTime(r.peak, clock)),
            h('td', null, fmtBarTime(r.trough, clock)),
            h('td', null, r.recovered ? fmtBarTime(r.recovered, clock) : h('span', { class: 'muted' }, 'not recovered')),
            h('td', { class: 'num' }, days(r.to_trough_days)),
            h('td', { class: 'num' }, `${days(r.days)} (${fmtInt(r.bars)} bars)`),
          ),
        ),
      ),
    ),
  );
}

function strategyTable(rows: StrategyResult[]): HTMLElement {
  const th = (label: string, num = true, title?: string) => h('th', { scope: 'col', class: num ? 'num' : '', title }, label);
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table strategies-table' },
      h('caption', { class: 'sr-only' }, 'Orders, fills and trades of each strategy of the run (one broker, shared)'),
      h('thead', null, h('tr', null, th('#', false), th('Strategy', false), th('Orders'), th('Fills'), th('Trades', true, 'Closed round trips (won, lost)'), th('Open', true, 'Round trips still open at the end'), th('Net P&L', true, 'Of its closed round trips'), th('Commission'), th('SQN'), th('First next', true, 'Bar of its first next(): the end of its own warm-up'))),
      h(
        'tbody',
        null,
        rows.map((r, i) =>
          h(
            'tr',
            { 'data-strategy': i },
            h('td', { class: 'muted' }, i),
            h('th', { scope: 'row' }, r.name),
            h('td', { class: 'num' }, fmtInt(r.orders)),
            h('td', { class: 'num' }, fmtInt(r.executions)),
            h('td', { class: 'num' }, `${fmtInt(r.trades)} (${fmtInt(r.won)} won, ${fmtInt(r.lost)} lost)`),
            h('td', { class: 'num' }, fmtInt(r.open_trades)),
            h('td', { class: `num ${signClass(r.pnl_closed)}` }, fmtMoney(r.pnl_closed)),
            h('td', { class: 'num' }, fmtMoney(r.commission)),
            h('td', { class: 'num' }, fmtNumber(Number((r.sqn as { sqn?: number }).sqn ?? 0), 2)),
            h('td', { class: 'num' }, fmtInt(r.first_next_bar)),
          ),
        ),
      ),
    ),
  );
}

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
      h('thead', null, h('tr', null, th('Symbol', false), th('P&L', true, 'Realised and unrealised, net of commission'), th('Contribution', true, 'P&L as a share of the initial cash: the rows sum to the total return'), th('Trades', true, 'Closed round trips (won, lost)'), th('Open', true, 'Round trips still open at the end'), th('Commission'), th('Exposure', true, 'Share of the bars that ended holding the symbol'), th('Final position'))),
      h(
        'tbody',
        null,
        rows.map((r) =>
          h(
            'tr',
            { 'data-symbol': r.symbol },
            h('th', { scope: 'row' }, r.symbol, r.joined?.length ? h('div', { class: 'muted small joined', title: 'A feed the strategy joined (static chain or rollover): its bars come from these contracts, in order' }, `joined from ${[...new Set(r.joined.map((j) => j.symbol))].join(' → ')}`) : null),
            h('td', { class: `num ${signClass(r.pnl)}` }, fmtMoney(r.pnl)),
            h('td', { class: `num ${signClass(r.contribution)}` }, fmtPctFraction(r.contribution)),
            h('td', { class: 'num' }, `${fmtInt(r.trades)} (${fmtInt(r.won)} won, ${fmtInt(r.lost)} lost)`),
            h('td', { class: 'num' }, fmtInt(r.open_trades)),
            h('td', { class: 'num' }, fmtMoney(r.commission)),
            h('td', { class: 'num' }, fmtPctFraction(r.exposure)),
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

// lookaheadButton checks the run's strategy version on the run's own data and shows what
// read the future (or that nothing did) in the box.
function lookaheadButton(task: Task, box: () => HTMLElement): HTMLButtonElement {
  const btn = button('Check for look-ahead', () => {
    btn.disabled = true;
    box().replaceChildren(loading('Running the strategy on cut data…'));
    strategies
      .checkLookahead(task.strategy_id!, task.strategy_version!, {
        data_source: task.data_source, symbols: task.symbols ?? (task.symbol ? [task.symbol] : undefined), timeframe: task.timeframe as BacktestRequest['timeframe'],
        start_date: task.start_date, end_date: task.end_date, strategy_params: (task.strategy_params ?? {}) as Record<string, unknown>,
        initial_cash: task.initial_cash, commission: task.commission,
      })
      .then((c) => {
        const head = c.lookahead
          ? h('p', null, lookaheadBadge(), ` This strategy version reads the future: its figures could not have been had in real time. What first differed when the data was cut (${c.cuts} cuts compared):`)
          : h('p', { class: 'muted' }, `No look-ahead: every line, order and state before each of ${c.cuts} cuts equals the full run's.`);
        const rows = c.findings.map((f) => h('li', { 'data-finding': f.kind }, h('strong', null, f.what), ` (${f.kind}) first differs at bar ${f.bar}, ${f.time.slice(0, 10)}: ${f.full} in the full run, ${f.cut} in the run cut at bar ${f.cut_at}`));
        box().replaceChildren(h('section', { 'aria-label': 'Look-ahead check', class: 'card' }, head, rows.length ? h('ul', null, rows) : ''));
      })
      .catch((e) => box().replaceChildren(errorBox(e)))
      .finally(() => { btn.disabled = false; });
  }, 'btn small', { 'data-lookahead-check': '' });
  return btn;
}

/**
 * Why a run has no result, under the API's error: gone (deleted, or pruned by retention,
 * which deletes the run whole), ended without one (failed, cancelled), or not finished yet.
 */
export function missingResult(tid: string, e: unknown, task: Task | null, taskGone: boolean): HTMLElement | string {
  if (!(e instanceof ApiError) || e.status !== 404) return '';
  if (taskGone || !task) {
    return h(
      'p',
      { id: 'result-missing', 'data-why': 'gone' },
      `There is no run ${tid}: it was deleted, or pruned by retention (runs older than the retention age are deleted with their results unless pinned), or never existed. `,
      h('a', { href: href('/runs') }, 'All runs'),
    );
  }
  if (task.status === 'failed' || task.status === 'cancelled') {
    return h('p', { id: 'result-missing', 'data-why': task.status }, `The run ${task.status === 'failed' ? 'failed' : 'was cancelled'}: it has no result. `, h('a', { href: href(`/runs/${tid}`) }, `See ${tid}`));
  }
  if (task.status === 'completed') return h('p', { id: 'result-missing', 'data-why': 'completed' }, 'The run completed, but its result is not stored. ', h('a', { href: href(`/runs/${tid}`) }, `See ${tid}`));
  return h('p', { id: 'result-missing', 'data-why': 'pending' }, 'The result exists once the run has completed. ', h('a', { href: href(`/runs/${tid}`) }, `Watch ${tid}`));
}

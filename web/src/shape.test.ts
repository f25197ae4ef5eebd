import { describe, expect, it } from 'vitest';
import {
  categoryDates,
  coerceParam,
  maPeriods,
  rangeCount,
  diffStats,
  filterLogs,
  lineDiff,
  normaliseStatistics,
  niceCeil,
  BUY_COLOUR,
  SELL_COLOUR,
  normLevel,
  overlayDrawdown,
  recolour,
  pageCount,
  parseLoadError,
  prepareChartOption,
  rejectedLines,
  seriesPoints,
  docSummary,
  differingParams,
  insertLogLine,
  inlineCodeParts,
  tickDigits,
} from './shape';
import { detailOf, isEnvelope, listOf, basePath } from './api';

describe('lineDiff', () => {
  it('marks added and removed lines with both line numbers', () => {
    const d = lineDiff('a\nb\nc', 'a\nB\nc\nd');
    expect(d.map((x) => x.op + x.text)).toEqual([' a', '-b', '+B', ' c', '+d']);
    expect(d[0]).toMatchObject({ a: 1, b: 1 });
    expect(d[4]).toMatchObject({ b: 4 });
    expect(diffStats(d)).toEqual({ added: 2, removed: 1 });
  });
  it('equal texts have no changes', () => expect(diffStats(lineDiff('x\ny', 'x\ny'))).toEqual({ added: 0, removed: 0 }));
});

describe('load errors', () => {
  it('uses the body line and column', () => {
    expect(parseLoadError({ detail: 'Invalid strategy code: SyntaxError', line: 4, column: 14 }, 'x')).toEqual({ message: 'Invalid strategy code: SyntaxError', line: 4, column: 14 });
  });
  it('falls back to a position in the text', () => {
    expect(parseLoadError({ detail: 'Failed to load strategy: ReferenceError at line 7:3' }, '')).toMatchObject({ line: 7, column: 3 });
    expect(parseLoadError({ detail: 'SyntaxError: (anonymous): 9:2 Unexpected token' }, '')).toMatchObject({ line: 9, column: 2 });
    expect(parseLoadError(null, 'no position')).toEqual({ message: 'no position', line: undefined, column: undefined });
  });
});

describe('import reports', () => {
  it('reads the line number from the detail', () => {
    expect(rejectedLines({ detail: 'Invalid CSV at line 3: high 9 is below low 11' }, 'Invalid CSV at line 3: high 9 is below low 11')).toEqual([{ line: 3, reason: 'high 9 is below low 11' }]);
  });
  it('reads structured errors', () => {
    expect(rejectedLines({ errors: [{ line: 5, message: 'bad date' }, 'line 9: not a number'] }, '')).toEqual([
      { line: 5, reason: 'bad date' },
      { line: 9, reason: 'not a number' },
    ]);
  });
});

describe('categoryDates', () => {
  it('reads the first category axis of a server chart', () => {
    expect(categoryDates({ title: 'K-Line Chart', type: 'candlestick', series: [], xAxis: [{ data: ['2024-01-01', '2024-01-02'] }, { data: ['x'] }] })).toEqual(['2024-01-01', '2024-01-02']);
    expect(categoryDates({ title: 'Equity', type: 'line', series: [], xAxis: { data: ['a'] } })).toEqual(['a']);
    expect(categoryDates({ title: 'Empty', type: 'line', series: [] })).toEqual([]);
  });
});

describe('prepareChartOption', () => {
  it("labels an intraday chart's time axis in the data's zone and keeps its categories", () => {
    const cats = ['2024-07-01T13:30:00Z', '2024-07-01T13:35:00Z'];
    const clock = { tz: 'America/New_York', intraday: true };
    const o = prepareChartOption({ title: 'Equity', type: 'line', series: [{ name: 'Equity', type: 'line', data: [1, 2] }], xAxis: { type: 'category', data: cats }, yAxis: { type: 'value' } }, 'equity', { clock }) as Record<string, any>;
    const x = o.xAxis[0];
    expect(x.data).toEqual(cats);
    expect(x.axisLabel.formatter(cats[0])).toBe('2024-07-01 09:30');
    expect(x.axisPointer.label.formatter({ value: cats[1] })).toBe('2024-07-01 09:35');
  });
  it('adds axis tooltip, zoom and legend to a spec ChartConfig', () => {
    const o = prepareChartOption({ title: 'Equity Curve', type: 'line', series: [{ name: 'Equity', type: 'line', data: [1, 2] }], xAxis: { type: 'category', data: ['a', 'b'] }, yAxis: { type: 'value' } }, 'equity') as Record<string, any>;
    expect(o.type).toBeUndefined();
    expect(o.title.text).toBe('Equity Curve');
    expect(o.tooltip.trigger).toBe('axis');
    expect(o.dataZoom.map((z: { type: string }) => z.type)).toEqual(['inside', 'slider']);
    expect(o.legend.data).toEqual(['Equity']);
  });
  it('keeps what the server set and lays out two grids 70/30', () => {
    const o = prepareChartOption({ title: 'Price', type: 'candlestick', series: [{ type: 'candlestick', data: [[1, 2, 3, 4]] }, { type: 'bar', xAxisIndex: 1, yAxisIndex: 1, data: [5] }], xAxis: [{ data: ['d'] }, { data: ['d'], gridIndex: 1 }], tooltip: { trigger: 'item' } }, 'candlestick') as Record<string, any>;
    expect(o.tooltip.trigger).toBe('item');
    expect(o.grid).toHaveLength(2);
    expect(o.dataZoom[0].xAxisIndex).toEqual([0, 1]);
    expect(o.yAxis).toHaveLength(2);
  });
  it('heatmaps get a visual map and item tooltip, no zoom', () => {
    const o = prepareChartOption({ title: 'Monthly Returns', type: 'heatmap', series: [{ type: 'heatmap', data: [[0, 0, 1.5], [1, 0, -3]] }], xAxis: { data: ['Jan', 'Feb'] }, yAxis: { data: ['2024'] } }, 'monthly_heatmap') as Record<string, any>;
    expect(o.visualMap.min).toBe(-3);
    expect(o.visualMap.max).toBe(3);
    expect(o.tooltip.trigger).toBe('item');
    expect(o.dataZoom).toBeUndefined();
  });
  it('counts data points', () => expect(seriesPoints({ title: 'x', type: 'line', series: [{ data: [1, 2] }, { data: [3] }] })).toBe(3));
  it('puts the drawdown in a panel below the equity, from 0 down to the deepest fall', () => {
    const eq = prepareChartOption({ title: 'Equity Curve', type: 'line', series: [{ name: 'Equity', type: 'line', data: [1, 2, 3] }], xAxis: { data: ['a', 'b', 'c'] }, yAxis: { type: 'value' } }, 'equity');
    const o = overlayDrawdown(eq, { title: 'Drawdown', type: 'line', series: [{ type: 'line', data: [0, 71.5, -3] }], xAxis: { data: ['a', 'b', 'c'] } }) as Record<string, any>;
    expect(o.series).toHaveLength(2);
    expect(o.series[1]).toMatchObject({ xAxisIndex: 1, yAxisIndex: 1, data: [-0, -71.5, -3] });
    expect(o.grid).toHaveLength(2);
    expect(o.xAxis.map((x: any) => x.gridIndex)).toEqual([0, 1]);
    expect(o.legend.data).toEqual(['Equity', 'Drawdown (%)']);
    // labelled in percent, never past the deepest fall rounded up (and never past 100%)
    expect(o.yAxis[1]).toMatchObject({ name: 'Drawdown (%)', gridIndex: 1, max: 0, min: -100 });
    expect(o.yAxis[1].axisLabel.formatter(-50)).toBe('−50%');
    expect(o.dataZoom.every((z: any) => z.xAxisIndex.join() === '0,1')).toBe(true);
    expect(o.series[1].tooltip.valueFormatter(-1.23456)).toBe('−1.23%');
    const shallow = overlayDrawdown(eq, { title: 'Drawdown', type: 'line', series: [{ type: 'line', data: [0, 4.2] }] }) as Record<string, any>;
    expect(shallow.yAxis[1]).toMatchObject({ max: 0, min: -5 });
    // its half-way tick is −2.5%, and reads so (it read −3%)
    expect(shallow.yAxis[1].interval).toBe(2.5);
    expect(shallow.yAxis[1].axisLabel.formatter(-2.5)).toBe('−2.5%');
    expect(shallow.yAxis[1].axisLabel.formatter(-5)).toBe('−5%');
    expect(shallow.yAxis[1].axisLabel.formatter(-1.25)).toBe('−1.25%');
    expect(overlayDrawdown(o, { title: 'Drawdown', type: 'line', series: [{ data: [1] }] })).toBe(o); // already has one
  });
  it('rounds tooltip values and keeps the tooltip inside the chart', () => {
    const o = prepareChartOption({ title: 'Equity', type: 'line', series: [{ name: 'Equity', type: 'line', data: [17652.190771616908] }], xAxis: { data: ['a'] }, yAxis: { type: 'value' } }, 'equity') as Record<string, any>;
    expect(o.tooltip.confine).toBe(true);
    expect(o.tooltip.valueFormatter(17652.190771616908)).toBe('17,652.19');
    expect(o.tooltip.valueFormatter(26.449999999999903)).toBe('26.45');
    const dd = prepareChartOption({ title: 'Drawdown', type: 'line', series: [{ name: 'Drawdown', type: 'line', data: [1] }], xAxis: { data: ['a'] } }, 'drawdown') as Record<string, any>;
    expect(dd.tooltip.valueFormatter(-0.0001)).toBe('0.00%');
  });
  it('labels heatmap cells without "-0.0" and names year and month in the tooltip', () => {
    const o = prepareChartOption({ title: 'Monthly Returns', type: 'heatmap', series: [{ type: 'heatmap', data: [[0, 0, 1.25], [1, 1, -0.01]] }], xAxis: { data: ['Jan', 'Feb'] }, yAxis: { data: ['2023', '2024'] }, visualMap: { min: -2, max: 2 } }, 'monthly_heatmap') as Record<string, any>;
    const label = o.series[0].label.formatter;
    expect(label({ value: [1, 1, -0.01] })).toBe('0.0');
    expect(o.tooltip.formatter({ value: [0, 0, 1.25] })).toBe('2023 Jan: +1.3%');
    expect(o.tooltip.formatter({ value: [1, 1, -0.01] })).toBe('2024 Feb: 0.0%');
    expect(o.visualMap.formatter(2)).toBe('2.0%');
  });
  it('puts one colour convention on every chart', () => {
    const pal = { up: 'UP', down: 'DOWN', neutral: 'MID', text: '#000', grid: '#eee', dark: false };
    const o = recolour(
      {
        series: [
          { type: 'candlestick', itemStyle: { color: '#ef5350', color0: '#26a69a' } },
          { type: 'bar', data: [{ value: 2, itemStyle: { color: '#ef5350' } }, { value: -1, itemStyle: { color: '#26a69a' } }] },
          { type: 'scatter', name: 'Buy', itemStyle: { color: '#ef5350' } },
          { type: 'scatter', name: 'Sell', itemStyle: { color: '#26a69a' } },
          { type: 'line', name: 'Drawdown', lineStyle: { color: '#ef5350' } },
          { type: 'line', name: 'Equity' },
          { type: 'bar', name: 'Losses', stack: 'r', data: [3, null], itemStyle: { color: '#26a69a' } },
          { type: 'bar', name: 'Gains', stack: 'r', data: [null, 5], itemStyle: { color: '#ef5350' } },
        ],
        visualMap: { inRange: { color: ['#26a69a', '#fff', '#ef5350'] } },
      },
      pal,
    ) as Record<string, any>;
    expect(o.series[0].itemStyle).toMatchObject({ color: 'UP', color0: 'DOWN', borderColor: 'UP', borderColor0: 'DOWN' });
    expect(o.series[1].data.map((d: any) => d.itemStyle.color)).toEqual(['UP', 'DOWN']);
    // buys and sells in colours of their own, apart from the candles'
    expect(o.series[2].itemStyle.color).toBe(BUY_COLOUR);
    expect(o.series[3].itemStyle.color).toBe(SELL_COLOUR);
    expect(o.series[4].lineStyle.color).toBe('DOWN');
    expect(o.series[5]).toEqual({ type: 'line', name: 'Equity' });
    expect([o.series[6].itemStyle.color, o.series[7].itemStyle.color]).toEqual(['DOWN', 'UP']); // the returns histogram
    expect(o.visualMap.inRange.color).toEqual(['DOWN', 'MID', 'UP']);
  });
  it('labels the returns histogram by its bins\' lower edges', () => {
    const o = prepareChartOption({ title: 'Returns per Bar', type: 'bar', series: [{ type: 'bar', name: 'Gains', data: [1] }], xAxis: { type: 'category', data: ['-0.50% to -0.25%'] }, dataZoom: [] }, 'returns_histogram') as Record<string, any>;
    expect(o.xAxis[0].axisLabel.formatter('-0.50% to -0.25%')).toBe('−0.50%');
    expect(o.dataZoom).toEqual([]);
  });
  it('reads the moving-average periods a strategy trades on from its parameters', () => {
    expect(maPeriods({ fast: 10, slow: 30, size: 100, delay: 0 })).toEqual([10, 30]);
    expect(maPeriods({ period: 20, devfactor: 2 })).toEqual([20]);
    expect(maPeriods({ sma_fast: 5, ema_slow: 50, rsi_period: 14, stake: 10 })).toEqual([5, 50]);
    expect(maPeriods({ fast: 1.5, slow: 'x', pct: 0.9 })).toEqual([]);
    expect(maPeriods(undefined)).toEqual([]);
  });
  it('rounds axis ends up to 1, 2, 2.5 or 5 times a power of ten', () => {
    expect([0.3, 1.5, 2.2, 4, 7, 12, 0].map(niceCeil)).toEqual([0.5, 2, 2.5, 5, 10, 20, 1]);
  });
});

describe('statistics', () => {
  it('reads the server groups, writing known figures in the page convention', () => {
    const g = normaliseStatistics({ groups: [{ name: 'Curve', metrics: [{ key: 'total_return', label: 'Total Return', value: -0.0353, display: '-3.53%', explanation: 'growth' }] }] });
    expect(g).toEqual([{ name: 'Curve', items: [{ key: 'total_return', label: 'Total Return', value: -0.0353, display: '−3.53%', explanation: 'growth' }] }]);
  });
  it('groups a flat record with the spec labels and formats', () => {
    const g = normaliseStatistics({ total_return: 0.1, win_rate: 50, best_year: 0.2, sortino_ratio: 1.234 });
    expect(g.map((x) => x.name)).toEqual(['Curve', 'Trade', 'Time', 'Risk']);
    expect(g[3].items[0]).toMatchObject({ label: 'Sortino Ratio', display: '1.23' });
    expect(g[0].items[0]).toMatchObject({ label: 'Total Return', display: '10.00%' });
    expect(g[1].items[0].display).toBe('50.00%');
  });
  it('reads groups keyed by name', () => {
    const g = normaliseStatistics({ curve: { sharpe_ratio: 1.5 }, trade: { total_trades: 3 }, time: {} });
    expect(g[0]).toMatchObject({ name: 'Curve', items: [{ key: 'sharpe_ratio', display: '1.50' }] });
  });
});

describe('logs, paging, parameters', () => {
  it('normalises levels and filters', () => {
    expect(normLevel('warn')).toBe('WARNING');
    expect(normLevel('critical')).toBe('ERROR');
    expect(normLevel('whatever')).toBe('INFO');
    const lines = [{ level: 'DEBUG' }, { level: 'info' }, { level: 'ERROR' }];
    expect(filterLogs(lines, new Set(['INFO', 'ERROR']))).toEqual([{ level: 'info' }, { level: 'ERROR' }]);
  });
  it('page count', () => {
    expect(pageCount(0, 20)).toBe(1);
    expect(pageCount(166, 20)).toBe(9);
  });
  it('coerces parameters with the spec texts', () => {
    expect(coerceParam('fast', 'int', ' 12 ')).toBe(12);
    expect(coerceParam('x', 'float', '1.5')).toBe(1.5);
    expect(coerceParam('b', 'bool', 'Yes')).toBe(true);
    expect(coerceParam('b', 'bool', 'no')).toBe(false);
    expect(() => coerceParam('fast', 'int', '1.5')).toThrow("Parameter 'fast': expected int, got float (1.5): use a whole number");
    expect(() => coerceParam('fast', 'int', 'abc')).toThrow("Parameter 'fast': expected int, got str");
    expect(() => coerceParam('x', 'float', 'abc')).toThrow("Parameter 'x': expected float, got str");
    expect(coerceParam('l', 'list', '[1,2]')).toEqual([1, 2]);
  });
});

describe('api helpers', () => {
  it('tells envelopes and reads details', () => {
    expect(isEnvelope({ code: 'ok', message: 'success', data: [] })).toBe(true);
    expect(isEnvelope({ task_id: 'x' })).toBe(false);
    expect(detailOf({ detail: 'Strategy not found' }, 404)).toBe('Strategy not found');
    expect(detailOf({ detail: [{ msg: 'a' }, 'b'] }, 422)).toBe('a; b');
    expect(detailOf({ code: 'error', message: 'boom' }, 500)).toBe('boom');
    expect(detailOf('', 502)).toBe('Request failed with HTTP 502');
    expect(listOf({ trades: [1] }, 'trades')).toEqual([1]);
    expect(listOf(null)).toEqual([]);
  });
  it('takes the base path the server wrote into the page', () => {
    expect(basePath('/proxy/x/ui/runs', '/backtests')).toBe('/backtests');
    expect(basePath('/anything/ui/runs', '')).toBe('');
  });
  it('finds the base path before /ui when the page was not served by the service', () => {
    expect(basePath('/ui/runs', null)).toBe('');
    expect(basePath('/backtests/ui/runs/task_1', null)).toBe('/backtests');
  });
});

describe('docSummary', () => {
  it('joins the prose lines before the parameter lines', () => {
    const code = '/**\n * Moving-average crossover: buy when the fast SMA\n * crosses above the slow SMA.\n * fast: period\n */\nclass A extends Strategy {}';
    expect(docSummary(code, ['fast'])).toBe('Moving-average crossover: buy when the fast SMA crosses above the slow SMA.');
    expect(docSummary('class A {}', [])).toBe('');
  });
});

describe('rangeCount', () => {
  it.each([
    [5, 15, 5, 3],
    [2, 51, 1, 50],
    [60, 250, 10, 20],
    [0.1, 0.5, 0.1, 5],
    [7, 7, 1, 1],
    [10, 5, 1, 0],
    [1, 5, 0, 0],
    [1, 5, -1, 0],
    [NaN, 5, 1, 0],
  ])('%s..%s by %s gives %s values', (start, stop, step, want) => {
    expect(rangeCount(start, stop, step)).toBe(want);
  });
});

describe('differingParams', () => {
  it('names the parameters that tell runs apart, a missing one included', () => {
    expect(differingParams([{ fast: 5, slow: 20, size: 10 }, { fast: 10, slow: 20, size: 10 }, { fast: 5, slow: 20, size: 10, extra: 1 }])).toEqual(['fast', 'extra']);
    expect(differingParams([{ a: [1, 2] }, { a: [1, 2] }])).toEqual([]);
    expect(differingParams([null, { a: 1 }])).toEqual(['a']);
  });
});

describe('insertLogLine', () => {
  it('keeps lines in log order whichever way they arrive', () => {
    const lines: { timestamp: number; attempt?: number; m: string }[] = [];
    // live lines 3 and 4 first, then the stored 1 and 2, then 5, then a retry's line
    expect(insertLogLine(lines, { timestamp: 3, attempt: 1, m: 'c' })).toBe(0);
    expect(insertLogLine(lines, { timestamp: 4, attempt: 1, m: 'd' })).toBe(1);
    expect(insertLogLine(lines, { timestamp: 1, attempt: 1, m: 'a' })).toBe(0);
    expect(insertLogLine(lines, { timestamp: 2, attempt: 1, m: 'b' })).toBe(1);
    expect(insertLogLine(lines, { timestamp: 5, attempt: 1, m: 'e' })).toBe(4);
    expect(insertLogLine(lines, { timestamp: 0.5, attempt: 2, m: 'f' })).toBe(5);
    expect(insertLogLine(lines, { timestamp: 5, attempt: 1, m: 'e2' })).toBe(5); // same time: after
    expect(lines.map((l) => l.m).join('')).toBe('abcdee2f');
  });
});

describe('inlineCodeParts', () => {
  it('marks the code between backticks and drops the backticks', () => {
    expect(inlineCodeParts('Buys when `fast` crosses `slow`.')).toEqual([
      { text: 'Buys when ', code: false },
      { text: 'fast', code: true },
      { text: ' crosses ', code: false },
      { text: 'slow', code: true },
      { text: '.', code: false },
    ]);
  });
  it('keeps a backtick without its pair', () => expect(inlineCodeParts('a `b')).toEqual([{ text: 'a ', code: false }, { text: '`b', code: false }]));
  it('leaves plain text alone', () => expect(inlineCodeParts('plain')).toEqual([{ text: 'plain', code: false }]));
});

describe('tickDigits', () => {
  it('gives a tick the decimals it has, up to 2', () => expect([50, 2.5, 1.25, 0.125].map(tickDigits)).toEqual([0, 1, 2, 2]));
});

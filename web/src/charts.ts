// ECharts, imported piece by piece to keep the bundle small, and the chart panel used on every
// page: a titled box with the chart, PNG and SVG export buttons, resizing and disposal.

import * as echarts from 'echarts/core';
import { BarChart, CandlestickChart, HeatmapChart, LineChart, ScatterChart } from 'echarts/charts';
import {
  AriaComponent,
  AxisPointerComponent,
  DataZoomComponent,
  GridComponent,
  LegendComponent,
  MarkAreaComponent,
  MarkLineComponent,
  MarkPointComponent,
  TitleComponent,
  TooltipComponent,
  VisualMapComponent,
} from 'echarts/components';
import { CanvasRenderer, SVGRenderer } from 'echarts/renderers';
import { h, downloadDataURL, toast } from './dom';
import { onLeave } from './lifecycle';
import { onSettingsChange, palette } from './settings';
import { recolour } from './shape';

echarts.use([
  BarChart,
  CandlestickChart,
  HeatmapChart,
  LineChart,
  ScatterChart,
  AriaComponent,
  AxisPointerComponent,
  DataZoomComponent,
  GridComponent,
  LegendComponent,
  MarkAreaComponent,
  MarkLineComponent,
  MarkPointComponent,
  TitleComponent,
  TooltipComponent,
  VisualMapComponent,
  CanvasRenderer,
  SVGRenderer,
]);

type Option = Record<string, unknown>;


export interface ChartPanel {
  el: HTMLElement;
  chart: echarts.ECharts;
  set(option: Option): void;
  /** Listens to a chart event, also on the chart a theme change re-creates. */
  on(event: string, fn: (params: unknown) => void): void;
}

/**
 * A chart panel. `name` is used for export file names; `points` (data points shown) is put on
 * the element as data-points so tests and people can tell an empty chart from a full one.
 */
export function chartPanel(name: string, label: string, opts: { height?: number } = {}): ChartPanel {
  const box = h('div', { class: 'chart', role: 'img', 'aria-label': label, style: { height: `${opts.height ?? 360}px` } });
  const exportBtn = (fmt: 'png' | 'svg') =>
    h('button', { type: 'button', class: 'btn small', 'data-export': fmt, 'aria-label': `Export ${label} as ${fmt.toUpperCase()}`, onclick: () => exportChart(panel, name, fmt) }, fmt.toUpperCase());
  const el = h('section', { class: 'chart-panel', 'data-chart': name }, h('div', { class: 'chart-head' }, h('h3', null, label), h('div', { class: 'chart-tools' }, exportBtn('png'), exportBtn('svg'))), box);
  let dark = palette().dark;
  const chart = echarts.init(box, dark ? 'dark' : undefined, { renderer: 'canvas' });
  let current: Option = {};
  const ro = new ResizeObserver(() => {
    if (!panel.chart.isDisposed()) panel.chart.resize();
  });
  ro.observe(box);
  // The display settings changed: the same chart in the new colours (and theme).
  const unsubscribe = onSettingsChange(() => {
    if (panel.chart.isDisposed()) return;
    const pal = palette();
    if (pal.dark !== dark) {
      dark = pal.dark;
      // A theme is fixed at init: a new instance, with the listeners the old one had.
      panel.chart.dispose();
      panel.chart = echarts.init(box, dark ? 'dark' : undefined, { renderer: 'canvas' });
      for (const fn of rebinders) fn(panel.chart);
    }
    panel.set(current);
  });
  onLeave(() => {
    ro.disconnect();
    unsubscribe();
    panel.chart.dispose();
  });
  const rebinders: ((c: echarts.ECharts) => void)[] = [];
  const panel: ChartPanel = {
    el,
    chart,
    set(option: Option) {
      const pal = palette();
      current = { aria: { enabled: true }, ...recolour(option, pal) };
      panel.chart.setOption(current, { notMerge: true });
      el.dataset.points = String(countPoints(option));
      // what it shows, for people inspecting the page and for the browser tests
      el.dataset.series = ((Array.isArray(option.series) ? option.series : []) as Option[]).map((s) => String(s.name ?? s.type ?? '')).join('|');
      el.dataset.up = pal.up;
      el.dataset.ready = 'true';
    },
    on(event, fn) {
      panel.chart.on(event, fn);
      rebinders.push((c) => c.on(event, fn));
    },
  };
  (panel as unknown as { option: () => Option }).option = () => current;
  // The option as drawn (after merges), for people inspecting the page and the browser tests.
  (el as unknown as { chartOption: () => Option }).chartOption = () => panel.chart.getOption() as Option;
  return panel;
}

function countPoints(option: Option): number {
  const series = Array.isArray(option.series) ? option.series : option.series ? [option.series] : [];
  return (series as Option[]).reduce((n, s) => n + (Array.isArray(s.data) ? (s.data as unknown[]).length : 0), 0);
}

/**
 * Exports a chart. PNG comes from the canvas (getDataURL, 2× pixel ratio, white background);
 * SVG renders the same option once more with ECharts' SVG renderer and takes its data URL.
 */
export function exportChart(panel: ChartPanel, name: string, fmt: 'png' | 'svg'): void {
  try {
    if (fmt === 'png') {
      // The file carries the chart's title, which the page shows above the chart instead.
      panel.chart.setOption({ title: { show: true } });
      const url = panel.chart.getDataURL({ type: 'png', pixelRatio: 2, backgroundColor: palette().dark ? '#171c26' : '#ffffff' });
      panel.chart.setOption({ title: { show: false } });
      downloadDataURL(`${name}.png`, url);
      return;
    }
    const w = panel.chart.getWidth() || 800;
    const hgt = panel.chart.getHeight() || 400;
    const holder = h('div', { style: { position: 'fixed', left: '-10000px', top: '0', width: `${w}px`, height: `${hgt}px` } });
    document.body.appendChild(holder);
    const svg = echarts.init(holder, undefined, { renderer: 'svg', width: w, height: hgt });
    const opt = panel.chart.getOption() as Option;
    // The SVG renderer draws the background only from the option: without it the file is
    // transparent and unreadable on a dark viewer.
    const background = palette().dark ? '#171c26' : '#ffffff';
    svg.setOption({ ...opt, animation: false, backgroundColor: background });
    svg.setOption({ title: { show: true } });
    const url = svg.getDataURL({ type: 'svg', backgroundColor: background });
    svg.dispose();
    holder.remove();
    downloadDataURL(`${name}.svg`, url);
  } catch (e) {
    toast(`Export failed: ${(e as Error).message}`, 'error');
  }
}

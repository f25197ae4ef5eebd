// Data: sources, symbols, a symbol's bars as a chart and its bar versions, and CSV import with a report.

import { ApiError, data as api, type BarVersion, type DataSource } from '../api';
import { chartPanel } from '../charts';
import { clear, empty, errorBox, field, h, loading, toast, dateInput } from '../dom';
import { barClock, fmtBarTime, fmtInt, fmtRange, rangeFor } from '../format';
import { href } from '../router';
import { categoryDates, prepareChartOption, rejectedLines } from '../shape';

export async function dataView(main: HTMLElement, _p: Record<string, string>, query: URLSearchParams): Promise<void> {
  main.append(h('div', { class: 'page-head' }, h('h1', null, 'Data')));
  let sources: DataSource[];
  try {
    sources = await api.listSources();
  } catch (e) {
    main.append(errorBox(e));
    return;
  }
  if (!sources.length) {
    main.append(empty('No data sources are registered.'));
    return;
  }
  let source = query.get('source') ?? sources[0].name;
  const srcList = h('ul', { class: 'source-list', role: 'list' });
  const symBox = h('div', { id: 'symbols' });
  const searchIn = h('input', { type: 'search', id: 'symbol-search', placeholder: 'Filter symbols', autocomplete: 'off' }) as HTMLInputElement;
  const renderSources = () =>
    srcList.replaceChildren(
      ...sources.map((s) =>
        h('li', null, h('button', { type: 'button', class: `source${s.name === source ? ' active' : ''}`, 'aria-pressed': String(s.name === source), onclick: () => ((source = s.name), renderSources(), void loadSymbols()) }, h('strong', null, s.name), h('span', { class: 'muted small' }, s.description ?? ''))),
      ),
    );
  const loadSymbols = async () => {
    symBox.replaceChildren(loading('Loading symbols…'));
    try {
      const syms = await api.listSymbols(source, searchIn.value.trim(), 200);
      clear(symBox);
      if (!syms.length) {
        symBox.append(empty(searchIn.value ? 'No symbol matches.' : 'This source has no symbols yet. Import a CSV file below.'));
        return;
      }
      symBox.append(h('ul', { class: 'symbol-list' }, syms.map((s) => h('li', null, h('a', { href: href(`/data/${encodeURIComponent(source)}/${encodeURIComponent(s.symbol)}`) }, h('strong', null, s.symbol), ' ', h('span', { class: 'muted' }, s.name ?? ''), s.timezone && s.timezone !== 'UTC' ? h('span', { class: 'muted small' }, ` · ${s.timezone}`) : null, ' · ', h('span', { class: 'muted small ranges', 'data-ranges': s.ranges.length }, s.ranges.length ? s.ranges.map(fmtRange).join('; ') : 'no bars yet'))))));
    } catch (e) {
      symBox.replaceChildren(errorBox(e));
    }
  };
  let t: ReturnType<typeof setTimeout> | undefined;
  searchIn.addEventListener('input', () => {
    clearTimeout(t);
    t = setTimeout(() => void loadSymbols(), 200);
  });
  renderSources();
  main.append(
    h('div', { class: 'data-layout' }, h('section', { 'aria-labelledby': 'h-src' }, h('h2', { id: 'h-src' }, 'Sources'), srcList), h('section', { 'aria-labelledby': 'h-sym' }, h('h2', { id: 'h-sym' }, 'Symbols'), field('Search', searchIn), symBox)),
    importSection(sources, () => source, loadSymbols),
  );
  await loadSymbols();
}

function importSection(sources: DataSource[], current: () => string, after: () => Promise<void>): HTMLElement {
  const srcSel = h('select', { id: 'import-source' }, sources.map((s) => h('option', { value: s.name, selected: s.name === current() }, s.name))) as HTMLSelectElement;
  const symIn = h('input', { type: 'text', id: 'import-symbol', required: true, autocomplete: 'off', placeholder: 'e.g. ORCL', pattern: '[A-Za-z0-9][A-Za-z0-9._\\-^=]{0,31}' }) as HTMLInputElement;
  const tfSel = h('select', { id: 'import-timeframe' }, ['1d', '1h', '15m', '5m', '1m', '4h', '1w'].map((tf) => h('option', { value: tf }, tf))) as HTMLSelectElement;
  const fileIn = h('input', { type: 'file', id: 'import-file', accept: '.csv,text/csv', required: true }) as HTMLInputElement;
  const zones = (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
  const zoneIn = h('input', { type: 'text', id: 'import-timezone', list: 'import-timezones', autocomplete: 'off', placeholder: 'UTC, or the symbol’s' }) as HTMLInputElement;
  const zoneList = h('datalist', { id: 'import-timezones' }, ['UTC', ...zones].map((z) => h('option', { value: z })));
  const report = h('div', { id: 'import-report', 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'btn primary' }, 'Import') as HTMLButtonElement;
  fileIn.addEventListener('change', () => {
    const f = fileIn.files?.[0];
    if (f && !symIn.value) symIn.value = f.name.replace(/\.[^.]+$/, '').toUpperCase().replace(/[^A-Z0-9._\-^=]/g, '');
  });
  const form = h(
    'form',
    { class: 'import-form', novalidate: true },
    h('div', { class: 'grid2' }, field('Source', srcSel), field('Symbol', symIn), field('Timeframe', tfSel), field('Time zone', zoneIn, 'Of times without an offset in the file, e.g. America/New_York; dates stay dates'), zoneList, field('CSV file', fileIn, 'Columns date,open,high,low,close,volume (or Yahoo’s layout). All-or-nothing: one bad line rejects the file.')),
    h('div', { class: 'actions' }, submit),
    report,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const f = fileIn.files?.[0];
    if (!symIn.value.trim() || !symIn.checkValidity()) {
      symIn.setAttribute('aria-invalid', 'true');
      report.replaceChildren(h('div', { class: 'error-box', role: 'alert' }, 'Enter a symbol: 1–32 letters, digits, ".", "-", "_", "^" or "=".'));
      symIn.focus();
      return;
    }
    symIn.removeAttribute('aria-invalid');
    if (!f) {
      report.replaceChildren(h('div', { class: 'error-box', role: 'alert' }, 'Choose a CSV file.'));
      fileIn.focus();
      return;
    }
    const text = await f.text();
    submit.disabled = true;
    report.replaceChildren(loading('Importing…'));
    const sym = symIn.value.trim();
    try {
      const res = await api.importBars(srcSel.value, sym, tfSel.value, text, zoneIn.value.trim());
      report.replaceChildren(
        h(
          'div',
          { class: 'ok-box', role: 'status' },
          h('strong', null, `Imported ${fmtInt(res.received)} bars into ${srcSel.value}/${sym}. `),
          `${fmtInt(res.inserted)} new, ${fmtInt(res.updated)} updated, ${fmtInt(res.unchanged)} unchanged`,
          res.first ? ` · ${String(res.first).slice(0, 10)} → ${String(res.last).slice(0, 10)}` : '',
          res.timezone && res.timezone !== 'UTC' ? ` · times in ${String(res.timezone)}` : '',
          ' ',
          h('a', { href: href(`/data/${encodeURIComponent(srcSel.value)}/${encodeURIComponent(sym)}`) }, 'View the chart'),
        ),
      );
      toast(`Imported ${sym}.`, 'ok');
      await after();
    } catch (err) {
      const body = err instanceof ApiError ? err.body : null;
      const rej = rejectedLines(body, (err as Error).message);
      const fileLines = text.split(/\r?\n/);
      report.replaceChildren(
        h(
          'div',
          { class: 'error-box', role: 'alert' },
          h('strong', null, 'Nothing was imported. '),
          (err as Error).message,
          rej.some((r) => r.line !== null)
            ? h(
                'table',
                { class: 'table compact rejected' },
                h('caption', null, 'Rejected lines'),
                h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Line'), h('th', { scope: 'col' }, 'Reason'), h('th', { scope: 'col' }, 'Content'))),
                h('tbody', null, rej.map((r) => h('tr', { 'data-line': r.line ?? '' }, h('td', null, r.line ?? '—'), h('td', null, r.reason), h('td', null, h('code', null, r.line ? (fileLines[r.line - 1] ?? '') : ''))))),
              )
            : null,
        ),
      );
    } finally {
      submit.disabled = false;
    }
  });
  return h('section', { 'aria-labelledby': 'h-import', class: 'import' }, h('h2', { id: 'h-import' }, 'Import a CSV file'), form);
}

export async function symbolView(main: HTMLElement, params: Record<string, string>, query: URLSearchParams): Promise<void> {
  const { source, symbol } = params;
  // The symbol's time zone (its intraday bars are shown in it) and stored ranges (the dates
  // the page and a backtest on it start from).
  const me = await api.listSymbols(source, symbol, 50).then(
    (list) => list.find((s) => s.symbol === symbol),
    () => undefined,
  );
  const zone = Promise.resolve(me?.timezone ?? 'UTC');
  const stored = rangeFor(me?.ranges, query.get('timeframe') ?? '1d');
  const timeframe = query.get('timeframe') ?? stored?.timeframe ?? '1d';
  const startIn = dateInput({ id: 'bars-start', value: query.get('start') ?? stored?.first.slice(0, 10) ?? '2000-01-01' });
  const endIn = dateInput({ id: 'bars-end', value: query.get('end') ?? stored?.last.slice(0, 10) ?? new Date().toISOString().slice(0, 10) });
  const tfSel = h('select', { id: 'bars-timeframe' }, ['1d', '1w', '1M', '4h', '1h', '15m', '5m', '1m'].map((tf) => h('option', { value: tf, selected: tf === timeframe }, tf))) as HTMLSelectElement;
  const info = h('p', { class: 'muted', 'aria-live': 'polite' });
  const panel = chartPanel(`${source}_${symbol}`, `${symbol} bars`, { height: 480 });
  const versionsBox = h('section', { id: 'versions', 'aria-labelledby': 'h-versions' });
  const load = async () => {
    info.textContent = 'Loading bars…';
    panel.chart.showLoading({ text: 'Loading…' });
    try {
      const [cfg, tz] = await Promise.all([api.getBarsChart(source, symbol, { start_date: startIn.value, end_date: endIn.value, timeframe: tfSel.value }), zone]);
      const dates = categoryDates(cfg);
      const clock = barClock({ timezone: tz, timeframe: tfSel.value });
      panel.chart.hideLoading();
      info.textContent = dates.length ? `${fmtInt(dates.length)} bars · ${fmtBarTime(dates[0], clock)} → ${fmtBarTime(dates[dates.length - 1], clock)}${clock.intraday ? ` (${clock.tz})` : ''}` : 'No bars in this range.';
      panel.set(prepareChartOption(cfg, 'candlestick', { clock }));
    } catch (e) {
      panel.chart.hideLoading();
      info.textContent = '';
      toast((e as Error).message, 'error');
      info.replaceChildren(errorBox(e));
    }
  };
  const form = h('form', { class: 'form-row inline', onsubmit: (e: Event) => (e.preventDefault(), void load()) }, field('From', startIn), field('To', endIn), field('Timeframe', tfSel), h('button', { type: 'submit', class: 'btn' }, 'Show'));
  main.append(
    h('div', { class: 'page-head' }, h('h1', null, symbol), h('span', { class: 'muted' }, source), h('a', { class: 'btn small', id: 'backtest-symbol', href: href(`/runs?${new URLSearchParams({ source, symbol, timeframe, ...(stored ? { start: stored.first.slice(0, 10), end: stored.last.slice(0, 10) } : {}) })}`) }, 'Backtest on this symbol')),
    h('p', null, h('a', { href: href('/data') }, '← All data')),
    h('p', { class: 'muted', id: 'symbol-ranges' }, me?.ranges.length ? `Stored: ${me.ranges.map(fmtRange).join('; ')}` : 'No bars stored yet.'),
    form,
    info,
    panel.el,
    versionsBox,
  );
  void api.getVersions(source, symbol).then(
    (vs) => versionsBox.replaceChildren(h('h2', { id: 'h-versions' }, 'Versions'), versionsTable(vs)),
    (e) => versionsBox.replaceChildren(h('h2', { id: 'h-versions' }, 'Versions'), errorBox(e)),
  );
  await load();
}

// versionsTable lists a symbol's bar versions, newest first: what each import changed against
// the version before, its fingerprint (the one a run's provenance records) and whether
// retention removed its bars (docs/reproducibility.md, Bar versions).
function versionsTable(vs: BarVersion[]): HTMLElement {
  if (!vs.length) return empty('No versions: nothing imported yet.');
  const changed = (v: BarVersion) => {
    const c = v.changes ?? {};
    const parts = [c.added ? `${fmtInt(c.added)} added` : '', c.changed ? `${fmtInt(c.changed)} changed` : '', c.removed ? `${fmtInt(c.removed)} removed` : ''].filter(Boolean);
    return parts.length ? `${parts.join(', ')}${v.first_changed ? ` from ${v.first_changed.slice(0, 10)}` : ''}` : '—';
  };
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { id: 'versions-table', class: 'table' },
      h('thead', null, h('tr', null, ...['Version', 'Timeframe', 'Bars', 'First → last', 'Imported', 'Changes', 'sha256'].map((c) => h('th', null, c)))),
      h(
        'tbody',
        null,
        vs.map((v) =>
          h(
            'tr',
            { 'data-version': String(v.version) },
            h('td', null, String(v.version), v.pruned_at ? h('span', { class: 'muted small' }, ' (bars pruned)') : ''),
            h('td', null, v.timeframe),
            h('td', { class: 'num' }, fmtInt(v.bars)),
            h('td', null, v.first && v.last ? `${v.first.slice(0, 10)} → ${v.last.slice(0, 10)}` : '—'),
            h('td', null, v.created_at.slice(0, 19).replace('T', ' ')),
            h('td', { class: 'version-changes' }, changed(v)),
            h('td', { class: 'mono small', title: v.sha256 }, v.sha256 ? v.sha256.slice(0, 12) : '—'),
          ),
        ),
      ),
    ),
  );
}

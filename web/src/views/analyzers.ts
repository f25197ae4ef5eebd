// The result page's analyzers panel: backtrader's Returns, VWR, Calmar and SharpeRatio_A
// figures, the returns by year (TimeReturn and AnnualReturn) and the PyFolio report's
// transactions (docs/strategy-api.md, "Analyzers").
import type { Analyzers, PeriodValue } from '../api';
import { empty, h } from '../dom';
import { fmtInt, fmtNumber, fmtPctFraction, signClass } from '../format';

type Row = { key: string; label: string; value: number | null | undefined; text: (v: number) => string; title: string };

const dash = (v: number | null | undefined, f: (v: number) => string) => (v == null ? '—' : f(v));

export function analyzersPanel(a: Analyzers): HTMLElement {
  if (!a.returns?.days) return empty('No analyzers for this result (stored before they were computed).');
  const rows: Row[] = [
    { key: 'returns_rtot', label: 'Log return (Returns.rtot)', value: a.returns.rtot, text: (v) => fmtPctFraction(v), title: 'The log of the final value over the initial cash' },
    { key: 'returns_rnorm', label: 'Annualised (Returns.rnorm)', value: a.returns.rnorm, text: (v) => fmtPctFraction(v), title: 'exp(log return per day × 252) − 1' },
    { key: 'vwr', label: 'VWR', value: a.vwr, text: (v) => fmtNumber(v, 3), title: 'Variability-weighted return: the annualised return in percent, reduced by the variability of the daily values' },
    { key: 'calmar', label: 'Calmar (36 months)', value: a.calmar?.calmar, text: (v) => fmtNumber(v, 6), title: 'Log return per month over the last 36 months over the largest monthly drawdown in percent; none before 36 months' },
    { key: 'sharpe_annualized', label: 'Sharpe, yearly (SharpeRatio_A)', value: a.sharpe?.annualized, text: (v) => fmtNumber(v, 3), title: 'Yearly returns less 1%, over their deviation' },
    { key: 'sharpe_monthly_annualized', label: 'Sharpe, monthly × √12', value: a.sharpe?.monthly_annualized, text: (v) => fmtNumber(v, 3), title: 'Monthly returns less 1% a year, over their deviation, × √12' },
  ];
  const figures = h(
    'ul',
    { class: 'stat-list', id: 'analyzer-figures' },
    rows.map((r) => h('li', { 'data-key': r.key, title: r.title }, h('span', { class: 'label' }, r.label), h('span', { class: `value ${r.value == null ? '' : signClass(r.value)}` }, dash(r.value, r.text)))),
  );
  const years = a.time_return?.years ?? [];
  const annual = new Map((a.annual_return ?? []).map((p: PeriodValue) => [p.period, p.value]));
  const yearTable = years.length
    ? h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table', id: 'analyzer-years' },
          h('caption', { class: 'sr-only' }, 'Returns by year'),
          h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Year'), h('th', { scope: 'col', class: 'num', title: 'TimeReturn by year: the year-end value over the previous year-end value (the initial cash first)' }, 'Return'), h('th', { scope: 'col', class: 'num', title: "AnnualReturn: as TimeReturn, but the first year from the first bar's value" }, 'AnnualReturn'))),
          h(
            'tbody',
            null,
            years.map((p) => {
              const y = p.period.slice(0, 4);
              const ar = annual.get(y);
              return h('tr', null, h('th', { scope: 'row' }, y), h('td', { class: `num ${p.value == null ? '' : signClass(p.value)}` }, dash(p.value, (v) => fmtPctFraction(v))), h('td', { class: `num ${ar == null ? '' : signClass(ar)}` }, dash(ar, (v) => fmtPctFraction(v))));
            }),
          ),
        ),
      )
    : empty('No yearly returns.');
  const txs = a.pyfolio?.transactions ?? [];
  const pf = h('p', { class: 'muted', id: 'analyzer-pyfolio' }, `PyFolio report: ${fmtInt(a.pyfolio?.positions?.length ?? 0)} position rows (${(a.pyfolio?.symbols ?? []).join(', ')}), ${fmtInt(txs.length)} transactions — in the JSON export and GET /api/results/{id}/analyzers.`);
  // Two Calmars and two Sharpes on one page read as a contradiction unless said.
  const note = h('p', { class: 'muted small', id: 'analyzer-note' }, "backtrader's own definitions, so they differ from the statistics above: its Calmar is per month over the last 36 months, its Sharpe ratios take 1% a year off the returns, and Return by year starts from the initial cash where AnnualReturn starts from the first bar.");
  return h('div', { class: 'analyzers' }, h('section', { class: 'stat-group card', 'aria-label': 'Analyzer figures' }, figures), yearTable, note, pf);
}

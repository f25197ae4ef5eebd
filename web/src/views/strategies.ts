// Strategies: the list, templates, and the editor page with parameters and version history.

import { ApiError, strategies as api, type ParamInfo, type Strategy, type StrategyVersion, type Template } from '../api';
import { button, clear, confirmDialog, download, empty, errorBox, field, h, loading, toast, withInlineCode } from '../dom';
import { fmtDateTime, fmtInt, fmtParamValue } from '../format';
import { href, navigate, setLeaveGuard } from '../router';
import { diffStats, docSummary, lineDiff, parseLoadError } from '../shape';
import { infosFromParams, paramForm } from './params';

const SKELETON = `/**
 * My strategy.
 * period: moving-average period
 * size: shares per order
 */
class MyStrategy extends Strategy {
  static params = { period: 20, size: 10 };

  init() {
    this.sma = ind.SMA(this.data.close, this.p.period);
  }

  next() {
    if (this.position.size === 0 && this.data.close[0] > this.sma[0]) {
      this.buy({ size: this.p.size });
    } else if (this.position.size > 0 && this.data.close[0] < this.sma[0]) {
      this.close();
    }
  }
}
`;

export async function strategiesView(main: HTMLElement): Promise<void> {
  const list = h('div', null, loading('Loading strategies…'));
  const templates = h('div', null, loading('Loading templates…'));
  main.append(
    h('div', { class: 'page-head' }, h('h1', null, 'Strategies'), h('a', { class: 'btn primary', href: href('/strategies/new') }, 'New strategy')),
    h('section', { 'aria-labelledby': 'h-mine' }, h('h2', { id: 'h-mine' }, 'Your strategies'), list),
    h('section', { 'aria-labelledby': 'h-tpl' }, h('h2', { id: 'h-tpl' }, 'Start from a template'), templates),
  );
  api.listStrategies().then(
    (items) => {
      clear(list);
      if (!items.length) {
        list.append(empty('No strategies yet. Write one or start from a template below.', h('a', { class: 'btn primary', href: href('/strategies/new') }, 'New strategy')));
        return;
      }
      list.append(
        h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'table', id: 'strategy-table' },
            h('caption', { class: 'sr-only' }, 'Strategies'),
            h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Id'), h('th', { scope: 'col', class: 'hide-sm' }, 'Parameters'), h('th', { scope: 'col', class: 'hide-sm' }, 'Created'), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')))),
            h(
              'tbody',
              null,
              items.map((s) =>
                h(
                  'tr',
                  null,
                  h('td', null, h('a', { href: href(`/strategies/${s.id}`) }, s.name), s.description ? h('div', { class: 'muted small' }, s.description) : null),
                  h('td', null, h('code', null, s.id)),
                  h('td', { class: 'hide-sm' }, Object.entries(s.params ?? {}).map(([k, v]) => h('span', { class: 'chip' }, `${k}=${fmtParamValue(v)}`))),
                  h('td', { class: 'hide-sm' }, fmtDateTime(s.created_at), s.created_by ? h('div', { class: 'muted small' }, `by ${s.created_by}`) : null),
                  h('td', { class: 'actions' }, h('a', { class: 'btn small', href: href(`/runs?strategy=${encodeURIComponent(s.id)}`) }, 'Run')),
                ),
              ),
            ),
          ),
        ),
      );
    },
    (e) => list.replaceChildren(errorBox(e)),
  );
  api.listTemplates().then(
    (items) => {
      clear(templates);
      if (!items.length) {
        templates.append(empty('No templates are available.'));
        return;
      }
      templates.append(
        h(
          'ul',
          { class: 'cards' },
          items.map((t) =>
            h(
              'li',
              { class: 'card template' },
              h('h3', null, t.name),
              h('p', { class: 'muted' }, withInlineCode(docSummary(t.code, Object.keys(t.params ?? {})) || t.description || '')),
              h('a', { class: 'btn', href: href(`/strategies/new?template=${encodeURIComponent(templateKey(t))}`), 'aria-label': `Use template ${t.name}` }, 'Use template'),
            ),
          ),
        ),
      );
    },
    (e) => templates.replaceChildren(errorBox(e)),
  );
}

function templateKey(t: Template): string {
  return t.file || t.name;
}

function firstDocLine(code: string): string {
  return docSummary(code, []);
}

export async function strategyView(main: HTMLElement, params: Record<string, string>, query: URLSearchParams): Promise<void> {
  const sid = params.id;
  main.append(loading());
  let strategy: Strategy | null = null;
  let initial = { name: '', description: '', code: SKELETON };
  try {
    if (sid) {
      strategy = await api.getStrategy(sid);
      initial = { name: strategy.name, description: strategy.description ?? '', code: strategy.code };
    } else if (query.get('template')) {
      const key = query.get('template')!;
      const t = (await api.listTemplates()).find((x) => templateKey(x) === key || x.name === key);
      if (t) initial = { name: t.name, description: t.description ?? firstDocLine(t.code), code: t.code };
    }
  } catch (e) {
    main.replaceChildren(errorBox(e), h('p', null, h('a', { href: href('/strategies') }, 'Back to strategies')));
    return;
  }
  main.replaceChildren();

  const nameIn = h('input', { type: 'text', required: true, value: initial.name, autocomplete: 'off', placeholder: 'e.g. SMA crossover' }) as HTMLInputElement;
  const descIn = h('input', { type: 'text', value: initial.description, autocomplete: 'off' }) as HTMLInputElement;
  const status = h('div', { class: 'save-status', 'aria-live': 'polite' });
  const errBanner = h('div', { class: 'load-error', role: 'alert', hidden: true });
  const editorBox = h('div', { class: 'editor', id: 'code-editor' });
  const saveBtn = button(sid ? 'Save new version' : 'Create strategy', () => void save(), 'btn primary', { 'aria-keyshortcuts': 'Control+S' });
  const actions = h('div', { class: 'actions' }, saveBtn);
  if (sid) {
    actions.append(
      h('a', { class: 'btn', href: href(`/runs?strategy=${encodeURIComponent(sid)}`) }, 'Run backtest'),
      button('Delete', () => void remove(), 'btn danger'),
    );
  }
  main.append(
    h('div', { class: 'page-head' }, h('h1', null, sid ? initial.name : 'New strategy'), sid ? h('code', { class: 'muted' }, sid) : null),
    h('div', { class: 'form-row' }, field('Name', nameIn), field('Description', descIn)),
    errBanner,
    editorBox,
    h('div', { class: 'editor-foot' }, actions, status),
  );
  editorBox.append(loading('Loading the editor…'));
  const { codeEditor } = await import('./editor');
  editorBox.replaceChildren();
  const editor = codeEditor(editorBox, initial.code, () => void save());
  // A strategy file from disk, picked or dropped on the editor: its text replaces the code
  // (unsaved until Save), and a new strategy takes its name from the file's class or name.
  const MAX_FILE = 1 << 20;
  const loadFile = async (file: File | undefined) => {
    if (!file) return;
    if (!/\.(js|mjs|txt)$/i.test(file.name) && file.type !== 'text/javascript' && file.type !== 'application/javascript') {
      toast(`${file.name} is not a JavaScript file (.js).`, 'error');
      return;
    }
    if (file.size > MAX_FILE) {
      toast(`${file.name} is ${fmtInt(file.size)} bytes: a strategy file is at most ${fmtInt(MAX_FILE)}.`, 'error');
      return;
    }
    const code = await file.text();
    editor.set(code);
    editor.clearError();
    if (!nameIn.value.trim()) nameIn.value = /class\s+([A-Za-z_$][\w$]*)\s+extends\s+Strategy/.exec(code)?.[1] ?? file.name.replace(/\.[^.]+$/, '');
    status.textContent = `Loaded ${file.name} (${fmtInt(code.split('\n').length)} lines): not saved yet.`;
    editorBox.dataset.loadedFile = file.name;
  };
  const fileIn = h('input', { type: 'file', accept: '.js,.mjs,text/javascript,application/javascript', id: 'strategy-file', class: 'sr-only', tabindex: '-1', 'aria-label': 'Strategy file (.js)' }) as HTMLInputElement;
  fileIn.addEventListener('change', () => {
    void loadFile(fileIn.files?.[0]);
    fileIn.value = '';
  });
  actions.append(fileIn, button('Open file…', () => fileIn.click(), 'btn', { id: 'strategy-open-file', title: 'Load the code from a .js file; you can also drop one on the editor' }));
  editorBox.addEventListener('dragover', (e) => {
    if (!e.dataTransfer?.types.includes('Files')) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    editorBox.classList.add('drop-target');
  });
  editorBox.addEventListener('dragleave', () => editorBox.classList.remove('drop-target'));
  // capture: CodeMirror handles drops of text itself
  editorBox.addEventListener(
    'drop',
    (e) => {
      editorBox.classList.remove('drop-target');
      const file = e.dataTransfer?.files?.[0];
      if (!file) return;
      e.preventDefault();
      e.stopPropagation();
      void loadFile(file);
    },
    true,
  );
  // What was last saved (or loaded): leaving with anything else asks first.
  let saved = { name: nameIn.value, description: descIn.value, code: editor.get() };
  setLeaveGuard(() =>
    editor.get() !== saved.code || nameIn.value !== saved.name || descIn.value !== saved.description
      ? 'Your changes to this strategy are not saved. Leave and lose them?'
      : null,
  );

  async function save(): Promise<void> {
    const name = nameIn.value.trim();
    if (!name) {
      nameIn.setAttribute('aria-invalid', 'true');
      nameIn.focus();
      toast('A name is required.', 'error');
      return;
    }
    nameIn.removeAttribute('aria-invalid');
    saveBtn.disabled = true;
    status.textContent = 'Saving…';
    const body = { name, description: descIn.value, code: editor.get() };
    try {
      const s = sid ? await api.replaceStrategy(sid, body) : await api.createStrategy(body);
      editor.clearError();
      errBanner.hidden = true;
      saved = { name: nameIn.value, description: descIn.value, code: body.code };
      status.textContent = `Saved at ${fmtDateTime(new Date())}`;
      toast(sid ? 'Saved a new version.' : 'Strategy created.', 'ok');
      if (!sid) navigate(`/strategies/${s.id}`, true);
      else await refreshPanels(s);
    } catch (e) {
      status.textContent = '';
      if (e instanceof ApiError && e.status === 400) {
        const le = parseLoadError(e.body, e.message);
        errBanner.replaceChildren(
          h('strong', null, le.line ? `Line ${le.line}${le.column ? `, column ${le.column}` : ''}: ` : 'Error: '),
          le.message,
          le.line ? button('Go to line', () => editor.showError(le.message, le.line, le.column), 'btn small') : '',
        );
        errBanner.dataset.line = String(le.line ?? '');
        errBanner.hidden = false;
        editor.showError(le.message, le.line, le.column);
      } else {
        toast((e as Error).message, 'error');
      }
    } finally {
      saveBtn.disabled = false;
    }
  }

  async function remove(): Promise<void> {
    if (!(await confirmDialog('Delete strategy?', `“${initial.name}” will disappear from the list. Its versions stay stored for the runs that used them.`))) return;
    try {
      await api.deleteStrategy(sid);
      toast('Strategy deleted.', 'ok');
      setLeaveGuard(() => null); // nothing left to save
      navigate('/strategies');
    } catch (e) {
      toast((e as Error).message, 'error');
    }
  }

  if (!sid || !strategy) return;

  // ---- tabs: parameters and versions ----
  const paramsPanel = h('div', { id: 'panel-params', role: 'tabpanel', 'aria-labelledby': 'tab-params' });
  const versionsPanel = h('div', { id: 'panel-versions', role: 'tabpanel', 'aria-labelledby': 'tab-versions', hidden: true });
  const tabs = tabBar([
    ['params', 'Parameters', paramsPanel],
    ['versions', 'Versions', versionsPanel],
  ]);
  main.append(h('section', { class: 'panels' }, tabs, paramsPanel, versionsPanel));

  async function refreshPanels(s: Strategy): Promise<void> {
    h1Update(main, s.name);
    initial.name = s.name;
    await Promise.all([renderParams(paramsPanel, s), renderVersions(versionsPanel, s)]);
  }
  await refreshPanels(strategy);
}

function h1Update(main: HTMLElement, name: string) {
  const h1 = main.querySelector('h1');
  if (h1) h1.textContent = name;
}

function tabBar(items: [string, string, HTMLElement][]): HTMLElement {
  const bar = h('div', { class: 'tabs', role: 'tablist' });
  const btns = items.map(([key, label, panel], i) => {
    const b = h('button', { type: 'button', role: 'tab', id: `tab-${key}`, 'aria-controls': panel.id, 'aria-selected': i === 0 ? 'true' : 'false', tabindex: i === 0 ? '0' : '-1' }, label);
    b.addEventListener('click', () => select(i));
    b.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
        const n = (i + (e.key === 'ArrowRight' ? 1 : items.length - 1)) % items.length;
        select(n);
        btns[n].focus();
      }
    });
    return b;
  });
  function select(n: number) {
    items.forEach(([, , panel], i) => {
      panel.hidden = i !== n;
      btns[i].setAttribute('aria-selected', String(i === n));
      btns[i].tabIndex = i === n ? 0 : -1;
    });
  }
  bar.append(...btns);
  return bar;
}

async function renderParams(panel: HTMLElement, s: Strategy): Promise<void> {
  panel.replaceChildren(loading('Loading parameters…'));
  let infos: ParamInfo[];
  try {
    infos = await api.listParameters(s.id);
  } catch (e) {
    if (!(e instanceof ApiError && (e.status === 404 || e.status === 405))) {
      panel.replaceChildren(errorBox(e));
      return;
    }
    infos = infosFromParams(s.params);
  }
  const form = paramForm(infos, { idPrefix: 'sp' });
  const fileIn = h('input', { type: 'file', accept: 'application/json,.json', class: 'sr-only', id: 'config-file' }) as HTMLInputElement;
  fileIn.addEventListener('change', async () => {
    const f = fileIn.files?.[0];
    if (!f) return;
    try {
      const cfg = JSON.parse(await f.text());
      const values = (cfg && typeof cfg === 'object' && 'params' in cfg ? cfg.params : cfg) as Record<string, unknown>;
      const res = await api.saveConfig(s.id, cfg);
      const applied = res && typeof res === 'object' ? ((res as Record<string, unknown>).params as Record<string, unknown>) ?? (res as Record<string, unknown>) : values;
      form.set(applied ?? values);
      toast('Configuration imported.', 'ok');
    } catch (e) {
      toast(e instanceof SyntaxError ? `Not a JSON file: ${e.message}` : (e as Error).message, 'error');
    } finally {
      fileIn.value = '';
    }
  });
  const runWith = () => {
    const v = form.values();
    if (!v) return;
    navigate(`/runs?strategy=${encodeURIComponent(s.id)}&params=${encodeURIComponent(JSON.stringify(v))}`);
  };
  const exportCfg = async () => {
    const v = form.values();
    if (!v) return;
    let cfg: unknown = { strategy_id: s.id, params: v };
    try {
      const server = await api.getConfig(s.id);
      cfg = { ...server, params: v };
    } catch {
      /* the form's values are the configuration */
    }
    download(`${s.name.replace(/\W+/g, '_')}_config.json`, JSON.stringify(cfg, null, 2), 'application/json');
  };
  panel.replaceChildren(
    h('form', { class: 'params', onsubmit: (e: Event) => (e.preventDefault(), runWith()) }, form.el, h('div', { class: 'actions' }, infos.length ? h('button', { type: 'submit', class: 'btn primary' }, 'Run with these values') : null, button('Export configuration', () => void exportCfg()), h('label', { class: 'btn', for: 'config-file', tabindex: '0', onkeydown: (e: KeyboardEvent) => (e.key === 'Enter' || e.key === ' ') && (e.preventDefault(), fileIn.click()) }, 'Import configuration'), fileIn)),
  );
}

async function renderVersions(panel: HTMLElement, current: Strategy): Promise<void> {
  const sid = current.id;
  panel.replaceChildren(loading('Loading versions…'));
  let versions: StrategyVersion[];
  try {
    versions = await api.listVersions(sid);
  } catch (e) {
    panel.replaceChildren(errorBox(e));
    return;
  }
  if (!versions.length) {
    panel.replaceChildren(empty('No versions recorded.'));
    return;
  }
  versions.sort((a, b) => b.version - a.version);
  const opt = (v: StrategyVersion, sel: boolean) => h('option', { value: String(v.version), selected: sel }, `v${v.version} · ${fmtDateTime(v.created_at)}`);
  const fromSel = h('select', { id: 'diff-from' }, versions.map((v, i) => opt(v, i === Math.min(1, versions.length - 1)))) as HTMLSelectElement;
  const toSel = h('select', { id: 'diff-to' }, versions.map((v, i) => opt(v, i === 0))) as HTMLSelectElement;
  const out = h('div', { class: 'diff-out', 'aria-live': 'polite' });
  const cache = new Map<number, string>();
  const codeOf = async (n: number): Promise<string> => {
    const have = versions.find((v) => v.version === n)?.code;
    if (typeof have === 'string') return have;
    if (!cache.has(n)) cache.set(n, (await api.getVersion(sid, n)).code ?? '');
    return cache.get(n)!;
  };
  const show = async () => {
    out.replaceChildren(loading('Comparing…'));
    try {
      const [a, b] = await Promise.all([codeOf(Number(fromSel.value)), codeOf(Number(toSel.value))]);
      out.replaceChildren(renderDiff(a, b, `v${fromSel.value}`, `v${toSel.value}`));
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
  };
  // Restoring an old version saves its code as a new version: history only grows.
  const restore = async (v: StrategyVersion) => {
    if (!(await confirmDialog(`Restore v${v.version}?`, `Its code becomes the current version (a new version after v${current.version}); every version stays in the history.`, `Restore v${v.version}`))) return;
    try {
      const code = await codeOf(v.version);
      const s = await api.replaceStrategy(sid, { name: current.name, description: current.description ?? undefined, code });
      toast(`Restored v${v.version} as v${s.version}.`, 'ok');
      navigate(`/strategies/${sid}`, true);
    } catch (e) {
      toast((e as Error).message, 'error');
    }
  };
  fromSel.addEventListener('change', () => void show());
  toSel.addEventListener('change', () => void show());
  panel.replaceChildren(
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'table compact' },
        h('caption', { class: 'sr-only' }, 'Versions'),
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Version'), h('th', { scope: 'col' }, 'Created'), h('th', { scope: 'col', class: 'hide-sm' }, 'Origin'), h('th', { scope: 'col', class: 'hide-sm' }, 'Hash'), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')))),
        h(
          'tbody',
          null,
          versions.map((v) =>
            h(
              'tr',
              { 'data-version': v.version },
              h('td', null, `v${v.version}`, v.version === current.version ? h('span', { class: 'muted small' }, ' (current)') : null),
              h('td', null, fmtDateTime(v.created_at), v.created_by ? ` · ${v.created_by}` : ''),
              h('td', { class: 'hide-sm' }, v.origin ?? ''),
              h('td', { class: 'hide-sm' }, h('code', null, v.content_hash.slice(0, 10))),
              h('td', null, v.version === current.version ? null : button('Restore', () => void restore(v), 'btn small', { 'aria-label': `Restore v${v.version} as the current version` })),
            ),
          ),
        ),
      ),
    ),
    h('div', { class: 'form-row' }, field('From', fromSel), field('To', toSel)),
    out,
  );
  await show();
}

function renderDiff(a: string, b: string, la: string, lb: string): HTMLElement {
  const d = lineDiff(a, b);
  const st = diffStats(d);
  if (st.added === 0 && st.removed === 0) return h('p', { class: 'muted' }, `${la} and ${lb} have the same code.`);
  return h(
    'div',
    { class: 'diff' },
    h('p', { class: 'muted' }, `${la} → ${lb}: `, h('span', { class: 'pos' }, `+${st.added}`), ' ', h('span', { class: 'neg' }, `−${st.removed}`), ' lines'),
    h(
      'pre',
      { class: 'diff-body', tabindex: '0', 'aria-label': `Differences between ${la} and ${lb}` },
      d.map((x) => h('div', { class: `dl ${x.op === '+' ? 'add' : x.op === '-' ? 'del' : ''}` }, h('span', { class: 'ln' }, x.a ?? ''), h('span', { class: 'ln' }, x.b ?? ''), h('span', { class: 'op' }, x.op), x.text)),
    ),
  );
}

// The code editor: CodeMirror 6 with JavaScript highlighting, line numbers and load-error marks.

import { basicSetup } from 'codemirror';
import { EditorView, keymap, Decoration, type DecorationSet } from '@codemirror/view';
import { EditorState, StateEffect, StateField } from '@codemirror/state';
import { javascript } from '@codemirror/lang-javascript';
import { lintGutter, setDiagnostics } from '@codemirror/lint';

const markErrorLine = StateEffect.define<number | null>();

const errorLineField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects) {
      if (!e.is(markErrorLine)) continue;
      if (e.value === null) return Decoration.none;
      const line = tr.state.doc.line(Math.min(Math.max(1, e.value), tr.state.doc.lines));
      return Decoration.set([Decoration.line({ class: 'cm-error-line', attributes: { 'data-error-line': String(e.value) } }).range(line.from)]);
    }
    if (tr.docChanged) return Decoration.none;
    return deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

export interface CodeEditor {
  view: EditorView;
  get(): string;
  set(code: string): void;
  showError(message: string, line?: number, column?: number): void;
  clearError(): void;
}

export function codeEditor(parent: HTMLElement, code: string, onSave: () => void): CodeEditor {
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: code,
      extensions: [
        basicSetup,
        javascript(),
        lintGutter(),
        errorLineField,
        keymap.of([
          {
            key: 'Mod-s',
            preventDefault: true,
            run: () => {
              onSave();
              return true;
            },
          },
        ]),
        EditorView.contentAttributes.of({ 'aria-label': 'Strategy code (JavaScript)' }),
        EditorView.theme({ '&': { height: '100%' }, '.cm-scroller': { overflow: 'auto' } }),
      ],
    }),
  });
  const ed: CodeEditor = {
    view,
    get: () => view.state.doc.toString(),
    set(c: string) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: c } });
    },
    showError(message, line, column) {
      if (!line) {
        view.dispatch(setDiagnostics(view.state, []));
        return;
      }
      const doc = view.state.doc;
      const l = doc.line(Math.min(Math.max(1, line), doc.lines));
      const from = Math.min(l.from + Math.max(0, (column ?? 1) - 1), l.to);
      const to = from < l.to ? l.to : from;
      view.dispatch(setDiagnostics(view.state, [{ from, to, severity: 'error', message }]));
      view.dispatch({ effects: [markErrorLine.of(line), EditorView.scrollIntoView(from, { y: 'center' })], selection: { anchor: from } });
    },
    clearError() {
      view.dispatch(setDiagnostics(view.state, []));
      view.dispatch({ effects: markErrorLine.of(null) });
    },
  };
  // A handle for end-to-end tests and browser consoles: document.querySelector('#code-editor').__editor
  Object.defineProperty(parent, '__editor', { value: ed });
  return ed;
}

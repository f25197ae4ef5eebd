// Tiny DOM helpers: h() builds elements, toast() reports, confirmDialog() asks.

import { inlineCodeParts } from './shape';

type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, unknown>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') {
        el.addEventListener(k.slice(2).toLowerCase(), v as EventListener);
      } else if (k === 'class') {
        el.className = String(v);
      } else if (k === 'style' && typeof v === 'object') {
        Object.assign(el.style, v);
      } else if (k === 'value' && 'value' in el) {
        (el as HTMLInputElement).value = String(v);
      } else if (k === 'checked' || k === 'disabled' || k === 'selected') {
        (el as unknown as Record<string, boolean>)[k] = Boolean(v);
        if (v) el.setAttribute(k, '');
      } else {
        el.setAttribute(k, v === true ? '' : String(v));
      }
    }
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

let uid = 0;
export function id(prefix = 'f'): string {
  uid += 1;
  return `${prefix}-${uid}`;
}

/** A labelled form field: the label is tied to the control for screen readers. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  if (!control.id) control.id = id('fld');
  const hintEl = hint ? h('small', { class: 'hint', id: control.id + '-hint' }, hint) : null;
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, hintEl);
}

export function toast(message: string, kind: 'info' | 'error' | 'ok' = 'info'): void {
  const box = document.getElementById('toasts');
  if (!box) return;
  const t = h('div', { class: `toast ${kind}`, role: kind === 'error' ? 'alert' : undefined }, message);
  box.appendChild(t);
  setTimeout(() => t.remove(), kind === 'error' ? 8000 : 4000);
}

export function errorBox(err: unknown): HTMLElement {
  return h('div', { class: 'error-box', role: 'alert' }, errorText(err));
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

export function loading(text = 'Loading…'): HTMLElement {
  return h('div', { class: 'loading', role: 'status', 'aria-live': 'polite' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), text);
}

export function empty(text: string, ...extra: Child[]): HTMLElement {
  return h('div', { class: 'empty' }, h('p', null, text), ...extra);
}

/** A modal confirmation built on <dialog>; resolves true when confirmed. */
export function confirmDialog(title: string, body: string, confirmLabel = 'Delete', cancelLabel = 'Cancel'): Promise<boolean> {
  return new Promise((resolve) => {
    const dlg = h('dialog', { class: 'dialog', 'aria-labelledby': 'dlg-title' }) as HTMLDialogElement;
    const done = (v: boolean) => {
      dlg.close();
      dlg.remove();
      resolve(v);
    };
    const cancel = h('button', { type: 'button', class: 'btn', onclick: () => done(false) }, cancelLabel);
    const okBtn = h('button', { type: 'button', class: 'btn danger', onclick: () => done(true) }, confirmLabel);
    dlg.append(h('h2', { id: 'dlg-title' }, title), h('p', null, body), h('div', { class: 'actions' }, cancel, okBtn));
    dlg.addEventListener('cancel', (e) => {
      e.preventDefault();
      done(false);
    });
    document.body.appendChild(dlg);
    dlg.showModal();
    cancel.focus();
  });
}

export function download(filename: string, data: string | Blob, type = 'application/octet-stream'): void {
  const blob = typeof data === 'string' ? new Blob([data], { type }) : data;
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: filename, style: { display: 'none' } });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function downloadDataURL(filename: string, dataURL: string): void {
  const a = h('a', { href: dataURL, download: filename, style: { display: 'none' } });
  document.body.appendChild(a);
  a.click();
  a.remove();
}

export function button(label: string, onclick: (e: MouseEvent) => void, cls = 'btn', attrs: Attrs = {}): HTMLButtonElement {
  return h('button', { type: 'button', class: cls, onclick, ...attrs }, label);
}

/**
 * Runs render, which rebuilds box, and puts the keyboard focus back where it was inside box:
 * on the new element with the same id, data-focus key or accessible name; when that one is
 * now disabled (Next on the last page), on a live control next to it. Without this a list
 * that refreshes itself drops the focus to <body> under a keyboard user's hands.
 */
export function keepFocus(box: HTMLElement, render: () => void): void {
  const active = document.activeElement as HTMLElement | null;
  const inside = !!active && active !== document.body && box.contains(active);
  const sel = inside ? focusSelector(active) : null;
  render();
  if (!inside) return;
  let target = sel ? box.querySelector<HTMLElement>(sel) : null;
  if (target && (target as HTMLButtonElement).disabled) target = target.parentElement?.querySelector<HTMLElement>('button:not([disabled]), select, input:not([disabled])') ?? null;
  target ??= box.querySelector<HTMLElement>('button:not([disabled]), a[href], select, input:not([disabled]), [tabindex="0"]');
  target?.focus({ preventScroll: true });
}

function focusSelector(el: HTMLElement): string | null {
  if (el.id) return `#${CSS.escape(el.id)}`;
  if (el.dataset.focus) return `[data-focus="${CSS.escape(el.dataset.focus)}"]`;
  const name = el.getAttribute('aria-label');
  return name ? `${el.tagName.toLowerCase()}[aria-label="${CSS.escape(name)}"]` : null;
}

/**
 * A date field that reads and writes ISO text (YYYY-MM-DD) whatever the browser's locale
 * (a native date input shows 01/02/2015 in the United States and 02.01.2015 in Germany),
 * so it reads like every other date on the page. An impossible date is reported as invalid.
 */
export function dateInput(attrs: Attrs): HTMLInputElement {
  const el = h('input', { type: 'text', inputmode: 'numeric', pattern: '\\d{4}-\\d{2}-\\d{2}', placeholder: 'YYYY-MM-DD', maxlength: 10, size: 10, autocomplete: 'off', ...attrs }) as HTMLInputElement;
  const check = () => {
    const v = el.value.trim();
    const ok = v === '' || (/^\d{4}-\d{2}-\d{2}$/.test(v) && new Date(`${v}T00:00:00Z`).toISOString().slice(0, 10) === v);
    el.setCustomValidity(ok ? '' : 'Enter a date as YYYY-MM-DD');
  };
  el.addEventListener('input', check);
  el.addEventListener('change', check);
  return el;
}

/** Text with `inline code` in backticks: the code in <code>, the backticks gone (inlineCodeParts). */
export function withInlineCode(text: string): (Node | string)[] {
  return inlineCodeParts(text).map((p) => (p.code ? h('code', null, p.text) : p.text));
}

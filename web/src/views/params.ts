// A form generated from parameter info ({name, value, type, default, description}), with the
// spec's validation (int/float/bool coercion and its error texts) shown next to each field.

import type { ParamInfo } from '../api';
import { h, id } from '../dom';
import { coerceParam, typeOfValue } from '../shape';
import { fmtParamValue } from '../format';

export interface ParamForm {
  el: HTMLElement;
  /** The values, or null after marking the invalid fields. */
  values(): Record<string, unknown> | null;
  set(values: Record<string, unknown>): void;
}

export function infosFromParams(params: Record<string, unknown> | undefined): ParamInfo[] {
  return Object.entries(params ?? {}).map(([name, v]) => ({ name, value: v, default: v, type: typeOfValue(v), description: '' }));
}

export function paramForm(infos: ParamInfo[], opts: { idPrefix?: string } = {}): ParamForm {
  const rows: { info: ParamInfo; input: HTMLInputElement; err: HTMLElement }[] = [];
  const el = h('div', { class: 'param-form' });
  if (infos.length === 0) {
    el.append(h('p', { class: 'muted' }, 'This strategy has no parameters.'));
  }
  for (const info of infos) {
    const t = (info.type || typeOfValue(info.default)).toLowerCase();
    const isBool = t === 'bool' || t === 'boolean';
    const inputId = id(opts.idPrefix ?? 'param');
    const input = h('input', {
      id: inputId,
      name: info.name,
      type: isBool ? 'checkbox' : t === 'int' || t === 'float' ? 'text' : 'text',
      inputmode: t === 'int' ? 'numeric' : t === 'float' ? 'decimal' : undefined,
      'data-type': t,
      'aria-describedby': `${inputId}-desc ${inputId}-err`,
    }) as HTMLInputElement;
    const current = info.value !== undefined ? info.value : info.default;
    if (isBool) input.checked = Boolean(current);
    else input.value = fmtParamValue(current);
    const err = h('small', { class: 'field-error', id: `${inputId}-err`, role: 'alert' });
    const desc = h('small', { class: 'hint', id: `${inputId}-desc` }, [info.description, `${t}, default ${fmtParamValue(info.default)}`].filter(Boolean).join(' · '));
    input.addEventListener('input', () => {
      try {
        validate(rows.find((r) => r.input === input)!);
      } catch {
        /* shown next to the field as the user types */
      }
    });
    rows.push({ info, input, err });
    el.append(h('div', { class: 'field param' + (isBool ? ' check' : '') }, h('label', { for: inputId }, info.name), input, desc, err));
  }
  function validate(r: (typeof rows)[number]): unknown {
    const t = r.input.dataset.type!;
    try {
      const v = r.input.type === 'checkbox' ? r.input.checked : coerceParam(r.info.name, t, r.input.value);
      r.err.textContent = '';
      r.input.removeAttribute('aria-invalid');
      return v;
    } catch (e) {
      r.err.textContent = (e as Error).message;
      r.input.setAttribute('aria-invalid', 'true');
      throw e;
    }
  }
  return {
    el,
    values() {
      const out: Record<string, unknown> = {};
      let okAll = true;
      for (const r of rows) {
        try {
          out[r.info.name] = validate(r);
        } catch {
          if (okAll) r.input.focus();
          okAll = false;
        }
      }
      return okAll ? out : null;
    },
    set(values) {
      for (const r of rows) {
        if (!(r.info.name in values)) continue;
        const v = values[r.info.name];
        if (r.input.type === 'checkbox') r.input.checked = Boolean(v);
        else r.input.value = fmtParamValue(v);
        try {
          validate(r);
        } catch {
          /* shown next to the field */
        }
      }
    },
  };
}

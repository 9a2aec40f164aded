// DOM helpers: every value reaches the page as text (textContent, attributes), never as markup.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'class') el.className = value;
    else if (name === 'value' || name === 'checked' || name === 'selected') el[name] = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, ...children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

export function clear(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

export function notice(kind, text) {
  return h('div', { class: `notice ${kind}`, role: kind === 'bad' ? 'alert' : 'status' }, text);
}

/** Show an error of a call (ApiError or any other) in `where`, replacing what was there. */
export function showError(where, error) {
  const detail = error && error.code ? ` (${error.status} ${error.code})` : '';
  clear(where, notice('bad', `${error && error.message ? error.message : String(error)}${detail}`));
}

export function table(headers, rows) {
  return h('table', null,
    h('thead', null, h('tr', null, headers.map((name) => h('th', { scope: 'col' }, name)))),
    h('tbody', null, rows.map((cells) => h('tr', null, cells.map((cell) => h('td', null, cell))))));
}

export function kv(pairs) {
  return h('dl', { class: 'kv' }, pairs.filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
}

export function field(label, control) {
  return h('label', null, label, control);
}

export function pill(text, kind) {
  return h('span', { class: `pill ${kind || ''}` }, text);
}

export function num(value, digits = 4) {
  return typeof value === 'number' ? Number(value.toFixed(digits)).toString() : '–';
}

export function when(iso) {
  return iso ? new Date(iso).toLocaleString() : '–';
}

export function tags(map) {
  const entries = Object.entries(map || {});
  return entries.length ? entries.map(([k, v]) => pill(`${k}: ${v}`)) : h('span', { class: 'muted' }, 'none');
}

/** A button that asks once more inline before `action` runs (no window.confirm: keyboard and screen readers). */
export function confirmButton(label, question, action) {
  const box = h('span', { class: 'confirm' });
  const ask = h('button', { type: 'button', class: 'danger', onclick: () => {
    const yes = h('button', { type: 'button', class: 'danger', onclick: async () => {
      yes.disabled = true;
      try { await action(); } finally { clear(box, ask); }
    } }, `Confirm: ${label}`);
    const no = h('button', { type: 'button', onclick: () => { clear(box, ask); ask.focus(); } }, 'Cancel');
    clear(box, h('span', { class: 'small' }, question, ' '), yes, ' ', no);
    yes.focus();
  } }, label);
  return append(box, ask);
}

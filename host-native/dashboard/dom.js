// Small DOM helpers: elements are built with createElement and text
// nodes only (never innerHTML), so no API value can inject markup.
const SVG = 'http://www.w3.org/2000/svg';

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.setAttribute('class', v);
    else if (k in el && !(el instanceof SVGElement)) el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export const h = (tag, attrs, ...children) => build(document.createElement(tag), attrs, children);
export const s = (tag, attrs, ...children) => build(document.createElementNS(SVG, tag), attrs, children);

export function iso(ms) {
  if (ms === null || ms === undefined) return '—';
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

export function ago(ms, now = Date.now()) {
  if (ms === null || ms === undefined) return '—';
  const d = Math.round((ms - now) / 1000);
  const a = Math.abs(d);
  const t = a < 90 ? `${a} s` : a < 5400 ? `${Math.round(a / 60)} min` : a < 172800 ? `${Math.round(a / 3600)} h` : `${Math.round(a / 86400)} d`;
  return d >= 0 ? `in ${t}` : `${t} ago`;
}

export function table(caption, headers, rows, opts = {}) {
  return h('table', { class: opts.class },
    h('caption', { class: 'muted', hidden: !opts.showCaption }, caption),
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', { scope: 'col', class: /^(#|fires|skips|count|attempt|depth)/i.test(x) ? 'num' : undefined }, x)))),
    h('tbody', {}, rows));
}

/** Asks for confirmation in the page's dialog; resolves true on Confirm. */
export function confirmAction(text) {
  const dlg = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = text;
  return new Promise((resolve) => {
    dlg.addEventListener('close', () => resolve(dlg.returnValue === 'ok'), { once: true });
    dlg.returnValue = '';
    dlg.showModal();
    document.getElementById('confirm-ok').focus();
  });
}

/** A status line for the result of an action. */
export function flash(el, text, ok = true) {
  el.textContent = text;
  el.className = ok ? 'ok' : 'error';
}

// page.js: the captures page (captures.html): searches the store behind `vor serve --store`
// (GET /api/captures, query.js builds the query), lists the captures, opens one in the panel
// (index.html?capture=ID), and for two picked ones shows their comparison (compare.js: vor diff,
// run by the store) until the panel compares captures itself. The search is kept in the page's URL, so a
// search can be shared as a link. A token (servers with --token-reads) is read from ?token=.

import { showComparison } from './compare.js';
import { buildQuery, formatBytes, formatSpan, formatStart, parseQuery, stateOf } from './query.js';

const PAGE = 100;

/** @typedef {import('./query.js').StoredCapture} StoredCapture */

/**
 * Starts the page in `doc` (captures.html's elements); returns {search} (runs the search again).
 * @param {Document} doc
 */
export function startCapturesPage(doc) {
  const win = /** @type {Window} */ (doc.defaultView);
  const form = /** @type {HTMLFormElement} */ (doc.getElementById('filters'));
  const status = /** @type {HTMLElement} */ (doc.getElementById('status'));
  const tbody = /** @type {HTMLElement} */ (doc.querySelector('#results tbody'));
  const pages = /** @type {HTMLElement} */ (doc.getElementById('pages'));
  const compare = /** @type {HTMLElement} */ (doc.getElementById('compare'));
  const token = new URLSearchParams(win.location.search).get('token');
  /** @type {Map<string, StoredCapture>} */
  const picked = new Map();
  /** @param {string} name */
  const field = (name) => /** @type {HTMLInputElement | null} */ (form.elements.namedItem(name));
  let offset = 0;

  const initial = parseQuery(win.location.search);
  for (const [k, v] of Object.entries(initial)) {
    const el = field(k);
    if (el) el.value = String(v);
  }
  offset = initial.offset || 0;

  const values = () => {
    /** @type {Record<string, string | number>} */
    const v = {};
    for (const el of /** @type {HTMLInputElement[]} */ ([...form.elements])) if (el.name) v[el.name] = el.value;
    v.offset = offset;
    return /** @type {import('./query.js').FormValues} */ (v);
  };

  /** @param {string} text @param {boolean} [error] */
  const setStatus = (text, error = false) => {
    status.textContent = text;
    status.className = error ? 'error' : '';
  };

  /** @type {(() => void) | null} */
  let cancelCompare = null;
  const showCompare = () => {
    const two = [...picked.values()];
    if (cancelCompare) cancelCompare();
    cancelCompare = null;
    compare.hidden = two.length !== 2;
    compare.replaceChildren();
    if (two.length === 2) cancelCompare = showComparison(doc, compare, two[0], two[1], token);
  };

  /** @param {StoredCapture} c */
  const row = (c) => {
    const tr = doc.createElement('tr');
    /** @param {string} text @param {string} [cls] */
    const cell = (text, cls) => {
      const td = doc.createElement('td');
      td.textContent = text;
      if (cls) td.className = cls;
      tr.append(td);
      return td;
    };
    const pick = doc.createElement('input');
    pick.type = 'checkbox';
    pick.title = 'pick two to compare';
    pick.checked = picked.has(c.id);
    pick.addEventListener('change', () => {
      if (pick.checked) {
        const oldest = picked.keys().next().value;
        if (picked.size === 2 && oldest !== undefined) picked.delete(oldest);
        picked.set(c.id, c);
      } else {
        picked.delete(c.id);
      }
      for (const r of tbody.querySelectorAll('tr')) r.classList.toggle('picked', picked.has(r.dataset.id ?? ''));
      for (const box of tbody.querySelectorAll('input')) box.checked = picked.has(box.closest('tr')?.dataset.id ?? '');
      showCompare();
    });
    const first = doc.createElement('td');
    first.append(pick);
    tr.append(first);
    tr.dataset.id = c.id;
    cell(formatStart(c.start_ms || c.uploaded_ms));
    cell(c.project || '');
    cell(c.process || '');
    cell(Object.entries(c.tags || {}).map(([k, v]) => `${k}=${v}`).join(' '), 'tags');
    cell(c.frames != null ? c.frames.toLocaleString('en') : '…', 'num');
    cell(formatSpan(c.span_ns), 'num');
    cell(formatBytes(c.bytes || 0), 'num');
    const state = stateOf(c);
    cell(state, `state-${state}`);
    const top = (c.top_self || [])[0];
    cell(top ? top.name : c.indexed ? '–' : 'indexing…');
    const open = doc.createElement('a');
    open.href = `index.html?capture=${encodeURIComponent(c.id)}`;
    open.textContent = 'open';
    const td = doc.createElement('td');
    td.append(open);
    tr.append(td);
    tr.classList.toggle('picked', picked.has(c.id));
    return tr;
  };

  const search = async () => {
    const q = buildQuery(values(), { limit: PAGE });
    const shown = new URLSearchParams(q);
    shown.delete('limit');
    if (token) shown.set('token', token);
    win.history.replaceState(null, '', `${win.location.pathname}${shown.toString() ? `?${shown}` : ''}`);
    setStatus('searching…');
    let body;
    try {
      const res = await win.fetch(`api/captures?${q}${token ? `&token=${encodeURIComponent(token)}` : ''}`,
        { cache: 'no-store' });
      body = await res.json();
      if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
    } catch (err) {
      setStatus(`search failed: ${err.message}`, true);
      return;
    }
    if (!body.store) {
      setStatus('this server keeps no store: start it with vor serve --store DIR', true);
      tbody.replaceChildren();
      return;
    }
    const stored = /** @type {StoredCapture[]} */ (body.captures).filter((c) => c.stored);
    tbody.replaceChildren(...stored.map(row));
    setStatus(`${body.total} capture${body.total === 1 ? '' : 's'} match${stored.length < body.total ? `; ${offset + 1}–${offset + stored.length} shown` : ''}`);
    pages.replaceChildren();
    /** @param {string} label @param {number} to */
    const nav = (label, to) => {
      const b = doc.createElement('button');
      b.textContent = label;
      b.addEventListener('click', () => { offset = to; search(); });
      pages.append(b);
    };
    if (offset > 0) nav('← newer', Math.max(0, offset - PAGE));
    if (offset + stored.length < body.total) nav('older →', offset + PAGE);
  };

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    offset = 0;
    search();
  });
  search();
  return { search };
}

// page.js: the captures page (captures.html): searches the store behind `vor serve --store`
// (GET /api/captures, query.js builds the query), lists the captures, opens one in the panel
// (index.html?capture=ID), and for two picked ones shows the `vor diff` commands that compare
// them (the panel's own comparison is to come). The search is kept in the page's URL, so a
// search can be shared as a link. A token (servers with --token-reads) is read from ?token=.

import { buildQuery, diffCommand, formatBytes, formatSpan, formatStart, parseQuery, stateOf } from './query.js';

const PAGE = 100;

export function startCapturesPage(doc) {
  const win = doc.defaultView;
  const form = doc.getElementById('filters');
  const status = doc.getElementById('status');
  const tbody = doc.querySelector('#results tbody');
  const pages = doc.getElementById('pages');
  const compare = doc.getElementById('compare');
  const token = new URLSearchParams(win.location.search).get('token');
  const picked = new Map();
  let offset = 0;

  const initial = parseQuery(win.location.search);
  for (const [k, v] of Object.entries(initial)) if (form.elements[k]) form.elements[k].value = v;
  offset = initial.offset || 0;

  const values = () => {
    const v = {};
    for (const el of form.elements) if (el.name) v[el.name] = el.value;
    v.offset = offset;
    return v;
  };

  const setStatus = (text, error = false) => {
    status.textContent = text;
    status.className = error ? 'error' : '';
  };

  const showCompare = () => {
    const two = [...picked.values()];
    compare.hidden = two.length !== 2;
    compare.replaceChildren();
    if (two.length !== 2) return;
    const h = doc.createElement('div');
    h.textContent = `Compare ${two[0].name || two[0].id} (A) with ${two[1].name || two[1].id} (B): run`;
    const pre = doc.createElement('pre');
    pre.textContent = diffCommand(win.location.origin, two[0], two[1]);
    compare.append(h, pre);
  };

  const row = (c) => {
    const tr = doc.createElement('tr');
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
        if (picked.size === 2) picked.delete(picked.keys().next().value);
        picked.set(c.id, c);
      } else {
        picked.delete(c.id);
      }
      for (const r of tbody.children) r.classList.toggle('picked', picked.has(r.dataset.id));
      for (const box of tbody.querySelectorAll('input')) box.checked = picked.has(box.closest('tr').dataset.id);
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
    const stored = body.captures.filter((c) => c.stored);
    tbody.replaceChildren(...stored.map(row));
    setStatus(`${body.total} capture${body.total === 1 ? '' : 's'} match${stored.length < body.total ? `; ${offset + 1}–${offset + stored.length} shown` : ''}`);
    pages.replaceChildren();
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

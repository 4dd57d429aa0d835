// @ts-check
// The scope table pane (DOM, not canvas: a table of text people sort, select and copy): per scope
// name calls, total, self, mean, max and % of the frames' time, sorted by the column the view model
// says; with a baseline, the time per flame frame of both and the change, coloured as `vor diff`
// colours it; and, for the selected name, its callers and callees (sandwich). Writes only what the
// model and the table (scope_table.js) say; names go in as textContent, never as HTML. Rows beyond
// MAX_TABLE_ROWS are counted, not drawn.

import { el } from '../panel_dom.js';
import { formatNs } from '../axis.js';
import { plural } from '../text.js';
import { sortScopeRows, sandwich, diffScopeTables, diffColor } from '../scope_table.js';

/** @typedef {import('../scope_table.js').ScopeTable} ScopeTable */
/** @typedef {import('../view_model.js').ViewState} ViewState */

export const MAX_TABLE_ROWS = 500;

/** @type {[import('../scope_table.js').SortKey, string][]} */
const COLUMNS = [['name', 'scope'], ['calls', 'calls'], ['total', 'total'], ['self', 'self'], ['mean', 'mean'], ['max', 'max'], ['pct', '% of time']];

const ms = formatNs;
const count = (/** @type {number} */ n) => n.toLocaleString('en-US');

/**
 * Writes the pane for `table` (the frames named by `label`) into `pane`.
 * @param {HTMLElement} pane @param {{table: ScopeTable, label: string}} t @param {Readonly<ViewState>} state
 */
export function writeScopeTable(pane, { table, label }, state) {
  const doc = pane.ownerDocument;
  pane.replaceChildren();
  const head = el(doc, 'div', 'vor-an-head');
  const title = el(doc, 'span', 'vor-an-title');
  const frames = plural(table.frames, 'flame frame');
  title.textContent = table.frames ? `Scopes of ${label} (${frames}, ${ms(table.timeNs)})` : `No scopes in ${label || 'view'}: pin a frame with scopes or zoom to a range`;
  const comp = el(doc, 'button', 'vor-an-comp', { type: 'button', 'data-action': 'compensate', 'aria-pressed': String(table.compensated) });
  comp.textContent = table.compensated ? 'compensated' : 'raw times';
  comp.title = table.costsKnown
    ? 'Compensated: each direct child costs its parent the calibrated cost of one scope (as the CLI). Click for raw times.'
    : 'This capture records no calibrated costs: times are raw.';
  if (!table.costsKnown) comp.disabled = true;
  const base = el(doc, 'button', 'vor-an-base', { type: 'button', 'data-action': state.baseline ? 'clear-baseline' : 'set-baseline' });
  base.textContent = state.baseline ? `vs ${state.baseline.label} ✕` : 'Set as baseline';
  base.title = state.baseline
    ? 'Times per flame frame compared with the baseline (red: slower now, blue: faster). Click to stop comparing.'
    : 'Keep this table to compare another frame, range or capture (open another file) against it';
  head.append(title, comp, base);
  pane.append(head);

  const body = el(doc, 'div', 'vor-an-body');
  const wrap = el(doc, 'div', 'vor-an-table');
  const tbl = el(doc, 'table');
  const thead = el(doc, 'tr');
  const baseline = state.baseline;
  const cols = baseline ? [...COLUMNS, ['', 'baseline/frame'], ['', 'now/frame'], ['', 'change']] : COLUMNS;
  for (const [key, text] of cols) {
    const th = el(doc, 'th', key ? 'vor-sortable' : '', key ? { 'data-sort': key } : {});
    th.textContent = text + (key && key === state.sortKey ? (state.sortDesc ? ' ▼' : ' ▲') : '');
    thead.append(th);
  }
  tbl.append(thead);
  const rows = sortScopeRows(table.rows, state.sortKey, state.sortDesc);
  const diff = baseline ? new Map(diffScopeTables(baseline.table, table).map((d) => [d.name, d])) : null;
  /** @type {string[]} */
  const names = rows.map((r) => r.name);
  // names only in the baseline are listed after (they ran there, not here)
  if (diff) for (const d of diff.values()) if (!table.byName.has(d.name)) names.push(d.name);
  for (const name of names.slice(0, MAX_TABLE_ROWS)) {
    const r = table.byName.get(name);
    const tr = el(doc, 'tr', name === state.selectedName ? 'vor-selected' : '');
    tr.dataset.name = name;
    const cells = r ? [name, count(r.calls), ms(r.total), ms(r.self), r.calls ? ms(r.mean) : '–', r.calls ? ms(r.max) : '–', `${r.pct.toFixed(1)}%`]
      : [name, '0', '–', '–', '–', '–', '–'];
    for (const c of cells) { const td = el(doc, 'td'); td.textContent = c; tr.append(td); }
    const d = diff?.get(name);
    if (d) {
      const change = d.a > 0 ? `${d.delta >= 0 ? '+' : '−'}${ms(Math.abs(d.delta))} (×${d.ratio === Infinity ? '∞' : d.ratio.toFixed(2)})` : 'new';
      for (const c of [ms(d.a), ms(d.b), change]) { const td = el(doc, 'td'); td.textContent = c; tr.append(td); }
      /** @type {HTMLElement} */ (tr.lastChild).style.background = diffColor(d.a, d.b);
      /** @type {HTMLElement} */ (tr.lastChild).style.color = '#111318';
    }
    tbl.append(tr);
  }
  wrap.append(tbl);
  if (names.length > MAX_TABLE_ROWS) {
    const more = el(doc, 'div', 'vor-an-more');
    more.textContent = `${count(names.length - MAX_TABLE_ROWS)} more names not listed (sort to see others)`;
    wrap.append(more);
  }
  body.append(wrap);
  if (state.selectedName) body.append(sandwichPane(doc, table, state.selectedName));
  pane.append(body);
}

/**
 * Callers above, the selected name, callees below (speedscope's sandwich, as lists).
 * @param {Document} doc @param {ScopeTable} table @param {string} name
 */
function sandwichPane(doc, table, name) {
  const s = sandwich(table, name);
  const box = el(doc, 'div', 'vor-an-sandwich');
  const section = (/** @type {string} */ title, /** @type {{name: string, ns: number}[]} */ list, /** @type {string} */ empty) => {
    const h = el(doc, 'div', 'vor-an-sub'); h.textContent = title;
    box.append(h);
    if (!list.length) { const p = el(doc, 'div', 'vor-an-empty'); p.textContent = empty; box.append(p); }
    for (const e of list.slice(0, 50)) {
      const row = el(doc, 'div', 'vor-an-edge', { 'data-name': e.name });
      const n = el(doc, 'span'); n.textContent = e.name;
      const v = el(doc, 'span', 'vor-an-ns'); v.textContent = ms(e.ns);
      row.append(n, v);
      box.append(row);
    }
  };
  section(`Callers of ${name} (its time under each)`, s.callers, 'none');
  const mid = el(doc, 'div', 'vor-an-focus');
  mid.textContent = s.row ? `${name} · total ${ms(s.row.total)} · self ${ms(s.row.self)} · ${plural(s.row.calls, 'call')}` : `${name}: not in these frames`;
  box.append(mid);
  section(`Callees of ${name} (their time under it)`, s.callees, 'none (leaf)');
  return box;
}

// compare.js: the captures page's comparison of two picked captures, until the panel compares
// captures itself: the store runs `vor diff --json` on them (GET /api/compare?a=ID&b=ID, answered
// 202 while it runs, then 200 with the diff; native/server/http_compare.c) and this draws its
// table: per scope, the mean and p95 time per flame frame in A and in B and B/A, in vor diff's
// order (the largest change in time per frame first). The commands that fetch both files and draw
// the differential flame graph with vor diff --svg stay below the table.

import { diffCommand, formatSpan } from './query.js';

const POLL_MS = 400;
const ROWS = 40;

/**
 * @typedef {{calls: number, total_ns: number, mean_ns: number, p95_ns: number}} DiffSide
 * @typedef {{name: string, a: DiffSide | null, b: DiffSide | null, ratio: number | null}} DiffRow
 * @typedef {{flame_frames: number, compensated: boolean}} DiffCapture
 * @typedef {{a: DiffCapture, b: DiffCapture, scopes: DiffRow[]}} Diff  what vor diff --json prints
 */

/** @param {number | undefined} ns */
const time = (ns) => (ns !== undefined && ns > 0 ? formatSpan(ns) : '0');

/** @param {DiffRow} row */
function ratioText(row) {
  if (!row.a) return 'new';
  if (!row.b) return 'gone';
  return row.ratio == null ? '–' : `${row.ratio.toFixed(2)}×`;
}

/**
 * The table of a `vor diff --json` answer (pure DOM building; `doc` is the page's document).
 * @param {Document} doc @param {Diff} diff @param {number} [rows]
 */
export function diffTable(doc, diff, rows = ROWS) {
  const table = doc.createElement('table');
  table.className = 'diff';
  const head = doc.createElement('tr');
  for (const h of ['scope', 'A mean / frame', 'B mean / frame', 'B / A', 'A p95', 'B p95', 'A calls', 'B calls']) {
    const th = doc.createElement('th');
    th.textContent = h;
    head.append(th);
  }
  table.append(head);
  for (const r of diff.scopes.slice(0, rows)) {
    const tr = doc.createElement('tr');
    const cells = [r.name, time(r.a?.mean_ns), time(r.b?.mean_ns), ratioText(r), time(r.a?.p95_ns), time(r.b?.p95_ns),
      String(r.a?.calls ?? 0), String(r.b?.calls ?? 0)];
    for (const [i, text] of cells.entries()) {
      const td = doc.createElement('td');
      td.textContent = text;
      if (i > 0) td.className = 'num';
      if (i === 3 && r.a && r.b && r.ratio != null) td.classList.add(r.ratio > 1.05 ? 'slower' : r.ratio < 0.95 ? 'faster' : 'same');
      tr.append(td);
    }
    table.append(tr);
  }
  return table;
}

/**
 * Shows the comparison of captures a and b in `box`; returns a function that cancels it (the
 * picks changed). token: for servers with --token-reads.
 * @param {Document} doc @param {HTMLElement} box
 * @param {import('./query.js').StoredCapture} a @param {import('./query.js').StoredCapture} b
 * @param {string | null} token @returns {() => void}
 */
export function showComparison(doc, box, a, b, token) {
  const win = /** @type {Window} */ (doc.defaultView);
  let cancelled = false;
  let timer = 0;
  const title = doc.createElement('div');
  title.textContent = `A: ${a.name || a.id} · B: ${b.name || b.id}`;
  const body = doc.createElement('div');
  body.className = 'diff-body';
  body.textContent = 'comparing (vor diff)…';
  const more = doc.createElement('details');
  const summary = doc.createElement('summary');
  summary.textContent = 'the same in a terminal, with a differential flame graph (vor diff --svg)';
  const pre = doc.createElement('pre');
  pre.textContent = diffCommand(win.location.origin, a, b);
  more.append(summary, pre);
  box.replaceChildren(title, body, more);
  box.hidden = false;

  const ask = async () => {
    if (cancelled) return;
    const q = new URLSearchParams({ a: a.id, b: b.id });
    if (token) q.set('token', token);
    let res, json;
    try {
      res = await win.fetch(`api/compare?${q}`, { cache: 'no-store' });
      json = await res.json();
    } catch (err) {
      if (!cancelled) body.textContent = `comparison failed: ${err.message}`;
      return;
    }
    if (cancelled) return;
    if (res.status === 202 || res.status === 503) { // running, or others are: ask again
      timer = win.setTimeout(ask, POLL_MS);
      return;
    }
    if (!res.ok) {
      body.textContent = json.error || `HTTP ${res.status}`;
      body.className = 'diff-body error';
      return;
    }
    const note = doc.createElement('p');
    note.textContent = `${json.a.flame_frames} and ${json.b.flame_frames} flame frames; times per flame frame` +
      `${json.a.compensated && json.b.compensated ? ', compensated for the profiler\'s cost' : ''}; ` +
      `the ${Math.min(ROWS, json.scopes.length)} scopes whose time changed most, largest change first.`;
    body.replaceChildren(note, diffTable(doc, json));
  };
  ask();
  return () => {
    cancelled = true;
    win.clearTimeout(timer);
  };
}

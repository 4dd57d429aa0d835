// query.js: the captures page's filters <-> the store's query string (GET /api/captures; the
// parameters are those of native/server/store/store_query.c). Pure: no DOM, tested under node.

/**
 * @typedef {{project?: string, tags?: string, process?: string, host?: string, scope?: string,
 *   since?: string, until?: string, sort?: string, sortScope?: string, order?: string, offset?: number}} FormValues
 * @typedef {{id: string, name?: string, project?: string, process?: string, host?: string,
 *   tags?: Record<string, string>, frames?: number | null, span_ns?: number, bytes?: number, start_ms?: number,
 *   uploaded_ms?: number, upload?: string, ended?: string, indexed?: boolean, stored?: boolean,
 *   top_self?: {name: string}[]}} StoredCapture  one row of GET /api/captures
 */

/** @type {('project' | 'process' | 'host' | 'scope' | 'since' | 'until')[]} */
const FIELDS = ['project', 'process', 'host', 'scope', 'since', 'until'];

/**
 * Form values ({project, tags: 'k=v k2=v2', ..., sort, sortScope, order, offset}) -> query string.
 * @param {FormValues} v @param {{limit?: number}} [options] @returns {string}
 */
export function buildQuery(v, { limit = 100 } = {}) {
  const p = new URLSearchParams();
  for (const f of FIELDS) {
    let value = v[f] && String(v[f]).trim();
    if (!value) continue;
    // "to" a day includes that day: the store's `until` is exclusive.
    if (f === 'until' && /^\d{4}-\d{2}-\d{2}$/.test(value)) value = nextDay(value);
    p.append(f, value);
  }
  for (const t of String(v.tags || '').split(/\s+/).filter(Boolean)) p.append('tag', t);
  if (v.sort === 'scope') {
    if (v.sortScope && v.sortScope.trim()) p.append('sort', `scope:${v.sortScope.trim()}`);
  } else if (v.sort && v.sort !== 'date') {
    p.append('sort', v.sort);
  }
  if (v.order === 'asc') p.append('order', 'asc');
  p.append('limit', String(limit));
  if (v.offset) p.append('offset', String(v.offset));
  return p.toString();
}

/** @param {string} day YYYY-MM-DD @returns {string} */
function nextDay(day) {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

/**
 * The page's own URL query (shareable searches) -> form values.
 * @param {string} search @returns {FormValues}
 */
export function parseQuery(search) {
  const p = new URLSearchParams(search);
  /** @type {FormValues} */
  const v = {};
  for (const f of FIELDS) {
    const x = p.get(f);
    if (x) v[f] = x;
  }
  if (v.until && /^\d{4}-\d{2}-\d{2}$/.test(v.until)) { // shown as the last day included
    const d = new Date(`${v.until}T00:00:00Z`);
    d.setUTCDate(d.getUTCDate() - 1);
    v.until = d.toISOString().slice(0, 10);
  }
  const tags = p.getAll('tag');
  if (tags.length) v.tags = tags.join(' ');
  const sort = p.get('sort');
  if (sort && sort.startsWith('scope:')) {
    v.sort = 'scope';
    v.sortScope = sort.slice(6);
  } else if (sort) {
    v.sort = sort;
  }
  const order = p.get('order');
  if (order) v.order = order;
  if (p.get('offset')) v.offset = Number(p.get('offset')) || 0;
  return v;
}

/** @param {number | undefined} ns @returns {string} */
export function formatSpan(ns) {
  if (ns === undefined || !(ns > 0)) return '–';
  if (ns < 1e6) return `${(ns / 1e3).toFixed(0)} µs`;
  if (ns < 1e9) return `${(ns / 1e6).toFixed(1)} ms`;
  if (ns < 120e9) return `${(ns / 1e9).toFixed(2)} s`;
  return `${(ns / 60e9).toFixed(1)} min`;
}

/** @param {number} n @returns {string} */
export function formatBytes(n) {
  if (n < 1e3) return `${n} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(1)} kB`;
  if (n < 1e9) return `${(n / 1e6).toFixed(1)} MB`;
  return `${(n / 1e9).toFixed(2)} GB`;
}

/** @param {number | undefined} ms @returns {string} */
export function formatStart(ms) {
  if (!ms) return '–';
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}

/** The state a row shows: live (being uploaded), open (interrupted, resumable), cut, properly. */
/** @param {StoredCapture} c @returns {string} */
export function stateOf(c) {
  if (c.upload === 'uploading') return 'live';
  if (c.upload === 'open') return 'open';
  return c.ended || (c.upload === 'cut' ? 'cut' : c.upload === 'complete' ? 'properly' : '–');
}

/**
 * What to run to compare two stored captures until the panel compares them itself: fetch both
 * (GET /api/captures/ID/file) and `vor diff` them.
 * @param {string} origin @param {{id: string}} a @param {{id: string}} b @returns {string}
 */
export function diffCommand(origin, a, b) {
  const q = (/** @type {string} */ s) => `'${String(s).replace(/'/g, "'\\''")}'`;
  return [
    `curl -fo a.vor ${q(`${origin}/api/captures/${a.id}/file`)}`,
    `curl -fo b.vor ${q(`${origin}/api/captures/${b.id}/file`)}`,
    'vor diff a.vor b.vor --svg diff.svg',
  ].join('\n');
}

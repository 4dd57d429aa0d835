// @ts-check
// Search by scope name: which sites match a query (case-insensitive substring of the name or the
// function), how many spans of the flame chart's model match, the matches in time order for
// next/previous, and which held frames contain one (the bars mark them). Pure; the site set is
// rebuilt when the query or the declarations change, the match list when the flame model changes.

/** @typedef {import('./flame_model.js').FlameModel} FlameModel */
/** @typedef {import('./store.js').FrameStore} FrameStore */
/** @typedef {{siteName: (id: number) => string, sites: Map<number, {name: string, function: string}>}} SiteNames */
/** @typedef {{start: number, end: number, lane: number, depth: number, site: number}} SearchMatch */

/** Matches listed for next/previous at most (the count stays exact). */
export const MAX_LISTED_MATCHES = 100000;

/**
 * Whether site `id` matches `query` (already lower-cased, non-empty).
 * @param {SiteNames} decls @param {number} id @param {string} query
 */
function siteMatches(decls, id, query) {
  const s = decls.sites.get(id);
  if (decls.siteName(id).toLowerCase().includes(query)) return true;
  return !!(s && s.function && s.function.toLowerCase().includes(query));
}

/**
 * A predicate over site ids for `query` (null for an empty query), memoised per site.
 * @param {SiteNames} decls @param {string} query
 * @returns {((site: number) => boolean) | null}
 */
export function siteMatcher(decls, query) {
  const q = query.trim().toLowerCase();
  if (!q) return null;
  /** @type {Map<number, boolean>} */
  const memo = new Map();
  return (id) => {
    let m = memo.get(id);
    if (m === undefined) memo.set(id, (m = siteMatches(decls, id, q)));
    return m;
  };
}

/**
 * The spans of `model` whose site matches: the exact count, and up to MAX_LISTED_MATCHES of them
 * sorted by start (then lane, then depth) for next/previous.
 * @param {FlameModel | null} model @param {((site: number) => boolean) | null} match
 * @returns {{count: number, list: SearchMatch[]}}
 */
export function flameMatches(model, match) {
  /** @type {SearchMatch[]} */
  const list = [];
  let count = 0;
  if (!model || !match) return { count, list };
  model.lanes.forEach((lane, li) => {
    lane.rows.forEach((row, d) => {
      for (let k = 0; k < row.n; k++) {
        if (!match(row.site[k])) continue;
        count++;
        if (list.length < MAX_LISTED_MATCHES) list.push({ start: row.start[k], end: row.start[k] + row.dur[k], lane: li, depth: d, site: row.site[k] });
      }
    });
  });
  list.sort((a, b) => a.start - b.start || a.lane - b.lane || a.depth - b.depth);
  return { count, list };
}

/**
 * The held frames [a, b) whose scopes contain a match: a Uint8Array indexed by seq - a (1: match).
 * @param {FrameStore} store @param {number} a @param {number} b @param {((site: number) => boolean) | null} match
 */
export function framesWithMatches(store, a, b, match) {
  const out = new Uint8Array(Math.max(0, b - a));
  if (!match) return out;
  for (let q = a; q < b; q++) {
    const v = store.scopes(q);
    if (!v || !v.scopeSite) continue;
    const sites = v.scopeSite;
    for (let i = 0; i < sites.length; i++) if (match(sites[i])) { out[q - a] = 1; break; }
  }
  return out;
}

/**
 * The flame window that shows match `m` (ns): the span with a margin of its own width on each side,
 * at least `minSpan` wide.
 * @param {SearchMatch} m @param {number} [minSpan]
 * @returns {[number, number]}
 */
export function matchWindow(m, minSpan = 1000) {
  const w = Math.max(m.end - m.start, minSpan);
  const c = (m.start + m.end) / 2;
  return [c - 1.5 * w, c + 1.5 * w];
}

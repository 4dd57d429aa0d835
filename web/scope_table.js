// @ts-check
// Scope table: per scope name, the calls, total, self, mean and max of the flame frames on show (the
// pinned frame or the zoomed range), with each name's callers and callees for the bottom-up /
// sandwich view, and the comparison of two such tables (two frames, two ranges, two captures).
// Pure: frame views in, plain objects out; built when the selection changes, not per draw.
//
// The numbers follow the reading rules every consumer of a capture shares (docs/FORMAT.md, "Reading
// a capture"; native/cli/stacks.c is the CLI's implementation, and `vor summary` must agree):
//   - per frame and thread a scope's contribution is its time inside the frame,
//     [max(start, frame start), min(end, frame end)] (open scopes run to the frame's end);
//   - self = contribution minus the children's contributions, and, compensating (the default when
//     the capture declares its calibrated costs), minus each direct child's cost (function_cost_ns for
//     function sites, scope_cost_ns otherwise), never below zero; total = self + children's totals;
//   - per name, a scope nested in one of the same name adds its self time but not its total again;
//   - calls, mean and max come from the scopes that ended in the frames read (full durations, less
//     the compensation found inside the frame).
// Names, not site ids, are the keys, so a native and a wasm capture of one program compare.

import { PARENT_NONE, PARENT_UNKNOWN } from './frame_view.js';

/** @typedef {import('./store.js').FrameView} FrameView */
/** @typedef {import('./store.js').Costs} Costs */
/**
 * @typedef {object} ScopeRow
 * @property {string} name
 * @property {number} calls     scopes of this name that ended in the frames read
 * @property {number} total     ns (recursion counted once)
 * @property {number} self      ns
 * @property {number} mean      ns per call (0 without calls)
 * @property {number} max       ns, longest call
 * @property {number} pct       total as % of the frames' time
 * @property {number} frames    flame frames this name ran in
 */
/**
 * @typedef {object} ScopeTable
 * @property {ScopeRow[]} rows              one per name, unsorted (sortScopeRows)
 * @property {Map<string, ScopeRow>} byName
 * @property {number} frames                flame frames read
 * @property {number} timeNs                their summed duration
 * @property {boolean} compensated          costs were subtracted
 * @property {boolean} costsKnown           the source declared its calibrated costs
 * @property {Map<string, Map<string, number>>} callers   name -> caller name -> ns of name under it
 * @property {Map<string, Map<string, number>>} callees   name -> callee name -> ns of callee under it
 */
/** @typedef {'name' | 'calls' | 'total' | 'self' | 'mean' | 'max' | 'pct'} SortKey */

/** The caller of a scope at the bottom of its thread's stack. */
export const ROOT_CALLER = '[thread]';
/** How far up a scope's parents the recursion check looks (deeper chains count the total again). */
const MAX_ANCESTOR_WALK = 1024;

/**
 * @param {{seq: number, view: FrameView}[]} frames   flame frames (scope arrays present), any order
 * @param {{siteName: (id: number) => string, sites: Map<number, {module?: number}>, costs?: Costs | null}} decls
 * @param {{compensate?: boolean}} [options]   compensate: subtract calibrated costs (default true)
 * @returns {ScopeTable}
 */
export function buildScopeTable(frames, decls, { compensate = true } = {}) {
  const costs = decls.costs ?? null;
  const compensated = compensate && !!costs;
  /** @type {Map<number, {name: string, cost: number}>} */
  const siteInfo = new Map();
  const site = (/** @type {number} */ id) => {
    let s = siteInfo.get(id);
    if (!s) {
      const d = decls.sites.get(id);
      const isFunction = !!(d && d.module);
      s = { name: decls.siteName(id), cost: compensated && costs ? (isFunction ? costs.functionNs : costs.scopeNs) : 0 };
      siteInfo.set(id, s);
    }
    return s;
  };
  /** @type {Map<string, ScopeRow & {stamp: number}>} */
  const byName = new Map();
  const row = (/** @type {string} */ name) => {
    let r = byName.get(name);
    if (!r) byName.set(name, (r = { name, calls: 0, total: 0, self: 0, mean: 0, max: 0, pct: 0, frames: 0, stamp: -1 }));
    return r;
  };
  /** @type {Map<string, Map<string, number>>} */ const callers = new Map();
  /** @type {Map<string, Map<string, number>>} */ const callees = new Map();
  const addEdge = (/** @type {Map<string, Map<string, number>>} */ m, /** @type {string} */ a, /** @type {string} */ b, /** @type {number} */ ns) => {
    let inner = m.get(a);
    if (!inner) m.set(a, (inner = new Map()));
    inner.set(b, (inner.get(b) ?? 0) + ns);
  };

  let cap = 0;
  let contrib = new Float64Array(0), childContrib = new Float64Array(0), childCost = new Float64Array(0);
  let self = new Float64Array(0), total = new Float64Array(0), childTotal = new Float64Array(0);
  let parent = new Int32Array(0);
  /** @type {string[]} */ let names = [];
  let timeNs = 0, stamp = 0;

  for (const { view } of frames) {
    const fs = view.startNs, fe = view.startNs + view.durationNs;
    timeNs += view.durationNs;
    stamp++;
    for (let t = 0; t < view.threadIds.length; t++) {
      const i0 = view.threadFirst[t], ne = view.threadScopeCounts[t];
      const n = ne + (view.threadOpenCounts ? view.threadOpenCounts[t] : 0);
      if (n > cap) {
        cap = Math.max(n, cap * 2);
        contrib = new Float64Array(cap); childContrib = new Float64Array(cap); childCost = new Float64Array(cap);
        self = new Float64Array(cap); total = new Float64Array(cap); childTotal = new Float64Array(cap);
        parent = new Int32Array(cap); names = new Array(cap);
      }
      childContrib.fill(0, 0, n); childCost.fill(0, 0, n); childTotal.fill(0, 0, n);
      for (let k = 0; k < n; k++) {
        const i = i0 + k, s = view.scopeStart[i];
        const c = Math.min(s + view.scopeDuration[i], fe) - Math.max(s, fs);
        contrib[k] = c > 0 ? c : 0;
        const p = view.scopeParent[i]; // an index in the view's arrays (frame_view.js), or none/unknown
        parent[k] = p !== PARENT_NONE && p !== PARENT_UNKNOWN && p >= i0 && p < i0 + n ? p - i0 : -1;
        names[k] = site(view.scopeSite[i]).name;
      }
      for (let k = 0; k < n; k++) {
        const p = parent[k];
        if (p < 0) continue;
        childContrib[p] += contrib[k];
        childCost[p] += site(view.scopeSite[i0 + k]).cost;
      }
      // children before parents: ended scopes in end order, then open ones innermost first
      const visit = (/** @type {number} */ k) => {
        // the children's costs are summed, then rounded to whole ns, as the CLI does
        const sv = contrib[k] - childContrib[k] - Math.round(childCost[k]);
        self[k] = sv > 0 ? sv : 0;
        total[k] = self[k] + childTotal[k];
        if (parent[k] >= 0) childTotal[parent[k]] += total[k];
      };
      for (let k = 0; k < ne; k++) visit(k);
      for (let k = n - 1; k >= ne; k--) visit(k);
      for (let k = 0; k < n; k++) {
        const name = names[k], r = row(name);
        r.self += self[k];
        let nested = false;
        for (let p = parent[k], steps = 0; p >= 0 && steps < MAX_ANCESTOR_WALK; p = parent[p], steps++) {
          if (names[p] === name) { nested = true; break; }
        }
        if (!nested) r.total += total[k];
        if (r.stamp !== stamp) { r.stamp = stamp; r.frames++; }
        if (k < ne) {
          let full = view.scopeDuration[k + i0];
          if (compensated && contrib[k] > total[k]) full -= contrib[k] - total[k];
          if (full < 0) full = 0;
          r.calls++;
          r.mean += full; // a sum until the end
          if (full > r.max) r.max = full;
        }
        const caller = parent[k] >= 0 ? names[parent[k]] : ROOT_CALLER;
        addEdge(callers, name, caller, total[k]);
        if (parent[k] >= 0) addEdge(callees, caller, name, total[k]);
      }
    }
  }
  /** @type {ScopeRow[]} */
  const rows = [];
  /** @type {Map<string, ScopeRow>} */
  const out = new Map();
  for (const r of byName.values()) {
    const plain = { name: r.name, calls: r.calls, total: r.total, self: r.self, mean: r.mean, max: r.max, pct: 0, frames: r.frames };
    plain.mean = plain.calls ? plain.mean / plain.calls : 0;
    plain.pct = timeNs > 0 ? (100 * plain.total) / timeNs : 0;
    rows.push(plain);
    out.set(plain.name, plain);
  }
  return { rows, byName: out, frames: frames.length, timeNs, compensated, costsKnown: !!costs, callers, callees };
}

/**
 * The rows sorted by `key` (descending for numbers unless `ascending`; names A to Z unless
 * descending), ties by name. Returns a new array.
 * @param {ScopeRow[]} rows @param {SortKey} key @param {boolean} [descending]
 */
export function sortScopeRows(rows, key, descending = key !== 'name') {
  const dir = descending ? -1 : 1;
  return rows.slice().sort((a, b) => {
    const d = key === 'name' ? a.name.localeCompare(b.name) : a[key] - b[key];
    return d !== 0 ? dir * d : a.name.localeCompare(b.name);
  });
}

/**
 * The bottom-up / sandwich view of one name: who called it (its time under each caller) and what
 * it called (each callee's time under it), largest first.
 * @param {ScopeTable} table @param {string} name
 * @returns {{row: ScopeRow | null, callers: {name: string, ns: number}[], callees: {name: string, ns: number}[]}}
 */
export function sandwich(table, name) {
  const list = (/** @type {Map<string, number> | undefined} */ m) =>
    [...(m ?? new Map()).entries()].map(([n, ns]) => ({ name: n, ns })).sort((a, b) => b.ns - a.ns || a.name.localeCompare(b.name));
  return { row: table.byName.get(name) ?? null, callers: list(table.callers.get(name)), callees: list(table.callees.get(name)) };
}

/**
 * @typedef {object} DiffRow
 * @property {string} name
 * @property {number} a         baseline: total per flame frame (ns)
 * @property {number} b         current: total per flame frame (ns)
 * @property {number} delta     b - a
 * @property {number} ratio     b / a (Infinity when only in b, 0 when only in a)
 * @property {number} callsA
 * @property {number} callsB
 */

/**
 * Compares two tables as `vor diff` does: per name, the time per flame frame in A (the baseline)
 * and B, B - A and B / A, sorted by the largest change in time per frame.
 * @param {ScopeTable} a @param {ScopeTable} b
 * @returns {DiffRow[]}
 */
export function diffScopeTables(a, b) {
  const perA = a.frames || 1, perB = b.frames || 1;
  /** @type {Map<string, DiffRow>} */
  const m = new Map();
  for (const r of a.rows) m.set(r.name, { name: r.name, a: r.total / perA, b: 0, delta: 0, ratio: 0, callsA: r.calls, callsB: 0 });
  for (const r of b.rows) {
    const d = m.get(r.name) ?? { name: r.name, a: 0, b: 0, delta: 0, ratio: 0, callsA: 0, callsB: 0 };
    d.b = r.total / perB; d.callsB = r.calls;
    m.set(r.name, d);
  }
  const rows = [...m.values()];
  for (const d of rows) { d.delta = d.b - d.a; d.ratio = d.a > 0 ? d.b / d.a : d.b > 0 ? Infinity : 1; }
  return rows.sort((x, y) => Math.abs(y.delta) - Math.abs(x.delta) || x.name.localeCompare(y.name));
}

/**
 * The colour of a change, as `vor diff --svg` paints it: red where B is slower, blue where faster,
 * stronger with the relative change ((b - a) / max(a, b)), grey for none.
 * @param {number} a @param {number} b
 */
export function diffColor(a, b) {
  const larger = Math.max(a, b);
  const v = larger > 0 ? (b - a) / larger : 0;
  const k = Math.min(1, Math.abs(v));
  const mix = (/** @type {number} */ from, /** @type {number} */ to) => Math.round(from + (to - from) * k);
  return v > 0 ? `rgb(${mix(230, 220)}, ${mix(230, 60)}, ${mix(230, 60)})` : v < 0 ? `rgb(${mix(230, 60)}, ${mix(230, 110)}, ${mix(230, 220)})` : 'rgb(230, 230, 230)';
}

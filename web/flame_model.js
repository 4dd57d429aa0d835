// @ts-check
// Flame model: regroups the scopes of the frames on show (one pinned frame, or a zoomed frame range)
// into rows the renderer can cull with a binary search: one lane per thread, one row per depth, each row
// sorted by start with a prefix maximum of end times. Self time (duration minus direct children) is
// computed here, once, from the end order the C side guarantees (children before their parent).
// Pure: built in O(scopes) when the selection changes, not per draw.

/** @typedef {import('./store.js').FrameView} FrameView */
/**
 * One row of a lane: the spans of one depth, sorted by start, with a prefix maximum of their ends.
 * @typedef {object} FlameRow
 * @property {number} n
 * @property {Float64Array} start
 * @property {Float64Array} dur
 * @property {Float64Array} endMax
 * @property {Float64Array} self
 * @property {Uint32Array} site
 * @property {boolean} [sorted]   while filling: the starts came in order so far
 */
/** @typedef {{threadId: number, rows: FlameRow[]}} FlameLane */
/** @typedef {{seq: number, start: number, end: number}} FlameFrameSpan */
/**
 * @typedef {object} FlameModel
 * @property {FlameLane[]} lanes
 * @property {number} t0
 * @property {number} t1
 * @property {number} nScopes
 * @property {number} tooDeep
 * @property {FlameFrameSpan[]} frames
 */

export const MAX_FLAME_DEPTH = 256; // deeper scopes are counted (model.tooDeep) but not drawn

/**
 * frames: [{seq, view}] in time order, view as returned by parseFrameView (scope arrays present).
 * threadOrder(id) -> sort key for lanes (declaration order); default: by id.
 * Returns { lanes: [{threadId, rows: [row]}], t0, t1, nScopes, tooDeep, frames: [{seq, start, end}] }
 * where row = { n, start, dur, endMax, self: Float64Array; site: Uint32Array }.
 * @param {{seq: number, view: FrameView}[]} frames
 * @param {(threadId: number) => number} [threadOrder]
 * @returns {FlameModel}
 */
export function buildFlameModel(frames, threadOrder = (id) => id) {
  // Pass 1: count scopes per (thread, depth) to allocate each row once.
  /** @type {Map<number, number[]>} */
  const counts = new Map(); // threadId -> scopes per depth
  let tooDeep = 0;
  let nScopes = 0;
  let t0 = Infinity, t1 = -Infinity;
  /** @type {FlameFrameSpan[]} */
  const frameSpans = [];
  for (const { seq, view } of frames) {
    frameSpans.push({ seq, start: view.startNs, end: view.startNs + view.durationNs });
    if (view.startNs < t0) t0 = view.startNs;
    if (view.startNs + view.durationNs > t1) t1 = view.startNs + view.durationNs;
    for (let t = 0; t < view.threadIds.length; t++) {
      const id = view.threadIds[t];
      let c = counts.get(id);
      if (!c) counts.set(id, (c = []));
      const i0 = view.threadFirst[t], i1 = i0 + view.threadScopeCounts[t];
      for (let i = i0; i < i1; i++) {
        const d = view.scopeDepth[i];
        if (d >= MAX_FLAME_DEPTH) { tooDeep++; continue; }
        while (c.length <= d) c.push(0);
        c[d]++;
      }
    }
  }

  /** @type {Map<number, FlameLane>} */
  const lanes = new Map();
  for (const [id, c] of counts) {
    const rows = c.map((n) => /** @type {FlameRow} */ ({
      n: 0, start: new Float64Array(n), dur: new Float64Array(n), endMax: new Float64Array(n),
      self: new Float64Array(n), site: new Uint32Array(n), sorted: true,
    }));
    lanes.set(id, { threadId: id, rows });
  }

  // Pass 2: fill rows; self time from the end order (a scope's direct children end before it).
  const childSum = new Float64Array(MAX_FLAME_DEPTH + 1);
  for (const { view } of frames) {
    for (let t = 0; t < view.threadIds.length; t++) {
      const lane = /** @type {FlameLane} */ (lanes.get(view.threadIds[t]));
      const i0 = view.threadFirst[t], i1 = i0 + view.threadScopeCounts[t];
      childSum.fill(0);
      for (let i = i0; i < i1; i++) {
        const d = view.scopeDepth[i];
        if (d >= MAX_FLAME_DEPTH) continue;
        const dur = view.scopeDuration[i];
        const self = dur - childSum[d + 1];
        childSum[d + 1] = 0;
        childSum[d] += dur;
        const row = lane.rows[d];
        const k = row.n++;
        const s = view.scopeStart[i];
        if (k > 0 && s < row.start[k - 1]) row.sorted = false;
        row.start[k] = s;
        row.dur[k] = dur;
        row.self[k] = self > 0 ? self : 0;
        row.site[k] = view.scopeSite[i];
        nScopes++;
        if (s < t0) t0 = s;
        if (s + dur > t1) t1 = s + dur;
      }
    }
  }

  const out = [];
  for (const lane of lanes.values()) {
    for (const row of lane.rows) {
      if (!row.sorted) sortRow(row);
      let m = -Infinity;
      for (let k = 0; k < row.n; k++) {
        const e = row.start[k] + row.dur[k];
        if (e > m) m = e;
        row.endMax[k] = m;
      }
      delete row.sorted;
    }
    out.push(lane);
  }
  out.sort((a, b) => threadOrder(a.threadId) - threadOrder(b.threadId) || a.threadId - b.threadId);
  if (!(t1 >= t0)) { t0 = 0; t1 = 0; }
  return { lanes: out, t0, t1, nScopes, tooDeep, frames: frameSpans };
}

/** @param {FlameRow} row */
function sortRow(row) {
  const idx = Array.from({ length: row.n }, (_, i) => i).sort((a, b) => row.start[a] - row.start[b]);
  for (const key of /** @type {const} */ (['start', 'dur', 'self', 'site'])) {
    const src = row[key].slice();
    for (let k = 0; k < row.n; k++) row[key][k] = src[idx[k]];
  }
}

/**
 * Index of the span in `row` containing time t (start <= t < end), or -1.
 * @param {FlameRow} row @param {number} t
 */
export function spanAt(row, t) {
  let lo = 0, hi = row.n;
  while (lo < hi) { const m = (lo + hi) >> 1; if (row.start[m] <= t) lo = m + 1; else hi = m; }
  // candidates end at lo - 1; in a well-formed row only that one can contain t
  for (let k = lo - 1; k >= 0 && row.endMax[k] >= t; k--) {
    if (t < row.start[k] + row.dur[k] || (row.dur[k] === 0 && t === row.start[k])) return k;
  }
  return -1;
}

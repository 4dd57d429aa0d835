// @ts-check
// Untracked time: the parts of a frame that no top-level scope of a thread covers. In a spike frame
// the scopes can be a sliver at one end and the rest of the frame blank; the flame chart shades these
// gaps on each lane's first row and labels them with their duration, and the lane header says how much
// of the frames' time is untracked. Per thread, per frame: the depth-0 scopes (ended, and the one
// still open at the frame's end, which covers up to it) clipped to the frame, merged, and the frame's
// time outside them. Pure, O(scopes) once per flame selection (flame_selection.js caches it).

import { formatNs } from './axis.js';
import { plural } from './text.js';

/** @typedef {import('./store.js').FrameView} FrameView */
/**
 * @typedef {object} UntrackedLane
 * @property {number} threadId
 * @property {number[]} gaps      start, end (ns) pairs in time order
 * @property {number} totalNs     sum of the gaps
 * @property {number} frameNs     time of the frames the thread appears in
 */

/**
 * Untracked time per thread over `frames` (flame frames, as flame_model.js takes them).
 * @param {{seq: number, view: FrameView}[]} frames
 * @returns {Map<number, UntrackedLane>}
 */
export function untrackedTime(frames) {
  /** @type {Map<number, UntrackedLane>} */
  const out = new Map();
  /** @type {number[]} */
  const iv = []; // start, end pairs of one thread's top-level scopes in one frame
  for (const { view } of frames) {
    const f0 = view.startNs, f1 = view.startNs + view.durationNs;
    if (!(f1 > f0)) continue;
    for (let t = 0; t < view.threadIds.length; t++) {
      iv.length = 0;
      const i0 = view.threadFirst[t], ended = view.threadScopeCounts[t];
      for (let i = i0; i < i0 + ended; i++) {
        if (view.scopeDepth[i] === 0) iv.push(view.scopeStart[i], view.scopeStart[i] + view.scopeDuration[i]);
      }
      // the outermost open scope (first of the open ones) runs to the frame's end
      if (view.threadOpenCounts[t] > 0) iv.push(view.scopeStart[i0 + ended], f1);
      let lane = out.get(view.threadIds[t]);
      if (!lane) out.set(view.threadIds[t], (lane = { threadId: view.threadIds[t], gaps: [], totalNs: 0, frameNs: 0 }));
      lane.frameNs += f1 - f0;
      addGaps(iv, f0, f1, lane);
    }
  }
  return out;
}

/**
 * Appends to `lane` the parts of [f0, f1] outside the intervals `iv` (start, end pairs, any order).
 * @param {number[]} iv @param {number} f0 @param {number} f1 @param {UntrackedLane} lane
 */
function addGaps(iv, f0, f1, lane) {
  const n = iv.length / 2;
  const order = Array.from({ length: n }, (_, k) => k).sort((a, b) => iv[2 * a] - iv[2 * b]);
  let at = f0; // covered up to here
  for (const k of order) {
    const s = Math.max(f0, iv[2 * k]), e = Math.min(f1, iv[2 * k + 1]);
    if (e <= s) continue;
    if (s > at) { lane.gaps.push(at, s); lane.totalNs += s - at; }
    if (e > at) at = e;
  }
  if (f1 > at) { lane.gaps.push(at, f1); lane.totalNs += f1 - at; }
}

/**
 * The gap of `u` containing time `t` (ns), as [start, end], or null. Gaps are in time order.
 * @param {UntrackedLane} u @param {number} t
 * @returns {[number, number] | null}
 */
export function gapAt(u, t) {
  const g = u.gaps;
  let lo = 0, hi = g.length / 2; // first gap ending after t
  while (lo < hi) { const m = (lo + hi) >> 1; if (g[2 * m + 1] <= t) lo = m + 1; else hi = m; }
  return lo < g.length / 2 && g[2 * lo] <= t ? [g[2 * lo], g[2 * lo + 1]] : null;
}

/**
 * A lane header's words: its scopes, depth and untracked share ("1 scope · depth 1 · untracked
 * 275 ms (98%)").
 * @param {number} scopes @param {number} depth @param {UntrackedLane | undefined} u
 */
export function laneSummary(scopes, depth, u) {
  let s = `${plural(scopes, 'scope')} · depth ${depth}`;
  if (u && u.totalNs > 0 && u.frameNs > 0) s += ` · untracked ${formatNs(u.totalNs)} (${formatPercent(u.totalNs / u.frameNs)})`;
  return s;
}

/** @param {number} f  a fraction in [0, 1] */
function formatPercent(f) {
  const p = 100 * f;
  return `${p >= 10 || p === 0 ? Math.round(p) : p < 0.1 ? '<0.1' : p.toFixed(1)}%`;
}

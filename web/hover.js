// @ts-check
// Hover: what is under the pointer and what its tooltip says. Over the bars, the frame under the
// pointer (or, where frames outnumber pixels, the slowest frame of the pixel's bin); over a plot,
// the value there (or the bin's min, mean and max across its frames, non-finite values flagged);
// over the flame chart, the span or merged bucket the draw put there (render/flame.js's hit test
// mirrors the draw). Pure: from the scene's geometry, the store and the pointer.

import { SCOPES_PRESENT, SCOPES_EVICTED } from './store.js';
import { inside, FLAME_ROW } from './layout.js';
import { binRange } from './binning.js';
import { flameHitTest } from './render/flame.js';
import { spanTooltip, bucketTooltip, frameTooltip, plotTooltip, untrackedTooltip } from './tooltip.js';
import { gapAt } from './untracked.js';

/** @typedef {import('./store.js').FrameStore} FrameStore */
/** @typedef {import('./store.js').Column} Column */
/** @typedef {import('./view_model.js').Pointer} Pointer */
/** @typedef {ReturnType<typeof import('./axis.js').frameAxis>} FrameAxis */
/** @typedef {ReturnType<typeof import('./layout.js').computeLayout>} Layout */
/** @typedef {import('./render/flame.js').FlameView} FlameView */
/** @typedef {NonNullable<ReturnType<typeof flameHitTest>>} FlameHit */
/** @typedef {import('./tooltip.js').Tooltip} Tooltip */
/**
 * @typedef {object} Hover
 * @property {'bars' | 'plot' | 'flame'} region
 * @property {number} seq           the frame hovered (-1 over the flame chart)
 * @property {Pointer} p
 * @property {Tooltip} tip
 * @property {FlameHit} [hit]       over the flame chart: the span or bucket
 */
/**
 * @typedef {object} FrameAtX
 * @property {number} seq        the frame (-1: none)
 * @property {number} binFrames  frames sharing the pixel
 * @property {number} [i0]       binned: the bin's frames [i0, i1) relative to axis.first
 * @property {number} [i1]
 */

/**
 * The frame for a click or hover at canvas x: the frame under x, or the slowest frame of the pixel's bin.
 * @param {FrameStore} store @param {FrameAxis} axis @param {number} x
 * @returns {FrameAtX}
 */
export function frameAtX(store, axis, x) {
  if (!axis.binned) return { seq: axis.seqAt(x), binFrames: 1 };
  const b = Math.floor(x - axis.x0);
  if (b < 0 || b >= axis.bins) return { seq: -1, binFrames: 0 };
  const [i0, i1] = binRange(b, axis.n, axis.bins);
  return { seq: store.slowestIn(axis.first + i0, axis.first + i1), binFrames: i1 - i0, i0, i1 };
}

/**
 * Min, mean and max of a column over the frames [q0, q1) (absent values skipped, non-finite flagged).
 * @param {FrameStore} store @param {number} columnId @param {number} q0 @param {number} q1
 */
export function columnBinStats(store, columnId, q0, q1) {
  let mn = Infinity, mx = -Infinity, sum = 0, cnt = 0, nonFinite = false;
  for (let q = q0; q < q1; q++) {
    const v = store.columnValue(columnId, q);
    if (v === undefined) continue;
    if (!Number.isFinite(v)) { nonFinite = true; continue; }
    mn = Math.min(mn, v); mx = Math.max(mx, v); sum += v; cnt++;
  }
  return { frames: q1 - q0, min: cnt ? mn : NaN, max: cnt ? mx : NaN, mean: cnt ? sum / cnt : NaN, nonFinite };
}

/**
 * What the pointer is over, with its tooltip; null when nothing (or a drag is in progress).
 * @param {object} args
 * @param {Pointer | null} args.pointer
 * @param {boolean} args.dragging     a shift-drag selection is in progress
 * @param {Layout} args.layout
 * @param {FrameAxis} args.axis
 * @param {FlameView} args.flame
 * @param {Column[]} args.columns     the plotted columns, in plot order
 * @param {FrameStore} args.store
 * @param {number} args.budgetMs
 * @returns {Hover | null}
 */
export function computeHover({ pointer: p, dragging, layout, axis, flame, columns, store, budgetMs }) {
  if (!p || dragging) return null;
  if (inside(layout.bars.chart, p.x, p.y)) {
    const f = frameAtX(store, axis, p.x);
    if (f.seq < 0) return null;
    const s = store.scopesState(f.seq);
    return {
      region: 'bars', seq: f.seq, p,
      tip: frameTooltip({
        frameIndex: store.frameIndexOf(f.seq), ms: store.frameMs(f.seq), budgetMs,
        overheadNs: store.frameOverhead(f.seq), nScopes: store.scopeCount[f.seq % store.capacity],
        scopeState: s === SCOPES_PRESENT ? 'present' : s === SCOPES_EVICTED ? 'evicted' : 'none', binFrames: f.binFrames,
      }),
    };
  }
  for (let i = 0; i < columns.length; i++) {
    if (!inside(layout.plots[i].chart, p.x, p.y)) continue;
    const f = frameAtX(store, axis, p.x);
    if (f.seq < 0) return null;
    const col = columns[i];
    const bin = axis.binned && f.binFrames > 1 && f.i0 !== undefined && f.i1 !== undefined
      ? columnBinStats(store, col.id, axis.first + f.i0, axis.first + f.i1) : null;
    return {
      region: 'plot', seq: f.seq, p,
      tip: plotTooltip({ column: col, frameIndex: store.frameIndexOf(f.seq), value: store.columnValue(col.id, f.seq), bin }),
    };
  }
  if (inside(layout.flame.chart, p.x, p.y)) {
    const hit = flameHitTest(layout.flame, flame, p.x, p.y);
    if (!hit && flame.model) return untrackedHover(layout, flame, store, p);
    if (!hit || !flame.model) return null;
    const threadName = store.decls.threadName(hit.lane.threadId);
    let tip;
    if (hit.kind === 'span') {
      const row = hit.row, k = hit.k;
      const siteId = row.site[k];
      const start = row.start[k];
      let frameIndex;
      for (const f of flame.model.frames) if (start >= f.start && start < f.end) { frameIndex = store.frameIndexOf(f.seq); break; }
      tip = spanTooltip({
        site: store.decls.sites.get(siteId), siteId, durNs: row.dur[k], selfNs: row.self[k],
        threadName, depth: hit.depth, frameIndex: flame.model.frames.length > 1 ? frameIndex : undefined,
      });
    } else {
      tip = bucketTooltip({
        count: hit.count, busyNs: hit.busy, startNs: hit.start, endNs: hit.end,
        dominant: store.decls.siteName(hit.site), threadName, depth: hit.depth,
      });
    }
    return { region: 'flame', seq: -1, hit, p, tip };
  }
  return null;
}

/**
 * Over a lane's first row where no top-level scope is: its untracked gap (untracked.js), or null.
 * @param {Layout} layout @param {FlameView} flame @param {FrameStore} store @param {Pointer} p
 * @returns {Hover | null}
 */
function untrackedHover(layout, flame, store, p) {
  const c = layout.flame.chart;
  if (!flame.untracked || !flame.lanes || !flame.model || !(flame.t1 > flame.t0)) return null;
  const y = p.y - c.y + flame.scrollY;
  const lane = flame.lanes.lanes.find((l) => y >= l.rowsY && y < l.rowsY + FLAME_ROW);
  const u = lane && flame.untracked.get(lane.threadId);
  if (!lane || !u) return null;
  const t = flame.t0 + ((p.x - c.x) * (flame.t1 - flame.t0)) / c.w;
  const gap = gapAt(u, t);
  if (!gap) return null;
  const frames = flame.model.frames;
  const f = frames.length > 1 ? frames.find((fr) => gap[0] >= fr.start && gap[0] < fr.end) : undefined;
  return {
    region: 'flame', seq: -1, p,
    tip: untrackedTooltip({ durNs: gap[1] - gap[0], threadName: store.decls.threadName(lane.threadId), frameIndex: f ? store.frameIndexOf(f.seq) : undefined }),
  };
}

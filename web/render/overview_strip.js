// @ts-check
// The overview strip above the panel's canvas: every frame of the capture (overview.js), one pixel
// column per slice of frames, drawn as the slice's min..max frame time (a light band) with its mean
// (a darker bar), on a log scale fitted to the data so a 300 ms spike and 16 ms frames both read.
// A spike is never hidden: a column's max is the max of every frame in it (the overview's pyramid).
// Below the bars, a tick row marks the columns that hold frames with scopes (flame frames). The
// frames the detail view holds are outlined, so the strip says which part of the capture is shown.
//
// stripColumns is pure (tests call it); drawOverviewStrip only paints what it computed.

import { formatNs } from '../axis.js';

/** Height of the strip (CSS px): bars, then the flame tick row. */
export const STRIP_HEIGHT = 46;
export const TICK_ROW = 4;

/**
 * Per-pixel-column summaries of the overview over `width` columns.
 * @param {import('../overview.js').Overview} ov @param {number} width
 * @returns {{n: number, first: number, last: number, min: Float64Array, max: Float64Array, mean: Float64Array,
 *   flame: Uint8Array, argMaxFrame: Float64Array, lo: number, hi: number}}
 */
export function stripColumns(ov, width) {
  const n = Math.max(0, width | 0);
  const out = {
    n, first: ov.firstFrame(), last: ov.lastFrame(), min: new Float64Array(n), max: new Float64Array(n), mean: new Float64Array(n),
    flame: new Uint8Array(n), argMaxFrame: new Float64Array(n).fill(-1), lo: Infinity, hi: -Infinity,
  };
  if (!ov.count || !n) return out;
  const span = out.last + 1 - out.first;
  const q = { min: Infinity, max: -Infinity, sum: 0, frames: 0, flame: 0, argMax: -1 };
  for (let x = 0; x < n; x++) {
    const f0 = out.first + (x * span) / n, f1 = out.first + ((x + 1) * span) / n;
    const e0 = Math.max(0, ov.entryOf(f0)), e1 = Math.max(e0 + 1, ov.entryOf(f1 - 1e-9) + 1);
    ov.query(e0, e1, q);
    if (!q.frames) { out.min[x] = out.max[x] = out.mean[x] = NaN; continue; }
    out.min[x] = q.min; out.max[x] = q.max; out.mean[x] = q.sum / q.frames;
    out.flame[x] = q.flame > 0 ? 1 : 0;
    out.argMaxFrame[x] = ov.index[q.argMax];
    if (q.min > 0 && q.min < out.lo) out.lo = q.min;
    if (q.max > out.hi) out.hi = q.max;
  }
  return out;
}

/**
 * The frame index under strip x (CSS px), or -1 when the overview is empty.
 * @param {import('../overview.js').Overview} ov @param {number} width @param {number} x
 */
export function frameAtStripX(ov, width, x) {
  if (!ov.count || width <= 0) return -1;
  const first = ov.firstFrame(), span = ov.lastFrame() + 1 - first;
  return Math.max(first, Math.min(first + span - 1, Math.floor(first + (Math.max(0, Math.min(width - 1e-9, x)) * span) / width)));
}

/**
 * The strip x (CSS px) of frame index `f`.
 * @param {import('../overview.js').Overview} ov @param {number} width @param {number} f
 */
export function stripXOfFrame(ov, width, f) {
  if (!ov.count) return 0;
  const first = ov.firstFrame(), span = ov.lastFrame() + 1 - first;
  return ((f - first) / span) * width;
}

/**
 * Paints the strip.
 * @param {CanvasRenderingContext2D} ctx   scaled to CSS px
 * @param {ReturnType<typeof stripColumns>} cols
 * @param {{width: number, budgetNs: number, window: [number, number] | null, progress: string, label: string,
 *   theme: {bg: string, text: string, muted: string, accent: string, warn: string, bad: string}}} o
 */
export function drawOverviewStrip(ctx, cols, o) {
  const w = o.width, h = STRIP_HEIGHT, barsH = h - TICK_ROW - 2;
  ctx.fillStyle = o.theme.bg;
  ctx.fillRect(0, 0, w, h);
  if (cols.hi > 0) {
    const lo = Math.max(1, Math.min(cols.lo / 2, cols.hi / 16)), hi = cols.hi * 1.05;
    const L0 = Math.log(lo), L1 = Math.log(hi);
    const y = (/** @type {number} */ v) => barsH - (Math.max(0, Math.log(Math.max(v, lo)) - L0) / (L1 - L0)) * (barsH - 2);
    for (let x = 0; x < cols.n; x++) {
      const mx = cols.max[x];
      if (!(mx >= 0)) continue;
      const over = mx > 2 * o.budgetNs ? o.theme.bad : mx > o.budgetNs ? o.theme.warn : o.theme.accent;
      ctx.globalAlpha = 0.35;
      ctx.fillStyle = over;
      const yMax = y(mx), yMin = y(cols.min[x]);
      ctx.fillRect(x, yMax, 1, Math.max(1, barsH - yMax));
      ctx.globalAlpha = 1;
      const yMean = y(cols.mean[x]);
      ctx.fillRect(x, yMean, 1, Math.max(1, barsH - yMean));
      ctx.fillStyle = o.theme.text;
      ctx.fillRect(x, yMin, 1, 1);
      if (cols.flame[x]) { ctx.fillStyle = o.theme.muted; ctx.fillRect(x, h - TICK_ROW, 1, TICK_ROW); }
    }
    ctx.fillStyle = o.theme.muted;
    ctx.font = '10px system-ui, sans-serif';
    ctx.textBaseline = 'top';
    ctx.fillText(`max ${formatNs(cols.hi)} (log scale)`, 4, 2);
  }
  if (o.window && cols.n) {
    const span = cols.last + 1 - cols.first;
    const x0 = ((o.window[0] - cols.first) / span) * w, x1 = ((o.window[1] + 1 - cols.first) / span) * w;
    ctx.strokeStyle = o.theme.text;
    ctx.lineWidth = 1;
    ctx.strokeRect(Math.floor(x0) + 0.5, 0.5, Math.max(2, Math.ceil(x1 - x0)) - 1, h - 1);
  }
  const right = [o.label, o.progress].filter(Boolean).join(' · ');
  if (right) {
    ctx.fillStyle = o.theme.muted;
    ctx.font = '10px system-ui, sans-serif';
    ctx.textBaseline = 'top';
    ctx.textAlign = 'right';
    ctx.fillText(right, w - 4, 2);
    ctx.textAlign = 'left';
  }
}

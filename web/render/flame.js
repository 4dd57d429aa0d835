// @ts-check
// Flame chart: one lane per thread (named), one row per depth, spans at their times. Per draw:
// cull each row to the window with two binary searches, merge sub-pixel spans (lod.js), convert the
// surviving items to pixels once, then draw in passes: rectangles batched by fill colour, labels
// (only where they fit, trimmed, widths cached), lane headers, ruler and overlays.

import { visibleRange, lodRow, createLodItems } from '../lod.js';
import { FLAME_PALETTE, THEME } from '../colors.js';
import { formatNs, rulerTicks } from '../axis.js';
import { laneSummary } from '../untracked.js';
import { FLAME_ROW, FLAME_LANE_HEADER } from '../layout.js';

/** @typedef {import('../flame_model.js').FlameModel} FlameModel */
/** @typedef {import('../flame_model.js').FlameRow} FlameRow */
/** @typedef {import('../layout.js').FlameLanes} FlameLanes */
/** @typedef {import('../layout.js').FlameLaneBox} FlameLaneBox */
/** @typedef {import('../layout.js').FlameRegion} FlameRegion */
/**
 * What the flame chart shows (scene.js): the model and lanes, the window [t0, t1] (ns), the ruler's
 * origin, the vertical scroll, the pinned frame's band, the texts.
 * @typedef {object} FlameView
 * @property {FlameModel | null} model    null: show `message` instead
 * @property {FlameLanes | null} lanes
 * @property {number} t0
 * @property {number} t1
 * @property {number} origin
 * @property {number} scrollY
 * @property {[number, number] | null} pinnedSpan
 * @property {string} subtitle
 * @property {string} message
 * @property {Map<number, import('../untracked.js').UntrackedLane> | null} [untracked]  gaps per thread
 */
/**
 * The span or merged bucket under a point (flameHitTest).
 * @typedef {{kind: 'span', lane: FlameLaneBox, depth: number, k: number, row: FlameRow, rect: number[]}
 *   | {kind: 'bucket', lane: FlameLaneBox, depth: number, count: number, busy: number, site: number,
 *      start: number, end: number, row: FlameRow, rect: number[]}} FlameHit
 */
/**
 * A flame view with what drawing it takes.
 * @typedef {FlameView & {
 *   decls: import('../store.js').Declarations, colorOf: (siteId: number) => number,
 *   measurer: import('../text.js').TextMeasurer, batches: import('./batch.js').RectBatches,
 *   scratch: ReturnType<typeof createFlameScratch>, dpr: number, hover: FlameHit | null,
 *   match?: ((site: number) => boolean) | null,
 * }} FlameDrawEnv
 */

const LABEL_MIN_PX = 22;
const LABEL_PAD = 4;

export function createFlameScratch() {
  /** @type {number[]} */
  const labels = []; // x, y, width, site per label
  /** @type {number[]} */
  const hits = []; // x, y, width per search match drawn
  return { items: createLodItems(1024), labels, hits, stats: { rects: 0, spans: 0, merged: 0 } };
}

/**
 * env: { model, lanes, t0, t1, origin, scrollY, decls, colorOf(siteId) -> palette index, measurer,
 *        batches, scratch, hover, pinnedSpan: [s, e] | null, subtitle, message }
 * @param {CanvasRenderingContext2D} ctx @param {FlameRegion} r @param {FlameDrawEnv} env
 */
export function drawFlame(ctx, r, env) {
  const { model, lanes, t0, t1, batches, scratch } = env;
  ctx.fillStyle = THEME.region;
  ctx.fillRect(r.x, r.y, r.w, r.h);

  // title line
  ctx.textBaseline = 'middle';
  ctx.font = THEME.fontBold;
  ctx.fillStyle = THEME.text;
  ctx.fillText('Flame chart', r.x + 2, r.y + 11);
  const tw = env.measurer ? env.measurer.width('Flame chart', THEME.fontBold) : 80;
  ctx.font = THEME.font;
  ctx.fillStyle = THEME.textMuted;
  if (env.subtitle) ctx.fillText(env.subtitle, r.x + 14 + tw, r.y + 11);

  const c = r.chart;
  const ruler = r.ruler;
  ctx.fillStyle = THEME.regionAlt;
  ctx.fillRect(ruler.x, ruler.y, ruler.w, ruler.h);
  if (!model || !lanes || model.nScopes === 0 || !(t1 > t0)) {
    ctx.fillStyle = THEME.textMuted;
    ctx.textAlign = 'center';
    ctx.fillText(env.message || 'No scopes to show', c.x + c.w / 2, c.y + Math.min(c.h / 2, 60));
    ctx.textAlign = 'left';
    return scratch.stats;
  }

  const pxPerNs = c.w / (t1 - t0);
  const nsPerPx = (t1 - t0) / c.w;
  const toX = (/** @type {number} */ t) => c.x + (t - t0) * pxPerNs;

  // ruler ticks relative to `origin` (start of the pinned frame or of the range): axis.js rulerTicks
  const rticks = rulerTicks(t0, t1, env.origin ?? t0, c.w);
  ctx.fillStyle = THEME.grid;
  for (const tk of rticks) ctx.fillRect(Math.round(toX(tk.t)), c.y, 1, c.h);

  ctx.save();
  ctx.beginPath();
  ctx.rect(c.x, c.y, c.w, c.h);
  ctx.clip();

  // frame boundaries and the pinned frame's band (when showing a range of frames)
  if (env.pinnedSpan && model.frames.length > 1) {
    const x0 = Math.max(c.x, toX(env.pinnedSpan[0])), x1 = Math.min(c.x + c.w, toX(env.pinnedSpan[1]));
    if (x1 > x0) { ctx.fillStyle = THEME.pinnedBand; ctx.fillRect(x0, c.y, x1 - x0, c.h); }
  }
  if (model.frames.length > 1) {
    ctx.fillStyle = THEME.frameEdge;
    let last = -Infinity;
    for (const f of model.frames) {
      const x = toX(f.start);
      if (x < c.x || x > c.x + c.w || x - last < 3) continue;
      ctx.fillRect(Math.round(x), c.y, 1, c.h);
      last = x;
    }
  }

  // untracked time: gaps between a lane's top-level scopes, shaded on its first row and labelled
  const top0 = c.y - env.scrollY;
  if (env.untracked) {
    ctx.font = THEME.fontSmall;
    ctx.textBaseline = 'middle';
    for (const l of lanes.lanes) {
      const u = env.untracked.get(l.threadId);
      const y = top0 + l.rowsY;
      if (!u || y + FLAME_ROW < c.y || y > c.y + c.h) continue;
      for (let k = 0; k < u.gaps.length; k += 2) {
        if (u.gaps[k + 1] < t0 || u.gaps[k] > t1) continue;
        const x0 = Math.max(c.x, Math.round(toX(u.gaps[k]) * (env.dpr || 1)) / (env.dpr || 1));
        const x1 = Math.min(c.x + c.w, Math.round(toX(u.gaps[k + 1]) * (env.dpr || 1)) / (env.dpr || 1));
        if (x1 - x0 < 1) continue;
        ctx.fillStyle = THEME.untracked;
        ctx.fillRect(x0, y, x1 - x0, FLAME_ROW - 1);
        const text = env.measurer.trim(`untracked ${formatNs(u.gaps[k + 1] - u.gaps[k])}`, x1 - x0 - 2 * LABEL_PAD, THEME.fontSmall);
        if (text) { ctx.fillStyle = THEME.untrackedText; ctx.fillText(text, x0 + LABEL_PAD, y + FLAME_ROW / 2); }
      }
    }
  }

  // rows: cull, merge, convert, batch
  const items = scratch.items;
  const labels = scratch.labels;
  labels.length = 0;
  let spans = 0, merged = 0;
  const top = c.y - env.scrollY;
  const xMin = c.x, xMax = c.x + c.w;
  const dpr = env.dpr || 1;
  const match = env.match ?? null;
  const hits = scratch.hits;
  hits.length = 0;
  for (const l of lanes.lanes) {
    if (top + l.y > c.y + c.h || top + l.y + l.height < c.y) continue;
    const rows = l.lane.rows;
    for (let d = 0; d < rows.length; d++) {
      const y = top + l.rowsY + d * FLAME_ROW;
      if (y + FLAME_ROW < c.y || y > c.y + c.h) continue;
      const row = rows[d];
      const [i0, i1] = visibleRange(row.start, row.endMax, row.n, t0, t1);
      if (i1 <= i0) continue;
      items.n = 0;
      lodRow(row.start, row.dur, row.site, i0, i1, t0, nsPerPx, items);
      spans += i1 - i0;
      for (let k = 0; k < items.n; k++) {
        // snap to device pixels (crisp edges, no blended seams), at least one CSS pixel wide
        let x0 = Math.round(toX(items.start[k]) * dpr) / dpr;
        let x1 = Math.round(toX(items.end[k]) * dpr) / dpr;
        const isMerged = items.count[k] > 1;
        if (x1 - x0 < 1) x1 = x0 + 1;
        if (x0 < xMin) x0 = xMin;
        if (x1 > xMax) x1 = xMax;
        if (x1 <= x0) continue;
        const pal = FLAME_PALETTE[env.colorOf(items.site[k])];
        const w = x1 - x0;
        // a search dims what does not match (a merged bucket is named by its widest span's site)
        const dim = match !== null && !match(items.site[k]);
        batches.add(dim ? THEME.searchDim : isMerged ? pal.merged : pal.fill, x0, y, w > 3 && !isMerged ? w - 1 : w, FLAME_ROW - 1);
        if (match && !dim) hits.push(x0, y, w);
        if (isMerged) merged++;
        else if (w >= LABEL_MIN_PX && !dim) labels.push(x0, y, w, items.site[k]);
      }
    }
  }
  const rects = batches.count;
  batches.flush(ctx);
  if (hits.length) { // search matches: outlined in the highlight colour
    ctx.strokeStyle = THEME.searchMark;
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let k = 0; k < hits.length; k += 3) ctx.rect(hits[k] + 0.5, hits[k + 1] + 0.5, Math.max(0, hits[k + 2] - 1), FLAME_ROW - 2);
    ctx.stroke();
  }

  // labels: one font, one colour, trimmed to fit
  ctx.font = THEME.font;
  ctx.fillStyle = FLAME_PALETTE[0].text;
  ctx.textBaseline = 'middle';
  for (let k = 0; k < labels.length; k += 4) {
    const text = env.measurer.trim(env.decls.siteName(labels[k + 3]), labels[k + 2] - 2 * LABEL_PAD - 1, THEME.font);
    if (text) ctx.fillText(text, labels[k] + LABEL_PAD, labels[k + 1] + FLAME_ROW / 2);
  }

  // lane headers
  for (const l of lanes.lanes) {
    const y = top + l.y;
    if (y + FLAME_LANE_HEADER < c.y || y > c.y + c.h) continue;
    ctx.fillStyle = THEME.laneHeader;
    ctx.fillRect(c.x, y, c.w, FLAME_LANE_HEADER - 2);
    ctx.font = THEME.fontBold;
    ctx.fillStyle = THEME.text;
    const name = env.decls.threadName(l.threadId);
    ctx.fillText(name, c.x + 6, y + FLAME_LANE_HEADER / 2 - 1);
    const nw = env.measurer.width(name, THEME.fontBold);
    ctx.font = THEME.fontSmall;
    ctx.fillStyle = THEME.textMuted;
    let count = 0;
    for (const row of l.lane.rows) count += row.n;
    ctx.fillText(laneSummary(count, l.depth, env.untracked ? env.untracked.get(l.threadId) : undefined), c.x + 14 + nw, y + FLAME_LANE_HEADER / 2 - 1);
  }

  // vertical position indicator when the lanes are taller than the chart (drag pans them)
  const contentH = lanes.height;
  if (contentH > c.h) {
    const th = Math.max(24, (c.h * c.h) / contentH);
    const ty = c.y + ((c.h - th) * env.scrollY) / Math.max(1, contentH - c.h + 8);
    ctx.fillStyle = 'rgba(255, 255, 255, 0.18)';
    ctx.fillRect(c.x + c.w - 5, Math.min(c.y + c.h - th, ty), 3, th);
  }

  // hover outline
  const h = env.hover;
  if (h && h.rect) {
    ctx.strokeStyle = THEME.hoverOutline;
    ctx.lineWidth = 1.5;
    ctx.strokeRect(h.rect[0] + 0.75, h.rect[1] + 0.75, Math.max(1, h.rect[2] - 1.5), h.rect[3] - 1.5);
  }
  ctx.restore();

  // ruler labels (kept clear of the window-size note at the right end)
  ctx.font = THEME.fontSmall;
  ctx.textBaseline = 'middle';
  const wtext = `window ${formatNs(t1 - t0)}`;
  const ww = env.measurer.width(wtext, THEME.fontSmall);
  const labelLimit = ruler.x + ruler.w - ww - 14;
  for (const tk of rticks) {
    const x = toX(tk.t);
    if (x < ruler.x + 2 || x > ruler.x + ruler.w) continue;
    ctx.fillStyle = THEME.textDim;
    ctx.fillRect(Math.round(x), ruler.y + ruler.h - 4, 1, 4);
    if (x + 3 + env.measurer.width(tk.label, THEME.fontSmall) > labelLimit) continue;
    ctx.fillStyle = THEME.textMuted;
    ctx.fillText(tk.label, Math.round(x) + 3, ruler.y + ruler.h / 2 - 1);
  }
  ctx.fillStyle = THEME.textDim;
  ctx.fillText(wtext, ruler.x + ruler.w - ww - 4, ruler.y + ruler.h / 2 - 1);

  scratch.stats = { rects, spans, merged };
  return scratch.stats;
}

/**
 * The item under content point (x, y) for tooltips: a span {kind:'span', lane, depth, k, rect} or a
 * merged bucket {kind:'bucket', lane, depth, count, busy, site, start, end, rect}, or null.
 * Mirrors the draw: the same LOD merge decides what the pixel shows.
 * @param {FlameRegion} r @param {FlameView} env @param {number} x @param {number} y
 * @returns {FlameHit | null}
 */
export function flameHitTest(r, env, x, y) {
  const { model, lanes, t0, t1 } = env;
  const c = r.chart;
  if (!model || !lanes || !(t1 > t0) || x < c.x || x >= c.x + c.w || y < c.y || y >= c.y + c.h) return null;
  const contentY = y - c.y + env.scrollY;
  let hit = null;
  for (const l of lanes.lanes) {
    if (contentY >= l.rowsY && contentY < l.y + l.height) {
      hit = { lane: l, depth: Math.floor((contentY - l.rowsY) / FLAME_ROW) };
      break;
    }
  }
  if (!hit || hit.depth >= hit.lane.lane.rows.length) return null;
  const row = hit.lane.lane.rows[hit.depth];
  const nsPerPx = (t1 - t0) / c.w;
  const t = t0 + (x - c.x) * nsPerPx;
  const rowY = c.y - env.scrollY + hit.lane.rowsY + hit.depth * FLAME_ROW;
  const toX = (/** @type {number} */ v) => c.x + (v - t0) / nsPerPx;
  // same merge as the draw, restricted to a small window around the cursor
  const [i0, i1] = visibleRange(row.start, row.endMax, row.n, t - 2 * nsPerPx, t + 2 * nsPerPx);
  if (i1 <= i0) return null;
  const items = createLodItems(16);
  lodRow(row.start, row.dur, row.site, i0, i1, t0, nsPerPx, items);
  for (let k = 0; k < items.n; k++) {
    const x0 = toX(items.start[k]);
    let x1 = toX(items.end[k]);
    if (x1 - x0 < 1) x1 = x0 + 1;
    if (x < x0 - 0.5 || x >= x1 + 0.5) continue;
    const rect = [Math.max(c.x, x0), rowY, Math.min(c.x + c.w, x1) - Math.max(c.x, x0), FLAME_ROW - 1];
    if (items.count[k] === 1) {
      return { kind: 'span', lane: hit.lane, depth: hit.depth, k: items.first[k], row, rect };
    }
    return {
      kind: 'bucket', lane: hit.lane, depth: hit.depth, count: items.count[k], busy: items.busy[k],
      site: items.site[k], start: items.start[k], end: items.end[k], row, rect,
    };
  }
  return null;
}

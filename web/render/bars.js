// @ts-check
// Frame bars: one bar per frame (frame_ms), coloured against the frame budget; when frames outnumber
// pixels, each pixel column shows the slowest frame of its bin, so the spikes are what survives.
// The slowest frame in view gets a marker and a label; the pinned frame and a range being selected are
// drawn as overlays. Pass order: region, grid, bars batched by colour, text, overlays.

import { binSeries } from '../binning.js';
import { budgetClass, BUDGET_COLORS, THEME } from '../colors.js';
import { formatMs } from '../axis.js';
import { SCOPES_PRESENT } from '../store.js';
import { plural } from '../text.js';

/** @typedef {import('../layout.js').ChartRegion} ChartRegion */
/**
 * What the bars (and the plots) draw with: the data, what is in view, scratch kept across draws.
 * @typedef {object} FramesEnv
 * @property {import('../store.js').FrameStore} store
 * @property {import('../scene.js').FramesView} view
 * @property {import('../binning.js').Bins} bins
 * @property {import('./batch.js').RectBatches} batches
 * @property {import('../text.js').TextMeasurer | null} [measurer]
 * @property {number} [dpr]
 * @property {ReturnType<typeof import('./plots.js').createLinePoints>} linePoints
 */

/** Height (CSS px) of the marks under the bars: frames with scopes, frames with a search match. */
export const MARK_PX = 2;

/**
 * Marks under the bars: a tick under every frame that carries scopes (a flame frame; binned, under
 * every column holding one) and, while a search is active, a tick in the highlight colour at the top
 * of every frame holding a match.
 * @param {CanvasRenderingContext2D} ctx @param {import('../layout.js').Rect} c @param {FramesEnv} env
 */
function drawFrameMarks(ctx, c, env) {
  const { store, view } = env;
  const { axis } = view;
  const n = axis.n;
  if (n === 0) return;
  const cols = axis.binned ? axis.bins : n;
  const colOf = (/** @type {number} */ i) => (axis.binned ? Math.min(cols - 1, Math.floor((i * cols) / n)) : i);
  const xy = (/** @type {number} */ col) => (axis.binned
    ? [axis.x0 + col, 1] : [axis.x0 + col * axis.slot, Math.max(1, axis.slot - (axis.slot >= 4 ? 1 : 0))]);
  /** @param {(i: number) => boolean} has @param {string} color @param {number} y */
  const mark = (has, color, y) => {
    ctx.fillStyle = color;
    let last = -1;
    for (let i = 0; i < n; i++) {
      const col = colOf(i);
      if (col === last || !has(i)) continue;
      last = col;
      const [x, w] = xy(col);
      ctx.fillRect(x, y, w, MARK_PX);
    }
  };
  mark((i) => store.scopesState(axis.first + i) === SCOPES_PRESENT, THEME.flameMark, c.y + c.h);
  const sf = view.searchFrames;
  if (sf) mark((i) => sf[i] === 1, THEME.searchMark, c.y);
}

/**
 * Draws the bars into region r (see layout.js). env: {store, view, bins, batches, measurer}.
 * Returns {slowestSeq, maxMs, scale}.
 * @param {CanvasRenderingContext2D} ctx @param {ChartRegion} r @param {FramesEnv} env
 */
export function drawBars(ctx, r, env) {
  const { store, view, bins, batches } = env;
  const { axis, budgetMs } = view;
  const c = r.chart;
  ctx.fillStyle = THEME.region;
  ctx.fillRect(r.x, r.y, r.w, r.h);

  const n = axis.n;
  const ms = store.frameMsSeries(axis.first, axis.end);
  let maxMs = -Infinity, slowest = -1, over = 0, sum = 0;
  for (let i = 0; i < n; i++) {
    const v = ms[i];
    if (v > maxMs) { maxMs = v; slowest = axis.first + i; }
    if (v > budgetMs) over++;
    sum += v;
  }
  const scale = view.scale;
  const yOf = (/** @type {number} */ v) => c.y + c.h - scale.frac(v) * c.h;
  const k = env.dpr || 1;
  const snapY = (/** @type {number} */ v) => Math.round(yOf(v) * k) / k; // bar tops on device pixels: no blurred top rows

  // grid: a few horizontal lines with labels in the gutter
  ctx.fillStyle = THEME.grid;
  for (const t of scale.ticks) ctx.fillRect(c.x, Math.round(yOf(t.value)), c.w, 1);

  // bars, batched by budget colour
  const bottom = c.y + c.h;
  // slot edges snapped to device pixels: fractional edges would blend neighbouring bars into dark seams
  const gap = axis.slot >= 4 ? 1 : 0;
  const slotX = (/** @type {number} */ i) => Math.round((axis.x0 + i * axis.slot) * k) / k;
  const slotW = (/** @type {number} */ i, /** @type {number} */ x) => Math.max(1 / k, Math.round((axis.x0 + (i + 1) * axis.slot - gap) * k) / k - x);
  if (n > 0 && axis.binned) {
    binSeries(ms, n, axis.bins, bins);
    for (let b = 0; b < bins.nBins; b++) {
      if (bins.count[b] === 0) continue;
      const v = bins.max[b];
      const top = snapY(v);
      batches.add(BUDGET_COLORS[budgetClass(v, budgetMs)], axis.x0 + b, top, 1, Math.max(1, bottom - top));
    }
  } else if (n > 0) {
    for (let i = 0; i < n; i++) {
      const v = ms[i];
      const top = snapY(v);
      const x = slotX(i);
      batches.add(BUDGET_COLORS[budgetClass(v, budgetMs)], x, top, slotW(i, x), Math.max(1, bottom - top));
    }
  }
  batches.flush(ctx);
  // the profiler's cost, over the bars: the top `overhead` of each bar, [v - overhead, v], so it
  // reads the same on a fitted or log scale as from zero
  const overheadMs = view.showOverhead && n > 0 ? store.overheadSeries(axis.first, axis.end) : null;
  if (overheadMs) {
    const cols = axis.binned ? bins.nBins : n;
    for (let j = 0; j < cols; j++) {
      if (axis.binned && bins.count[j] === 0) continue;
      const v = axis.binned ? bins.max[j] : ms[j];
      const oh = overheadMs[axis.binned ? bins.argMax[j] : j] / 1e6;
      if (!(oh > 0)) continue;
      const x = axis.binned ? axis.x0 + j : slotX(j);
      const top = snapY(v);
      batches.add(THEME.barOverhead, x, top, axis.binned ? 1 : slotW(j, x), Math.max(1, yOf(v - oh) - top));
    }
    batches.flush(ctx);
  }
  drawFrameMarks(ctx, c, env);
  if (n === 0) {
    ctx.fillStyle = THEME.textMuted;
    ctx.font = THEME.font;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.fillText(view.emptyMessage || 'Waiting for frames…', c.x + c.w / 2, c.y + c.h / 2);
    ctx.textAlign = 'left';
  }

  // budget line, when the scale reaches it (a fitted scale may lie wholly under or over it)
  const budgetIn = budgetMs >= scale.lo && budgetMs <= scale.hi;
  const by = Math.round(yOf(budgetMs)) + 0.5;
  if (budgetIn) {
    ctx.strokeStyle = THEME.budgetLine;
    ctx.lineWidth = 1;
    ctx.setLineDash([4, 3]);
    ctx.beginPath();
    ctx.moveTo(c.x, by);
    ctx.lineTo(c.x + c.w, by);
    ctx.stroke();
    ctx.setLineDash([]);
  }

  // text: title, summary, gutter labels, frame-index axis
  ctx.textBaseline = 'middle';
  ctx.font = THEME.fontBold;
  ctx.fillStyle = THEME.text;
  ctx.fillText('Frame time', r.x + 2, r.y + 10);
  ctx.font = THEME.font;
  ctx.fillStyle = THEME.textMuted;
  const titleW = env.measurer ? env.measurer.width('Frame time', THEME.fontBold) + 12 : 80;
  let summary = n > 0
    ? `${plural(n, 'frame')} · mean ${formatMs(sum / n)} · ${over.toLocaleString('en-US')} over budget (${((100 * over) / n).toFixed(1)}%)`
    : 'no frames yet';
  if (view.range) summary += ' · zoomed range (double-click to show all)';
  ctx.fillText(summary, r.x + 2 + titleW, r.y + 10);

  ctx.font = THEME.fontSmall;
  const gx = c.x + c.w + 6;
  ctx.fillStyle = THEME.textDim;
  let lastY = Infinity;
  for (const t of scale.ticks) {
    const y = Math.max(c.y + 4, Math.min(c.y + c.h - 4, yOf(t.value)));
    if ((budgetIn && Math.abs(y - by) <= 12) || Math.abs(y - lastY) < 11) continue;
    ctx.fillText(t.label, gx, y);
    lastY = y;
  }
  ctx.fillStyle = THEME.textMuted;
  if (budgetIn) ctx.fillText(`${formatMs(budgetMs)}`, gx, by);
  else { // off the fitted scale: said once on the title line, at the right
    ctx.textAlign = 'right';
    ctx.fillText(`budget ${formatMs(budgetMs)} ${budgetMs > scale.hi ? 'above' : 'below'} the scale`, r.x + r.w - 2, r.y + 10);
    ctx.textAlign = 'left';
  }

  // x axis: frame numbers and times since the capture's first frame (bars_axis.js frameTicks)
  if (n > 0) {
    ctx.fillStyle = THEME.textDim;
    ctx.textAlign = 'center';
    const ay = c.y + c.h + 9;
    for (const t of view.xTicks) {
      const x = axis.xCenter(t.seq);
      if (x < c.x + 40 || x > c.x + c.w - 40) continue;
      ctx.fillRect(Math.round(x), c.y + c.h, 1, 3);
      ctx.fillText(`${t.frame} · ${t.time}`, x, ay);
    }
    ctx.textAlign = 'left';
  }

  // overlays: slowest marker, pinned frame, selection
  if (slowest >= 0) {
    const x = axis.binned ? axis.x0 + Math.min(bins.nBins - 1, Math.floor(((slowest - axis.first) * bins.nBins) / n)) + 0.5
      : axis.xCenter(slowest);
    const top = yOf(maxMs);
    ctx.fillStyle = THEME.text;
    ctx.beginPath();
    ctx.moveTo(x, top - 3);
    ctx.lineTo(x - 4, top - 9);
    ctx.lineTo(x + 4, top - 9);
    ctx.closePath();
    ctx.fill();
    ctx.font = THEME.fontSmall;
    const label = `max ${formatMs(maxMs)} #${store.frameIndexOf(slowest)}`;
    const lw = env.measurer ? env.measurer.width(label, THEME.fontSmall) : 90;
    let lx = x + 7;
    if (lx + lw > c.x + c.w) lx = x - 7 - lw;
    ctx.fillText(label, lx, Math.max(c.y + 4, top - 8));
  }
  if (view.dragSel) {
    const [a, b] = view.dragSel;
    const x0 = axis.xOf(Math.min(a, b));
    const x1 = axis.xOf(Math.max(a, b) + 1);
    ctx.fillStyle = THEME.selection;
    ctx.fillRect(x0, c.y, Math.max(1, x1 - x0), c.h);
    ctx.fillStyle = THEME.selectionEdge;
    ctx.fillRect(x0, c.y, 1, c.h);
    ctx.fillRect(x1 - 1, c.y, 1, c.h);
  }
  return { slowestSeq: slowest, maxMs, scale };
}

// @ts-check
// Frame bars: one bar per frame (frame_ms), coloured against the frame budget; when frames outnumber
// pixels, each pixel column shows the slowest frame of its bin, so the spikes are what survives.
// The slowest frame in view gets a marker and a label; the pinned frame and a range being selected are
// drawn as overlays. Pass order: region, grid, bars batched by colour, text, overlays.

import { binSeries } from '../binning.js';
import { budgetClass, BUDGET_COLORS, THEME } from '../colors.js';
import { formatMs, niceCeil, ticks } from '../axis.js';

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

/**
 * Bar height scale for frame times in view: max of the data and 1.25 x budget, rounded up nicely.
 * @param {number} maxMs @param {number} budgetMs
 */
export function barsScaleMax(maxMs, budgetMs) {
  return niceCeil(Math.max(Number.isFinite(maxMs) ? maxMs : 0, budgetMs * 1.25, 0.001));
}

/**
 * Draws the bars into region r (see layout.js). env: {store, view, bins, batches, measurer}.
 * Returns {slowestSeq, maxMs, yMax}.
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
  const yMax = barsScaleMax(maxMs, budgetMs);
  const yOf = (/** @type {number} */ v) => c.y + c.h - (Math.min(v, yMax) / yMax) * c.h;
  const k = env.dpr || 1;
  const snapY = (/** @type {number} */ v) => Math.round(yOf(v) * k) / k; // bar tops on device pixels: no blurred top rows

  // grid: a few horizontal lines with labels in the gutter
  ctx.fillStyle = THEME.grid;
  const gridTicks = ticks(0, yMax, 3);
  for (const t of gridTicks) if (t > 0) ctx.fillRect(c.x, Math.round(yOf(t)), c.w, 1);

  // bars, batched by budget colour (overhead portions in their own batch)
  const overheadMs = view.showOverhead ? store.overheadSeries(axis.first, axis.end) : null;
  const bottom = c.y + c.h;
  if (n > 0 && axis.binned) {
    binSeries(ms, n, axis.bins, bins);
    for (let b = 0; b < bins.nBins; b++) {
      if (bins.count[b] === 0) continue;
      const v = bins.max[b];
      const top = snapY(v);
      batches.add(BUDGET_COLORS[budgetClass(v, budgetMs)], axis.x0 + b, top, 1, Math.max(1, bottom - top));
      if (overheadMs) {
        const oh = overheadMs[bins.argMax[b]] / 1e6;
        if (oh > 0) batches.add(THEME.barOverhead, axis.x0 + b, yOf(oh), 1, Math.max(1, bottom - yOf(oh)));
      }
    }
  } else if (n > 0) {
    // edges snapped to device pixels: fractional edges would blend neighbouring bars into dark seams
    const gap = axis.slot >= 4 ? 1 : 0;
    for (let i = 0; i < n; i++) {
      const v = ms[i];
      const top = snapY(v);
      const x = Math.round((axis.x0 + i * axis.slot) * k) / k;
      const w = Math.max(1 / k, Math.round((axis.x0 + (i + 1) * axis.slot - gap) * k) / k - x);
      batches.add(BUDGET_COLORS[budgetClass(v, budgetMs)], x, top, w, Math.max(1, bottom - top));
      if (overheadMs) {
        const oh = overheadMs[i] / 1e6;
        if (oh > 0) batches.add(THEME.barOverhead, x, yOf(oh), w, Math.max(1, bottom - yOf(oh)));
      }
    }
  }
  batches.flush(ctx);
  if (n === 0) {
    ctx.fillStyle = THEME.textMuted;
    ctx.font = THEME.font;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.fillText(view.emptyMessage || 'Waiting for frames…', c.x + c.w / 2, c.y + c.h / 2);
    ctx.textAlign = 'left';
  }

  // budget line
  const by = Math.round(yOf(budgetMs)) + 0.5;
  ctx.strokeStyle = THEME.budgetLine;
  ctx.lineWidth = 1;
  ctx.setLineDash([4, 3]);
  ctx.beginPath();
  ctx.moveTo(c.x, by);
  ctx.lineTo(c.x + c.w, by);
  ctx.stroke();
  ctx.setLineDash([]);

  // text: title, summary, gutter labels, frame-index axis
  ctx.textBaseline = 'middle';
  ctx.font = THEME.fontBold;
  ctx.fillStyle = THEME.text;
  ctx.fillText('Frame time', r.x + 2, r.y + 10);
  ctx.font = THEME.font;
  ctx.fillStyle = THEME.textMuted;
  const titleW = env.measurer ? env.measurer.width('Frame time', THEME.fontBold) + 12 : 80;
  let summary = n > 0
    ? `${n.toLocaleString('en-US')} frames · mean ${formatMs(sum / n)} · ${over} over budget (${((100 * over) / n).toFixed(1)}%)`
    : 'no frames yet';
  if (view.range) summary += ' · zoomed range (double-click to show all)';
  ctx.fillText(summary, r.x + 2 + titleW, r.y + 10);

  ctx.font = THEME.fontSmall;
  const gx = c.x + c.w + 6;
  ctx.fillStyle = THEME.textDim;
  for (const t of gridTicks) if (t > 0 && Math.abs(yOf(t) - by) > 12) ctx.fillText(formatMs(t), gx, yOf(t));
  ctx.fillStyle = THEME.textMuted;
  ctx.fillText(`${formatMs(budgetMs)}`, gx, by);

  // frame index ticks: nice frame_index values when the indices in view are contiguous (the usual
  // case), otherwise nice positions labelled with whatever index the frame there carries
  if (n > 0) {
    ctx.fillStyle = THEME.textDim;
    ctx.textAlign = 'center';
    const ay = c.y + c.h + 9;
    const count = Math.max(2, Math.floor(axis.used / 110));
    const i0 = store.frameIndexOf(axis.first);
    const contiguous = store.frameIndexOf(axis.end - 1) - i0 === n - 1;
    const values = contiguous ? ticks(i0, i0 + n - 1, count) : ticks(axis.first, axis.end - 1, count);
    for (const t of values) {
      const seq = contiguous ? axis.first + Math.round(t - i0) : Math.round(t);
      if (seq < axis.first || seq >= axis.end) continue;
      const x = axis.xCenter(seq);
      if (x < c.x + 20 || x > c.x + c.w - 20) continue;
      ctx.fillRect(Math.round(x), c.y + c.h, 1, 3);
      ctx.fillText(`#${store.frameIndexOf(seq)}`, x, ay);
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
  return { slowestSeq: slowest, maxMs, yMax };
}

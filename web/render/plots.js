// @ts-check
// Metric plots: one per column, on the frame axis shared with the bars. With fewer frames than pixels
// it is a line through every sample; with more, each pixel column is a bin drawn as a min..max band
// plus a mean line, so a one-frame spike still reaches its height. Non-finite samples (NaN, +/-Inf)
// are marked with red ticks at the top (NaN, +Inf) or bottom (-Inf) of the plot, and the label says
// so, instead of breaking the scale.

import { binSeries, seriesExtent, BIN_NAN, BIN_POS_INF, BIN_NEG_INF } from '../binning.js';
import { formatValue, plotAxisLabels } from '../axis.js';
import { PAD } from '../layout.js';
import { THEME } from '../colors.js';

/** @typedef {import('./bars.js').FramesEnv} FramesEnv */

/**
 * y range for a finite extent: padded by 8%, widened when flat, NaN-safe.
 * @param {number} min @param {number} max
 * @returns {[number, number]}
 */
export function plotRange(min, max) {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  if (max === min) {
    const d = Math.abs(max) > 0 ? Math.abs(max) * 0.1 : 1;
    return [min - d, max + d];
  }
  const pad = (max - min) * 0.08;
  return [min - pad, max + pad];
}

/**
 * The line through (xs[i], ys[i]), broken at NaN. Drawn as a hairline (one device pixel wide): with
 * software raster a wider stroke costs 30 to 40 times more (about 11 ms for 1,600 points at 1.25 px
 * in headless Chromium, against 0.3 ms). On HiDPI screens a second hairline half a CSS pixel lower
 * gives the line about one CSS pixel of weight at the same low cost.
 * @param {CanvasRenderingContext2D} ctx @param {Float64Array} xs @param {Float64Array} ys @param {number} n @param {number} dpr
 */
function strokeSeries(ctx, xs, ys, n, dpr) {
  ctx.strokeStyle = THEME.plotLine;
  ctx.lineWidth = 1 / dpr;
  const passes = dpr >= 1.5 ? 2 : 1;
  ctx.beginPath();
  for (let p = 0; p < passes; p++) {
    const dy = p * 0.5;
    let pen = false;
    for (let i = 0; i < n; i++) {
      const y = ys[i];
      if (y !== y) { pen = false; continue; }
      if (pen) ctx.lineTo(xs[i], y + dy);
      else { ctx.moveTo(xs[i], y + dy); pen = true; }
    }
  }
  ctx.stroke();
  // a sample with no finite neighbour has no segment: show it as a dot
  ctx.fillStyle = THEME.plotLine;
  for (let i = 0; i < n; i++) {
    if (ys[i] === ys[i] && !(i > 0 && ys[i - 1] === ys[i - 1]) && !(i + 1 < n && ys[i + 1] === ys[i + 1])) {
      ctx.fillRect(xs[i] - 1, ys[i] - 1, 2, 2);
    }
  }
}

/**
 * Scratch for the line's points, owned by the caller and reused across draws (drawPlot grows it).
 * @param {number} [n]
 */
export function createLinePoints(n = 4096) {
  return { xs: new Float64Array(n), ys: new Float64Array(n) };
}

/**
 * Draws plot `index` for `column` into region r. env: {store, view, bins, measurer, dpr, linePoints
 * (createLinePoints(), kept by the caller so a draw allocates nothing)}.
 * Returns {extent, range} for hover read-outs.
 * @param {CanvasRenderingContext2D} ctx @param {import('../layout.js').ChartRegion} r
 * @param {import('../store.js').Column} column @param {number} index @param {FramesEnv} env
 */
export function drawPlot(ctx, r, column, index, env) {
  const { store, view, bins } = env;
  const { axis } = view;
  const c = r.chart;
  ctx.fillStyle = index % 2 ? THEME.regionAlt : THEME.region;
  ctx.fillRect(r.x, r.y, r.w, r.h);

  const series = store.columnSeries(column.id, axis.first, axis.end);
  const n = axis.n;
  const ext = series ? seriesExtent(series.values, n, series.present) : seriesExtent([], 0);
  const [lo, hi] = plotRange(ext.min, ext.max);
  const yOf = (/** @type {number} */ v) => c.y + c.h - ((v - lo) / (hi - lo)) * c.h;

  // faint zero line when zero is inside the range
  if (lo < 0 && hi > 0) {
    ctx.fillStyle = THEME.grid;
    ctx.fillRect(c.x, Math.round(yOf(0)), c.w, 1);
  }

  const marks = []; // [x, flags]
  if (series && n > 0) {
    const { values, present } = series;
    const pts = env.linePoints;
    const need = axis.binned ? axis.bins : n;
    if (pts.xs.length < need) { pts.xs = new Float64Array(need * 2); pts.ys = new Float64Array(need * 2); }
    const { xs, ys } = pts;
    let count;
    if (axis.binned) {
      binSeries(values, n, axis.bins, bins, present);
      // band: one pixel column per bin from min to max (fillRect: the fast raster path)
      ctx.fillStyle = THEME.plotBand;
      for (let b = 0; b < bins.nBins; b++) {
        if (bins.flags[b]) marks.push(axis.x0 + b + 0.5, bins.flags[b]);
        xs[b] = axis.x0 + b + 0.5;
        if (bins.count[b] === 0) { ys[b] = NaN; continue; }
        const y0 = yOf(bins.max[b]);
        ctx.fillRect(axis.x0 + b, y0, 1, Math.max(1, yOf(bins.min[b]) - y0));
        ys[b] = yOf(bins.mean[b]);
      }
      count = bins.nBins;
    } else {
      for (let i = 0; i < n; i++) {
        const v = values[i];
        xs[i] = axis.x0 + (i + 0.5) * axis.slot;
        if (!present[i]) { ys[i] = NaN; continue; }
        if (!Number.isFinite(v)) {
          marks.push(xs[i], Number.isNaN(v) ? BIN_NAN : v > 0 ? BIN_POS_INF : BIN_NEG_INF);
          ys[i] = NaN;
          continue;
        }
        ys[i] = yOf(v);
      }
      count = n;
    }
    strokeSeries(ctx, xs, ys, count, env.dpr || 1);
    if (!axis.binned && axis.slot >= 6) {
      ctx.fillStyle = THEME.plotLine;
      for (let i = 0; i < n; i++) if (ys[i] === ys[i]) ctx.fillRect(xs[i] - 1.5, ys[i] - 1.5, 3, 3);
    }
  }
  // labels: name, unit, the value at the pinned frame (or the latest); range in the gutter
  ctx.textBaseline = 'middle';
  const shownSeq = view.pinned >= 0 ? view.pinned : axis.end - 1;
  const shown = store.columnValue(column.id, shownSeq);
  const name = column.name;
  ctx.font = THEME.fontBold;
  const nameW = env.measurer ? env.measurer.width(name, THEME.fontBold) : name.length * 7;
  let valueText = shown === undefined ? '' : formatValue(shown, column.unit);
  if (valueText && view.pinned >= 0) valueText += ` @#${store.frameIndexOf(view.pinned)}`;
  const unitText = column.unit ? ` (${column.unit})` : '';
  const nfText = ext.nonFinite > 0 ? `${ext.nonFinite} non-finite` : '';
  const fontW = (/** @type {string} */ t, /** @type {string} */ f) => (env.measurer ? env.measurer.width(t, f) : t.length * 7);
  ctx.font = THEME.font;
  const unitW = fontW(unitText, THEME.font);
  const valueW = fontW(valueText, THEME.font);
  const nfW = nfText ? fontW(nfText, THEME.fontSmall) + 10 : 0;
  ctx.fillStyle = 'rgba(17, 19, 24, 0.72)';
  ctx.fillRect(c.x + 2, c.y + 2, nameW + unitW + 8 + valueW + nfW + 10, 16);
  ctx.font = THEME.fontBold;
  ctx.fillStyle = THEME.text;
  ctx.fillText(name, c.x + 6, c.y + 10);
  ctx.font = THEME.font;
  ctx.fillStyle = THEME.textMuted;
  ctx.fillText(unitText, c.x + 6 + nameW, c.y + 10);
  ctx.fillStyle = shown !== undefined && !Number.isFinite(shown) ? THEME.plotNonFinite : THEME.plotLine;
  ctx.fillText(valueText, c.x + 6 + nameW + unitW + 8, c.y + 10);
  if (nfText) {
    ctx.fillStyle = THEME.plotNonFinite;
    ctx.font = THEME.fontSmall;
    ctx.fillText(nfText, c.x + 6 + nameW + unitW + 8 + valueW + 10, c.y + 10);
  }
  // non-finite marks last, so the label box never hides them
  if (marks.length) {
    ctx.fillStyle = THEME.plotNonFinite;
    for (let k = 0; k < marks.length; k += 2) {
      const x = marks[k], f = marks[k + 1];
      if (f & (BIN_NAN | BIN_POS_INF)) ctx.fillRect(x - 1, c.y, 2, 6);
      if (f & BIN_NEG_INF) ctx.fillRect(x - 1, c.y + c.h - 6, 2, 6);
    }
  }

  // right axis: max and min with the unit (a flat series once, where its line is), right-aligned at
  // the canvas edge so a long unit reaches into the plot rather than off the canvas
  ctx.font = THEME.fontSmall;
  ctx.textAlign = 'right';
  const gx = r.x + r.w + PAD - 2;
  for (const l of plotAxisLabels(ext.min, ext.max, ext.finite, column.unit)) {
    const y = l.at === 'top' ? c.y + 7 : l.at === 'bottom' ? c.y + c.h - 7 : c.y + c.h / 2;
    const w = fontW(l.text, THEME.fontSmall);
    if (gx - w < c.x + c.w) { ctx.fillStyle = 'rgba(17, 19, 24, 0.72)'; ctx.fillRect(gx - w - 2, y - 7, w + 4, 14); }
    ctx.fillStyle = THEME.textDim;
    ctx.fillText(l.text, gx, y);
  }
  ctx.textAlign = 'left';
  return { extent: ext, range: [lo, hi] };
}

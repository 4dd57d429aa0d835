// @ts-check
// Panel layout: where the frame bars, the metric plots and the flame chart sit on the canvas, in CSS
// pixels. Bars and plots share the same chart x and width so a frame lines up vertically across all of
// them (the shared time axis); a right gutter holds their value labels. Plots shrink from PLOT_HEIGHT
// to PLOT_MIN_HEIGHT so the flame chart keeps about FLAME_SHARE of the height; it takes the rest and
// never less than FLAME_MIN_HEIGHT (the canvas grows and the panel scrolls instead).
// Also the flame chart's vertical arrangement (lanes, rows). Pure.

export const PAD = 10;
export const GUTTER = 56; // right of bars and plots: value labels
export const BARS_HEIGHT = 132;
export const BARS_HEADER = 22;
export const BARS_AXIS = 16;
export const PLOT_HEIGHT = 60; // tallest plot
export const PLOT_MIN_HEIGHT = 34;
export const FLAME_SHARE = 0.45; // plots shrink (down to PLOT_MIN_HEIGHT) to leave the flame chart this share
export const PLOT_GAP = 4;
export const SECTION_GAP = 10;
export const FLAME_MIN_HEIGHT = 240;
export const FLAME_HEADER = 22; // title line
export const FLAME_RULER = 18;
export const FLAME_ROW = 18;
export const FLAME_LANE_HEADER = 20;
export const FLAME_LANE_GAP = 6;

/** @typedef {{x: number, y: number, w: number, h: number}} Rect */
/** @typedef {Rect & {chart: Rect}} ChartRegion  a region and the chart inside it */
/** @typedef {ChartRegion & {ruler: Rect}} FlameRegion */
/** @typedef {ReturnType<typeof computeLayout>} Layout */
/** @typedef {ReturnType<typeof flameLanes>} FlameLanes */
/** @typedef {FlameLanes['lanes'][number]} FlameLaneBox */

/**
 * Regions for a canvas `width` x `height` (CSS px) with nPlots metric plots.
 * @param {number} width @param {number} height @param {number} nPlots
 */
export function computeLayout(width, height, nPlots) {
  const x = PAD;
  const w = Math.max(50, width - 2 * PAD);
  const chartW = Math.max(20, w - GUTTER);
  let y = PAD;
  /** @type {ChartRegion} */
  const bars = { x, y, w, h: BARS_HEIGHT, chart: { x, y: y + BARS_HEADER, w: chartW, h: BARS_HEIGHT - BARS_HEADER - BARS_AXIS } };
  y += BARS_HEIGHT + SECTION_GAP;
  const flamePref = Math.max(FLAME_MIN_HEIGHT, Math.round(height * FLAME_SHARE));
  const forPlots = height - y - PAD - SECTION_GAP - flamePref;
  const plotH = nPlots > 0
    ? Math.max(PLOT_MIN_HEIGHT, Math.min(PLOT_HEIGHT, Math.floor(forPlots / nPlots) - PLOT_GAP)) : PLOT_HEIGHT;
  /** @type {ChartRegion[]} */
  const plots = [];
  for (let i = 0; i < nPlots; i++) {
    plots.push({ x, y, w, h: plotH, chart: { x, y: y + 2, w: chartW, h: plotH - 4 } });
    y += plotH + PLOT_GAP;
  }
  if (nPlots > 0) y += SECTION_GAP - PLOT_GAP;
  const flameH = Math.max(FLAME_MIN_HEIGHT, height - y - PAD);
  /** @type {FlameRegion} */
  const flame = {
    x, y, w, h: flameH,
    chart: { x, y: y + FLAME_HEADER + FLAME_RULER, w, h: flameH - FLAME_HEADER - FLAME_RULER },
    ruler: { x, y: y + FLAME_HEADER, w, h: FLAME_RULER },
  };
  const totalHeight = y + flameH + PAD;
  return { width, height: Math.max(height, totalHeight), totalHeight, chartX: x, chartW, bars, plots, flame };
}

/**
 * Vertical arrangement of the flame lanes (content coordinates, 0 = top of the lanes area):
 * [{threadId, lane, y, rowsY, depth, height}], plus total content height.
 * @param {import('./flame_model.js').FlameModel | null} model
 */
export function flameLanes(model) {
  const out = [];
  let y = 0;
  for (const lane of model ? model.lanes : []) {
    const depth = lane.rows.length;
    const height = FLAME_LANE_HEADER + depth * FLAME_ROW;
    out.push({ threadId: lane.threadId, lane, y, rowsY: y + FLAME_LANE_HEADER, depth, height });
    y += height + FLAME_LANE_GAP;
  }
  return { lanes: out, height: Math.max(0, y - FLAME_LANE_GAP) };
}

/**
 * Which lane/row a content-space y falls in: {lane, depth} (depth -1 on the lane header) or null.
 * @param {FlameLanes} lanes @param {number} y
 */
export function flameRowAt(lanes, y) {
  for (const l of lanes.lanes) {
    if (y < l.y || y >= l.y + l.height) continue;
    if (y < l.rowsY) return { lane: l, depth: -1 };
    return { lane: l, depth: Math.floor((y - l.rowsY) / FLAME_ROW) };
  }
  return null;
}

/**
 * Is (x, y) inside rect r?
 * @param {Rect | null | undefined} r @param {number} x @param {number} y
 */
export function inside(r, x, y) {
  return !!r && x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
}

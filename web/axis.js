// @ts-check
// Axis and time mapping: the arithmetic that turns trace units (frame sequence numbers, nanoseconds,
// metric values) into pixels and back, nice tick steps, window zoom/pan, and number formatting.
// Pure functions only; every renderer and the input handler share them so a pixel means the same thing
// everywhere (the "one shared time axis").

/**
 * Linear mapping from the domain [d0, d1] to the range [r0, r1]. A zero-width domain maps to r0.
 * @param {number} d0 @param {number} d1 @param {number} r0 @param {number} r1
 */
export function linearScale(d0, d1, r0, r1) {
  const k = d1 !== d0 ? (r1 - r0) / (d1 - d0) : 0;
  return {
    d0, d1, r0, r1, k,
    toPx: (/** @type {number} */ v) => r0 + (v - d0) * k,
    fromPx: (/** @type {number} */ p) => (k !== 0 ? d0 + (p - r0) / k : d0),
  };
}

/**
 * The frame axis shared by the frame bars and every metric plot. Frames [first, end) (sequence
 * numbers in the store) are laid out in equal slots across `width` pixels starting at `left`.
 * A slot is at most `maxSlotPx` wide; when the frames do not fill the width they are aligned right
 * (newest at the right edge, as a live view scrolls). With more frames than pixels a slot is narrower
 * than a pixel and the renderers bin frames per pixel column (`bins`, one per pixel).
 * @param {{first: number, end: number, left: number, width: number, maxSlotPx?: number, alignRight?: boolean}} spec
 */
export function frameAxis({ first, end, left, width, maxSlotPx = Infinity, alignRight = true }) {
  const n = Math.max(0, end - first);
  const slot = n > 0 ? Math.min(width / n, maxSlotPx) : 0;
  const used = slot * n;
  const x0 = alignRight ? left + width - used : left;
  return {
    first, end, n, slot, x0, left, width, used,
    binned: slot < 1,
    bins: Math.max(1, Math.round(used)),
    /** x of the left edge of frame `seq`'s slot. */
    xOf: (/** @type {number} */ seq) => x0 + (seq - first) * slot,
    /** x of the centre of frame `seq`'s slot. */
    xCenter: (/** @type {number} */ seq) => x0 + (seq - first + 0.5) * slot,
    /** Frame under pixel x, or -1 when x is outside the laid-out frames. */
    seqAt: (/** @type {number} */ x) => {
      if (n === 0 || x < x0 || x >= x0 + used) return -1;
      return Math.min(end - 1, first + Math.floor((x - x0) / slot));
    },
    /** Frame nearest to pixel x, clamped into [first, end - 1] (for drags that leave the area). */
    seqNear: (/** @type {number} */ x) => {
      if (n === 0) return -1;
      const s = first + Math.floor((x - x0) / slot);
      return Math.max(first, Math.min(end - 1, s));
    },
  };
}

/**
 * Nice step (1, 2 or 5 times a power of ten) giving about `count` intervals over `span`.
 * @param {number} span @param {number} count
 */
export function niceStep(span, count) {
  if (!(span > 0) || !Number.isFinite(span)) return 1;
  const raw = span / Math.max(1, count);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const m = raw / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/**
 * Tick values in [v0, v1] at a nice step (at most ~count + 1 of them).
 * @param {number} v0 @param {number} v1 @param {number} count
 */
export function ticks(v0, v1, count) {
  const step = niceStep(v1 - v0, count);
  const out = [];
  const startK = Math.ceil(v0 / step - 1e-9);
  for (let k = startK; k * step <= v1 + step * 1e-9 && out.length < 1000; k++) out.push(k * step || 0);
  return out;
}

/**
 * A nice upper bound for a value axis: max rounded up to 1, 2, 2.5, 5 times a power of ten.
 * @param {number} v
 */
export function niceCeil(v) {
  if (!(v > 0) || !Number.isFinite(v)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (v <= m * p * (1 + 1e-12)) return m * p;
  return 10 * p;
}

/** @param {string} s */
function trimZeros(s) {
  return s.indexOf('.') >= 0 ? s.replace(/\.?0+$/, '') : s;
}

/** @param {number} v */
function fixed3(v) {
  const a = Math.abs(v);
  return trimZeros(v.toFixed(a >= 100 ? 0 : a >= 10 ? 1 : 2));
}

/**
 * Duration in nanoseconds as text with a unit: 850 ns, 12.3 µs, 4.56 ms, 1.23 s.
 * @param {number} ns
 */
export function formatNs(ns) {
  if (!Number.isFinite(ns)) return String(ns);
  const a = Math.abs(ns);
  if (a < 1e3) return `${fixed3(ns)} ns`;
  if (a < 1e6) return `${fixed3(ns / 1e3)} µs`;
  if (a < 1e9) return `${fixed3(ns / 1e6)} ms`;
  return `${fixed3(ns / 1e9)} s`;
}

/**
 * Milliseconds as text: 16.7 ms, 0.25 ms (always in ms, for frame times).
 * @param {number} ms
 */
export function formatMs(ms) {
  if (!Number.isFinite(ms)) return `${ms} ms`;
  const a = Math.abs(ms);
  return `${trimZeros(ms.toFixed(a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3))} ms`;
}

/**
 * A metric value for labels: compact, NaN and infinities spelled out, unit appended when given.
 * @param {number} v @param {string} [unit]
 */
export function formatValue(v, unit = '') {
  let s;
  if (Number.isNaN(v)) s = 'NaN';
  else if (v === Infinity) s = '+∞';
  else if (v === -Infinity) s = '−∞';
  else {
    const a = Math.abs(v);
    if (a !== 0 && (a >= 1e7 || a < 1e-3)) s = v.toExponential(2).replace('e+', 'e');
    else if (a >= 1e4) s = Math.round(v).toLocaleString('en-US');
    else s = trimZeros(v.toFixed(a >= 100 ? 1 : a >= 1 ? 2 : 4));
  }
  return unit ? `${s} ${unit}` : s;
}

/**
 * Zooms the window [t0, t1] by `factor` (< 1 zooms in) keeping `anchor` at the same place, limited to
 * a minimum span and to `bounds` ([lo, hi], the data extent the window may not leave entirely).
 * @param {number} t0 @param {number} t1 @param {number} anchor @param {number} factor
 * @param {{minSpan?: number, bounds?: [number, number] | null}} [options]
 * @returns {[number, number]}
 */
export function zoomWindow(t0, t1, anchor, factor, { minSpan = 50, bounds = null } = {}) {
  const span = t1 - t0;
  let next = Math.max(minSpan, span * factor);
  if (bounds) next = Math.min(next, (bounds[1] - bounds[0]) * 1.2 || next);
  const f = span > 0 ? (anchor - t0) / span : 0.5;
  const n0 = anchor - f * next;
  return clampWindow(n0, n0 + next, bounds);
}

/**
 * Moves the window by dt, keeping it overlapping `bounds`.
 * @param {number} t0 @param {number} t1 @param {number} dt @param {[number, number] | null} [bounds]
 * @returns {[number, number]}
 */
export function panWindow(t0, t1, dt, bounds = null) {
  return clampWindow(t0 + dt, t1 + dt, bounds);
}

/**
 * @param {number} t0 @param {number} t1 @param {[number, number] | null} bounds
 * @returns {[number, number]}
 */
function clampWindow(t0, t1, bounds) {
  if (!bounds) return [t0, t1];
  const span = t1 - t0;
  const margin = span * 0.5;
  const lo = bounds[0] - margin;
  const hi = bounds[1] + margin;
  if (span >= hi - lo) {
    const c = (bounds[0] + bounds[1]) / 2;
    return [c - span / 2, c + span / 2];
  }
  if (t0 < lo) return [lo, lo + span];
  if (t1 > hi) return [hi - span, hi];
  return [t0, t1];
}

const NS_UNITS = /** @type {const} */ ([[1e9, 's'], [1e6, 'ms'], [1e3, 'µs'], [1, 'ns']]);
/** Most decimals a tick label carries before the ticks are labelled from a shown base instead. */
export const MAX_TICK_DECIMALS = 3;

/**
 * `ns` in the unit `[scale, name]` with `decimals` digits after the point, trailing zeros kept so that
 * neighbouring ticks line up ("26.500 s", "26.501 s").
 * @param {number} ns @param {readonly [number, string]} unit @param {number} decimals
 */
function fixedNs(ns, unit, decimals) {
  return `${(ns / unit[0]).toFixed(decimals)} ${unit[1]}`;
}

/** @param {number} a  the largest magnitude to show */
function unitFor(a) {
  return NS_UNITS.find(([k]) => a >= k) || NS_UNITS[NS_UNITS.length - 1];
}

/** Decimals that tell apart values `step` ns apart in `unit`. @param {number} step @param {readonly [number, string]} unit */
function decimalsFor(step, unit) {
  return Math.max(0, Math.ceil(-Math.log10(step / unit[0]) - 1e-9));
}

/**
 * Labels for time ticks `values` (ns, relative to an origin; `step` apart): each label carries just
 * the digits that tell neighbouring ticks apart, in the unit of the largest value ("+26.501 s" beside
 * "+26.502 s", never "+26.5 s" twice). When that takes more than MAX_TICK_DECIMALS digits (a deep
 * zoom far from the origin), the ticks are labelled from `base` (the first tick; `baseText`, shown
 * once): "+1 µs", "+2 µs" after "26.500001 s". Zero is "0".
 * @param {number[]} values @param {number} step
 * @returns {{base: number, baseText: string, labels: string[]}}
 */
export function timeTickLabels(values, step) {
  const sign = (/** @type {number} */ v, /** @type {string} */ s) => (v > 0 ? `+${s}` : v < 0 ? `−${s.replace('-', '')}` : '0');
  if (!values.length || !(step > 0)) return { base: 0, baseText: '', labels: values.map(() => '') };
  let big = 0;
  for (const v of values) big = Math.max(big, Math.abs(v));
  const unit = unitFor(big);
  const d = decimalsFor(step, unit);
  if (d <= MAX_TICK_DECIMALS) {
    return { base: 0, baseText: '', labels: values.map((v) => sign(Math.round(v / step) === 0 ? 0 : v, fixedNs(Math.abs(v), unit, d))) };
  }
  const base = values[0];
  let span = 0;
  for (const v of values) span = Math.max(span, Math.abs(v - base));
  const u = unitFor(span || step);
  const du = decimalsFor(step, u);
  const bu = unitFor(Math.abs(base));
  return {
    base,
    baseText: sign(base, fixedNs(Math.abs(base), bu, decimalsFor(step, bu))),
    labels: values.map((v) => (v === base ? sign(base, fixedNs(Math.abs(base), bu, decimalsFor(step, bu))) : `+${fixedNs(v - base, u, du)}`)),
  };
}

/**
 * The right-axis labels of a metric plot with extent [min, max] over `finite` finite samples: the
 * max at the top and the min at the bottom, each with the column's unit; a flat series (both the
 * same once formatted) is labelled once, in the middle, where its line is; no finite sample: "no data".
 * @param {number} min @param {number} max @param {number} finite @param {string} [unit]
 * @returns {{text: string, at: 'top' | 'middle' | 'bottom'}[]}
 */
export function plotAxisLabels(min, max, finite, unit = '') {
  if (!(finite > 0)) return [{ text: 'no data', at: 'middle' }];
  const hi = formatValue(max, unit), lo = formatValue(min, unit);
  if (hi === lo) return [{ text: hi, at: 'middle' }];
  return [{ text: hi, at: 'top' }, { text: lo, at: 'bottom' }];
}

/**
 * The flame chart ruler's ticks for the window [t0, t1] (ns) across `widthPx`: about one per 120 px,
 * at a nice step, labelled relative to `origin` (timeTickLabels).
 * @param {number} t0 @param {number} t1 @param {number} origin @param {number} widthPx
 * @returns {{t: number, label: string}[]}
 */
export function rulerTicks(t0, t1, origin, widthPx) {
  if (!(t1 > t0)) return [];
  const step = niceStep(t1 - t0, Math.max(2, Math.floor(widthPx / 120)));
  const first = Math.ceil((t0 - origin) / step) * step + origin;
  /** @type {number[]} */
  const ts = [];
  for (let k = 0; k < 200; k++) {
    const t = first + k * step;
    if (t > t1) break;
    ts.push(t);
  }
  const { labels } = timeTickLabels(ts.map((t) => t - origin), step);
  return ts.map((t, k) => ({ t, label: labels[k] }));
}

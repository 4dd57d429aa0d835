// @ts-check
// The frame bars' two axes, as data the renderer draws (render/bars.js): the y scale of frame times
// in one of three modes, its ticks and their labels (with units), and the x axis's ticks, each
// labelled with its frame number and its time since the capture's first frame. Pure.
//
// y modes: `fit` (the default) spans the frame times in view, so a sub-millisecond variation fills
// the bars' height, and the budget line is drawn only when it falls inside; `budget` starts at zero
// and always includes 1.25 x the budget (the panel's earlier scale); `log` spans the frame times on a
// log scale, for views where a spike would flatten everything else. Bars always grow from the bottom
// of the chart: in `fit` and `log` the bottom is a value above zero, and its label says which.

import { niceCeil, niceStep, ticks, formatMs, timeTickLabels } from './axis.js';

/** @typedef {'fit' | 'budget' | 'log'} BarsScaleMode */
export const BARS_SCALE_MODES = /** @type {const} */ (['fit', 'budget', 'log']);
/** Smallest frame time a log scale reaches down to (ms). */
const LOG_FLOOR_MS = 1e-3;

/**
 * @typedef {object} BarsScale
 * @property {BarsScaleMode} mode
 * @property {number} lo                 value at the bottom of the chart (ms)
 * @property {number} hi                 value at the top (ms)
 * @property {(v: number) => number} frac  0 at lo, 1 at hi, clamped to [0, 1]
 * @property {{value: number, label: string}[]} ticks   grid lines and their labels
 */


/**
 * The y scale of the bars for frame times [minMs, maxMs] in view.
 * @param {BarsScaleMode} mode @param {number} minMs @param {number} maxMs @param {number} budgetMs
 * @returns {BarsScale}
 */
export function barsScale(mode, minMs, maxMs, budgetMs) {
  const finite = Number.isFinite(minMs) && Number.isFinite(maxMs) && maxMs >= minMs;
  if (mode === 'log') {
    const lo = Math.pow(10, Math.floor(Math.log10(Math.max(LOG_FLOOR_MS, finite ? minMs : budgetMs))));
    let hi = Math.pow(10, Math.ceil(Math.log10(Math.max(lo * 10, finite ? maxMs : budgetMs)) - 1e-9));
    if (!(hi > lo)) hi = lo * 10;
    const l0 = Math.log10(lo), l1 = Math.log10(hi);
    const frac = (/** @type {number} */ v) => (v > 0 ? Math.max(0, Math.min(1, (Math.log10(v) - l0) / (l1 - l0))) : 0);
    /** @type {{value: number, label: string}[]} */
    const out = [];
    const decades = l1 - l0;
    for (let e = l0; e <= l1; e++) {
      for (const m of decades <= 2 ? [1, 2, 5] : [1]) {
        const v = m * Math.pow(10, e);
        if (v >= lo && v <= hi) out.push({ value: v, label: formatMs(v) });
      }
    }
    return { mode, lo, hi, frac, ticks: out };
  }
  let lo = 0, hi;
  if (mode === 'fit' && finite) {
    const pad = Math.max((maxMs - minMs) * 0.08, Math.abs(maxMs) * 0.002, 1e-4);
    const step = niceStep(maxMs - minMs + 2 * pad, 3);
    lo = Math.max(0, Math.floor((minMs - pad) / step + 1e-9) * step);
    hi = Math.ceil((maxMs + pad) / step - 1e-9) * step;
  } else {
    hi = niceCeil(Math.max(finite ? maxMs : 0, budgetMs * 1.25, 0.001));
  }
  const span = hi - lo;
  const frac = (/** @type {number} */ v) => Math.max(0, Math.min(1, (v - lo) / span));
  const values = ticks(lo, hi, 3);
  const step = values.length > 1 ? values[1] - values[0] : span;
  const decimals = Math.max(0, Math.min(6, Math.ceil(-Math.log10(step) - 1e-9)));
  const label = (/** @type {number} */ v) => `${v.toFixed(decimals)} ms`;
  return { mode, lo, hi, frac, ticks: values.filter((v) => v > lo || lo > 0).map((v) => ({ value: v, label: label(v) })) };
}

/** The next mode in the y-scale cycle (the bars' scale button). @param {BarsScaleMode} mode */
export function nextBarsScale(mode) {
  return BARS_SCALE_MODES[(BARS_SCALE_MODES.indexOf(mode) + 1) % BARS_SCALE_MODES.length];
}

/**
 * The x axis's ticks for frames [first, end) (store sequence numbers): nice frame numbers when the
 * numbers in view are contiguous, else nice positions; each with its frame number and its time
 * (frame start minus `originNs`, the capture's first frame), the time labels carrying just the
 * digits that tell them apart (timeTickLabels).
 * @param {object} args
 * @param {number} args.first @param {number} args.end
 * @param {number} args.count                      about how many ticks
 * @param {(seq: number) => number} args.indexOf   frame number of a frame
 * @param {(seq: number) => number} args.startOf   its start (ns)
 * @param {number} args.originNs
 * @returns {{seq: number, frame: string, time: string}[]}
 */
export function frameTicks({ first, end, count, indexOf, startOf, originNs }) {
  const n = end - first;
  if (n <= 0) return [];
  const i0 = indexOf(first);
  const contiguous = indexOf(end - 1) - i0 === n - 1;
  const values = contiguous ? ticks(i0, i0 + n - 1, count) : ticks(first, end - 1, count);
  /** @type {number[]} */
  const seqs = [];
  for (const t of values) {
    const seq = contiguous ? first + Math.round(t - i0) : Math.round(t);
    if (seq >= first && seq < end && seqs[seqs.length - 1] !== seq) seqs.push(seq);
  }
  const times = seqs.map((s) => startOf(s) - originNs);
  let step = Infinity;
  for (let k = 1; k < times.length; k++) step = Math.min(step, Math.abs(times[k] - times[k - 1]));
  if (!Number.isFinite(step) || step <= 0) step = Math.max(1, Math.abs(times[0] || 0));
  // frame starts are not nice numbers: one more digit than the spacing needs, so "+1.7 s" is not "+2 s"
  const { labels } = timeTickLabels(times, step / 10);
  return seqs.map((seq, k) => ({ seq, frame: `#${indexOf(seq).toLocaleString('en-US')}`, time: labels[k] }));
}

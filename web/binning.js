// @ts-check
// Plot binning: when more samples than pixels share a plot, each pixel column shows the bin's minimum,
// mean and maximum (a band and a mean line), so a one-frame spike survives any zoom level; picking
// every k-th sample instead would hide it. Non-finite samples (a diverging loss: NaN, +/-Infinity) are
// counted per bin and flagged so the plot can mark them; they never poison min/mean/max.
// Pure functions over typed arrays; the caller owns and reuses the output buffers.

export const BIN_NAN = 1;
export const BIN_POS_INF = 2;
export const BIN_NEG_INF = 4;

/** @typedef {ReturnType<typeof createBins>} Bins */
/** @typedef {ArrayLike<number>} Samples */

/**
 * Output buffers for up to `capacity` bins (grown on demand by binSeries).
 * @param {number} [capacity]
 */
export function createBins(capacity = 0) {
  return {
    nBins: 0,
    capacity,
    min: new Float64Array(capacity),
    max: new Float64Array(capacity),
    mean: new Float64Array(capacity),
    count: new Uint32Array(capacity), // finite samples in the bin
    flags: new Uint8Array(capacity), // BIN_NAN | BIN_POS_INF | BIN_NEG_INF seen in the bin
    argMax: new Int32Array(capacity), // sample index of the maximum (-1 when no finite sample)
    argMin: new Int32Array(capacity),
  };
}

/** @param {Bins} bins @param {number} n */
function ensure(bins, n) {
  if (bins.capacity >= n) return;
  const cap = Math.max(n, bins.capacity * 2, 64);
  Object.assign(bins, createBins(cap));
}

/**
 * Bin that sample i of n falls in when n samples are spread over nBins columns.
 * @param {number} i @param {number} n @param {number} nBins
 */
export function binOf(i, n, nBins) {
  return Math.min(nBins - 1, Math.floor((i * nBins) / n));
}

/**
 * Bins samples values[0..n) into nBins columns (sample i goes to bin floor(i * nBins / n)).
 * `present` (optional Uint8Array) marks which samples exist; absent ones are ignored entirely.
 * Fills bins.min/max/mean/count/flags/argMax/argMin for bins [0, nBins); returns bins.
 * @param {Samples} values @param {number} n @param {number} nBins @param {Bins} bins
 * @param {ArrayLike<number> | null} [present]
 */
export function binSeries(values, n, nBins, bins, present = null) {
  nBins = Math.max(1, nBins | 0);
  ensure(bins, nBins);
  bins.nBins = nBins;
  const { min, max, mean, count, flags, argMax, argMin } = bins;
  for (let b = 0; b < nBins; b++) {
    min[b] = Infinity; max[b] = -Infinity; mean[b] = 0; count[b] = 0; flags[b] = 0; argMax[b] = -1; argMin[b] = -1;
  }
  for (let i = 0; i < n; i++) {
    if (present !== null && present[i] === 0) continue;
    const v = values[i];
    const b = binOf(i, n, nBins);
    if (v - v === 0) { // finite
      if (v < min[b]) { min[b] = v; argMin[b] = i; }
      if (v > max[b]) { max[b] = v; argMax[b] = i; }
      mean[b] += v;
      count[b]++;
    } else if (v !== v) flags[b] |= BIN_NAN;
    else flags[b] |= v > 0 ? BIN_POS_INF : BIN_NEG_INF;
  }
  for (let b = 0; b < nBins; b++) {
    if (count[b] > 0) mean[b] /= count[b];
    else { min[b] = NaN; max[b] = NaN; mean[b] = NaN; }
  }
  return bins;
}

/**
 * Finite extent of values[0..n) (ignoring absent and non-finite samples): {min, max, finite, nonFinite,
 * last, lastIndex}. min/max are NaN when no sample is finite.
 * @param {Samples} values @param {number} n @param {ArrayLike<number> | null} [present]
 */
export function seriesExtent(values, n, present = null) {
  let min = Infinity, max = -Infinity, finite = 0, nonFinite = 0, lastIndex = -1;
  for (let i = 0; i < n; i++) {
    if (present !== null && present[i] === 0) continue;
    const v = values[i];
    lastIndex = i;
    if (v - v === 0) { finite++; if (v < min) min = v; if (v > max) max = v; } else nonFinite++;
  }
  if (finite === 0) { min = NaN; max = NaN; }
  return { min, max, finite, nonFinite, lastIndex, last: lastIndex >= 0 ? values[lastIndex] : NaN };
}

/**
 * Samples [i0, i1) that binSeries puts in bin b (the inverse of binOf).
 * @param {number} b @param {number} n @param {number} nBins
 * @returns {[number, number]}
 */
export function binRange(b, n, nBins) {
  const i0 = Math.ceil((b * n) / nBins);
  const i1 = Math.min(n, Math.ceil(((b + 1) * n) / nBins));
  return [i0, i1];
}

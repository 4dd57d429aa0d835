// @ts-check
// The overview of a whole capture: every frame's time, kept as entries of `stride` consecutive
// frames (the minimum, maximum and sum of their frame times, how many frames and how many carry
// scopes), as the capture's index gives them (vor serve, or the index of a file opened on the
// page, core/src/capture_index.h) or as frames arrive (the in-page source). Bounded: at most
// `maxEntries` entries (2^20 by default); past that, neighbours merge in pairs and the stride
// doubles, so a spike's maximum always survives in its entry.
//
// Drawing it at any zoom costs O(pixels x log entries), not O(frames): a pyramid over the entries
// (level l holds the min, max, sum, frame and flame counts of 2^l entries, and which entry holds
// the maximum) answers each pixel column's range with O(log n) nodes. Memory: 36 bytes per
// entry and about 32 per entry for the pyramid (70 MB at 2^20 entries, with a million frames).
// Pure: no DOM.

export const OVERVIEW_MAX_ENTRIES = 1 << 20;

/** @typedef {{index: ArrayLike<number>, start: ArrayLike<number>, min: ArrayLike<number>, max: ArrayLike<number>,
 *   sum: ArrayLike<number>, frames: ArrayLike<number>, flame: ArrayLike<number>}} EntryArrays */
/**
 * One range's summary (Overview.query).
 * @typedef {object} RangeSummary
 * @property {number} min      smallest frame time (ns), Infinity when empty
 * @property {number} max      largest frame time (ns), -Infinity when empty
 * @property {number} sum      ns
 * @property {number} frames
 * @property {number} flame    frames with scopes
 * @property {number} argMax   the entry holding the maximum, -1 when empty
 */

/** @param {Float64Array | Float32Array | Uint32Array} a @param {number} n */
function grow(a, n) {
  if (a.length >= n) return a;
  const Type = /** @type {any} */ (a.constructor);
  const b = new Type(Math.max(n, a.length * 2, 256));
  b.set(a);
  return b;
}

class Level {
  constructor() {
    this.n = 0;
    this.min = new Float32Array(0);
    this.max = new Float32Array(0);
    this.sum = new Float64Array(0);
    this.frames = new Float64Array(0);
    this.flame = new Float64Array(0);
    this.argMax = new Uint32Array(0);
  }

  /** @param {number} n */
  ensure(n) {
    this.min = grow(this.min, n); this.max = grow(this.max, n); this.sum = grow(this.sum, n);
    this.frames = grow(this.frames, n); this.flame = grow(this.flame, n); this.argMax = grow(this.argMax, n);
  }

  bytes() { return this.min.length * 36; }
}

export class Overview {
  // set by clear()
  /** @type {number} */ count;
  /** @type {number} */ stride;
  /** @type {number} */ version;
  /** @type {Float64Array} */ index;
  /** @type {Float64Array} */ start;
  /** @type {Float32Array} */ min;
  /** @type {Float32Array} */ max;
  /** @type {Float32Array} */ sum;
  /** @type {Uint32Array} */ frames;
  /** @type {Uint32Array} */ flame;
  /** @type {Level[]} */ levels;

  /** @param {{maxEntries?: number}} [options] */
  constructor({ maxEntries = OVERVIEW_MAX_ENTRIES } = {}) {
    this.maxEntries = Math.max(64, maxEntries | 0);
    this.clear();
  }

  clear() {
    this.count = 0;
    this.stride = 1;
    this.version = (this.version ?? -1) + 1; // changes with every change, for caches
    this.index = new Float64Array(0); // first frame index of each entry
    this.start = new Float64Array(0); // its start (ns)
    this.min = new Float32Array(0); // frame times (ns)
    this.max = new Float32Array(0);
    this.sum = new Float32Array(0);
    this.frames = new Uint32Array(0);
    this.flame = new Uint32Array(0);
    /** @type {Level[]} level 1 and up (level 0 is the entries themselves) */
    this.levels = [];
  }

  /** @param {number} n */
  ensure(n) {
    this.index = grow(this.index, n); this.start = grow(this.start, n);
    this.min = grow(this.min, n); this.max = grow(this.max, n); this.sum = grow(this.sum, n);
    this.frames = grow(this.frames, n); this.flame = grow(this.flame, n);
  }

  /**
   * Writes entries [first, first + n) from an index (the source's arrays), dropping any after
   * them; a different stride means the source merged its entries: everything is replaced.
   * @param {number} first @param {EntryArrays} e @param {number} n @param {number} stride
   */
  setEntries(first, e, n, stride) {
    if (stride !== this.stride) { if (first !== 0) return false; this.clear(); this.stride = stride; }
    first = Math.min(first, this.count);
    this.ensure(first + n);
    for (let i = 0; i < n; i++) {
      const k = first + i;
      this.index[k] = e.index[i]; this.start[k] = e.start[i];
      this.min[k] = e.min[i]; this.max[k] = e.max[i]; this.sum[k] = e.sum[i];
      this.frames[k] = e.frames[i]; this.flame[k] = e.flame[i];
    }
    this.count = first + n;
    this.rebuild(first);
    return true;
  }

  /**
   * One more frame (a source without an index, e.g. the in-page ring): joins the last entry
   * while it has fewer than `stride` frames, else starts one; at maxEntries, pairs merge.
   * @param {number} frameIndex @param {number} startNs @param {number} durNs @param {boolean} hasFlame
   */
  appendFrame(frameIndex, startNs, durNs, hasFlame) {
    const last = this.count - 1;
    if (last >= 0 && this.frames[last] < this.stride) {
      if (durNs < this.min[last]) this.min[last] = durNs;
      if (durNs > this.max[last]) this.max[last] = durNs;
      this.sum[last] += durNs;
      this.frames[last]++;
      if (hasFlame) this.flame[last]++;
      this.rebuild(last);
      return;
    }
    if (this.count === this.maxEntries) this.coarsen();
    const k = this.count;
    this.ensure(k + 1);
    this.index[k] = frameIndex; this.start[k] = startNs;
    this.min[k] = durNs; this.max[k] = durNs; this.sum[k] = durNs;
    this.frames[k] = 1; this.flame[k] = hasFlame ? 1 : 0;
    this.count = k + 1;
    this.rebuild(k);
  }

  /** Merges entries in pairs (the stride doubles). */
  coarsen() {
    const half = this.count >> 1;
    for (let i = 0; i < half; i++) {
      const a = 2 * i, b = a + 1;
      this.index[i] = this.index[a]; this.start[i] = this.start[a];
      this.min[i] = Math.min(this.min[a], this.min[b]); this.max[i] = Math.max(this.max[a], this.max[b]);
      this.sum[i] = this.sum[a] + this.sum[b];
      this.frames[i] = this.frames[a] + this.frames[b]; this.flame[i] = this.flame[a] + this.flame[b];
    }
    this.count = half;
    this.stride *= 2;
    this.levels = [];
    this.rebuild(0);
  }

  /** Recomputes the pyramid's nodes over entries [from, count). @param {number} from */
  rebuild(from) {
    this.version++;
    let n = this.count, lo = Math.max(0, from);
    /** @type {{min: ArrayLike<number>, max: ArrayLike<number>, sum: ArrayLike<number>, frames: ArrayLike<number>, flame: ArrayLike<number>, argMax: ArrayLike<number> | null}} */
    let below = { min: this.min, max: this.max, sum: this.sum, frames: this.frames, flame: this.flame, argMax: null };
    let l = 0;
    while (n > 1) {
      const m = (n + 1) >> 1;
      const L = this.levels[l] ?? (this.levels[l] = new Level());
      L.ensure(m);
      lo >>= 1;
      for (let i = lo; i < m; i++) {
        const a = 2 * i, b = a + 1;
        const ia = below.argMax ? below.argMax[a] : a;
        if (b < n) {
          const ib = below.argMax ? below.argMax[b] : b;
          L.min[i] = Math.min(below.min[a], below.min[b]);
          const takeB = below.max[b] > below.max[a];
          L.max[i] = takeB ? below.max[b] : below.max[a];
          L.argMax[i] = takeB ? ib : ia;
          L.sum[i] = below.sum[a] + below.sum[b];
          L.frames[i] = below.frames[a] + below.frames[b];
          L.flame[i] = below.flame[a] + below.flame[b];
        } else {
          L.min[i] = below.min[a]; L.max[i] = below.max[a]; L.argMax[i] = ia; L.sum[i] = below.sum[a];
          L.frames[i] = below.frames[a]; L.flame[i] = below.flame[a];
        }
      }
      L.n = m;
      below = L;
      n = m;
      l++;
    }
    this.levels.length = l;
  }

  /**
   * Summary of entries [e0, e1).
   * @param {number} e0 @param {number} e1 @param {RangeSummary} [out]
   * @returns {RangeSummary}
   */
  query(e0, e1, out = { min: Infinity, max: -Infinity, sum: 0, frames: 0, flame: 0, argMax: -1 }) {
    out.min = Infinity; out.max = -Infinity; out.sum = 0; out.frames = 0; out.flame = 0; out.argMax = -1;
    let a = Math.max(0, e0 | 0), b = Math.min(this.count, e1 | 0);
    /** @param {any} L @param {number} i @param {boolean} base */
    const take = (L, i, base) => {
      if (L.min[i] < out.min) out.min = L.min[i];
      if (L.max[i] > out.max) { out.max = L.max[i]; out.argMax = base ? i : L.argMax[i]; }
      out.sum += L.sum[i]; out.frames += L.frames[i]; out.flame += L.flame[i];
    };
    /** @type {any} */
    let L = this;
    let base = true;
    for (let l = 0; a < b; l++) {
      if (a & 1) take(L, a++, base);
      if (b & 1) take(L, --b, base);
      a >>= 1; b >>= 1;
      L = this.levels[l];
      base = false;
      if (!L) break;
    }
    return out;
  }

  /** The entry holding frame `frameIndex` (the last whose first frame is at or before it), -1 when none. @param {number} frameIndex */
  entryOf(frameIndex) {
    let lo = 0, hi = this.count;
    while (lo < hi) { const m = (lo + hi) >> 1; if (this.index[m] <= frameIndex) lo = m + 1; else hi = m; }
    return lo - 1;
  }

  /** Frames covered by the entries. */
  totalFrames() { return this.count ? this.query(0, this.count).frames : 0; }
  /** The first frame index, or NaN. */
  firstFrame() { return this.count ? this.index[0] : NaN; }
  /** The last frame index (the last entry's first plus its frames, which are consecutive but for lost records), or NaN. */
  lastFrame() { return this.count ? this.index[this.count - 1] + this.frames[this.count - 1] - 1 : NaN; }
  /** Start of entry e (ns). @param {number} e */
  startOf(e) { return this.start[Math.max(0, Math.min(this.count - 1, e))]; }
  /** End of the capture as far as known (ns). */
  endNs() { return this.count ? this.start[this.count - 1] + this.sum[this.count - 1] : 0; }

  /** Bytes held (entries and pyramid). */
  bytes() {
    let n = this.index.byteLength + this.start.byteLength + this.min.byteLength + this.max.byteLength + this.sum.byteLength +
      this.frames.byteLength + this.flame.byteLength;
    for (const L of this.levels) n += L.bytes();
    return n;
  }
}

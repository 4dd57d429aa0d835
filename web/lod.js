// @ts-check
// Level of detail for the flame chart: merge, never skip.
//
// The spans of one flame row (one thread, one depth) are sorted by start and do not overlap. Drawing
// each of 100k sub-pixel spans costs 100k canvas calls for a few hundred visible pixels, and skipping
// them instead makes dense regions vanish. So within the visible window:
//   - a span at least one pixel wide is emitted as itself;
//   - narrower spans fall into buckets of half a pixel (about two buckets per pixel, as Perfetto does),
//     keyed by floor((start - t0) / bucketNs); consecutive narrow spans with the same key merge into one
//     item that keeps their extent [first start, last end], their count, their summed duration (busy
//     time) and the site that contributed the most time (its colour).
// Every span in the window lands in exactly one item, so counts and time are conserved (tested).
// Output stays in trace units (ns); the renderer converts to pixels once.

/** @typedef {ReturnType<typeof createLodItems>} LodItems */
/** @typedef {ArrayLike<number>} Numbers */

/**
 * Growable output of lodRow: items [0, n) with start/end (ns), count, busy time, dominant site.
 * @param {number} [capacity]
 */
export function createLodItems(capacity = 256) {
  return {
    n: 0,
    capacity,
    start: new Float64Array(capacity),
    end: new Float64Array(capacity),
    busy: new Float64Array(capacity),
    count: new Uint32Array(capacity),
    site: new Uint32Array(capacity),
    first: new Uint32Array(capacity), // index of the first span of the item in the row
  };
}

/** @param {LodItems} items */
function grow(items) {
  const cap = items.capacity * 2;
  const next = createLodItems(cap);
  next.start.set(items.start); next.end.set(items.end); next.busy.set(items.busy);
  next.count.set(items.count); next.site.set(items.site); next.first.set(items.first);
  next.n = items.n;
  Object.assign(items, next);
}

/**
 * Index range [i0, i1) of the spans of a row that may intersect [t0, t1]: binary searches over
 * `endMax` (prefix maximum of start + duration, non-decreasing even for malformed overlapping rows)
 * and `start` (sorted).
 * @param {Numbers} start @param {Numbers} endMax @param {number} n @param {number} t0 @param {number} t1
 * @returns {[number, number]}
 */
export function visibleRange(start, endMax, n, t0, t1) {
  let lo = 0, hi = n;
  while (lo < hi) { const m = (lo + hi) >> 1; if (endMax[m] < t0) lo = m + 1; else hi = m; }
  const i0 = lo;
  hi = n;
  while (lo < hi) { const m = (lo + hi) >> 1; if (start[m] <= t1) lo = m + 1; else hi = m; }
  return [i0, lo];
}

/**
 * Merges spans [i0, i1) of a row for a view where one pixel is `nsPerPx` ns and the window starts at
 * t0. Appends to `items` (call items.n = 0 first to reuse). Returns items.
 * @param {Numbers} start @param {Numbers} dur @param {Numbers} site @param {number} i0 @param {number} i1
 * @param {number} t0 @param {number} nsPerPx @param {LodItems} items
 */
export function lodRow(start, dur, site, i0, i1, t0, nsPerPx, items) {
  const bucketNs = nsPerPx / 2;
  let open = false; // an open merged bucket is items[items.n - 1]
  let openKey = 0;
  let openMax = 0; // largest single duration in the open bucket (decides its colour)
  for (let i = i0; i < i1; i++) {
    const s = start[i];
    const d = dur[i];
    if (d >= nsPerPx) {
      open = false;
      if (items.n === items.capacity) grow(items);
      const k = items.n++;
      items.start[k] = s; items.end[k] = s + d; items.busy[k] = d;
      items.count[k] = 1; items.site[k] = site[i]; items.first[k] = i;
      continue;
    }
    const key = Math.floor((s - t0) / bucketNs);
    if (open && key === openKey) {
      const k = items.n - 1;
      if (s + d > items.end[k]) items.end[k] = s + d;
      items.busy[k] += d;
      items.count[k]++;
      if (d > openMax) { openMax = d; items.site[k] = site[i]; }
      continue;
    }
    if (items.n === items.capacity) grow(items);
    const k = items.n++;
    items.start[k] = s; items.end[k] = s + d; items.busy[k] = d;
    items.count[k] = 1; items.site[k] = site[i]; items.first[k] = i;
    open = true; openKey = key; openMax = d;
  }
  return items;
}

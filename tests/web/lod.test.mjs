// Level of detail: sub-pixel spans merge into ~2 buckets per pixel; no span is ever skipped, and
// counts and time are conserved.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lodRow, visibleRange, createLodItems } from '../../web/lod.js';
import { mulberry32 } from './synthetic.mjs';

function row(spans) {
  const n = spans.length;
  const start = new Float64Array(n), dur = new Float64Array(n), site = new Uint32Array(n), endMax = new Float64Array(n);
  let m = -Infinity;
  spans.forEach(([s, d, k], i) => { start[i] = s; dur[i] = d; site[i] = k ?? 1; m = Math.max(m, s + d); endMax[i] = m; });
  return { n, start, dur, site, endMax };
}

function randomRow(seed, n) {
  const rng = mulberry32(seed);
  const spans = [];
  let t = 0;
  for (let i = 0; i < n; i++) {
    const d = rng() < 0.9 ? rng() * 50 : rng() * 5000;
    spans.push([t, d, 1 + Math.floor(rng() * 5)]);
    t += d + rng() * 20;
  }
  return row(spans);
}

test('spans at least a pixel wide are emitted one by one', () => {
  const r = row([[0, 10], [20, 10], [40, 10]]);
  const items = lodRow(r.start, r.dur, r.site, 0, r.n, 0, 1, createLodItems(4));
  assert.equal(items.n, 3);
  assert.deepEqual([...items.count.subarray(0, 3)], [1, 1, 1]);
});

test('sub-pixel spans in the same half-pixel bucket merge, keeping count, extent and busy time', () => {
  // 10 ns per pixel -> 5 ns buckets; five 1-ns spans inside [0, 5) merge
  const r = row([[0, 1, 1], [1, 1, 2], [2, 2, 2], [3, 1, 1], [4, 0.5, 1]]);
  const items = lodRow(r.start, r.dur, r.site, 0, r.n, 0, 10, createLodItems(1));
  assert.equal(items.n, 1);
  assert.equal(items.count[0], 5);
  assert.equal(items.start[0], 0);
  assert.equal(items.end[0], 4.5);
  assert.equal(items.busy[0], 5.5);
  assert.equal(items.site[0], 2, 'the bucket takes the colour of its longest span');
});

test('a wide span between narrow ones closes the bucket; later narrow spans start a new one', () => {
  const r = row([[0, 1], [1, 1], [2, 30], [33, 1], [34, 1]]);
  const items = lodRow(r.start, r.dur, r.site, 0, r.n, 0, 10, createLodItems(1));
  assert.deepEqual([...items.count.subarray(0, items.n)], [2, 1, 2]);
});

test('never loses a span: counts and busy time are conserved at every zoom level', () => {
  const r = randomRow(7, 20000);
  const total = r.dur.reduce((a, b) => a + b, 0);
  const extent = r.endMax[r.n - 1];
  for (const px of [100, 1000, 1920, 100000]) {
    const items = lodRow(r.start, r.dur, r.site, 0, r.n, 0, extent / px, createLodItems(16));
    let count = 0, busy = 0;
    for (let k = 0; k < items.n; k++) { count += items.count[k]; busy += items.busy[k]; }
    assert.equal(count, r.n, `count at ${px} px`);
    assert.ok(Math.abs(busy - total) <= total * 1e-12, `busy time at ${px} px`);
    // ~2 buckets per pixel at most, plus the wide spans
    if (px <= 1920) assert.ok(items.n <= 2 * px + r.n * 0.2, `${items.n} items for ${px} px`);
  }
});

test('every span lies inside the item that holds it, and items are ordered', () => {
  const r = randomRow(3, 5000);
  const extent = r.endMax[r.n - 1];
  const items = lodRow(r.start, r.dur, r.site, 0, r.n, 0, extent / 800, createLodItems(16));
  for (let k = 0; k < items.n; k++) {
    const i0 = items.first[k];
    const i1 = k + 1 < items.n ? items.first[k + 1] : r.n;
    assert.equal(i1 - i0, items.count[k]);
    for (let i = i0; i < i1; i++) {
      assert.ok(r.start[i] >= items.start[k] && r.start[i] + r.dur[i] <= items.end[k] + 1e-9);
    }
    if (k > 0) assert.ok(items.start[k] >= items.start[k - 1]);
  }
});

test('visibleRange culls to the window with binary searches (and tolerates overlapping rows)', () => {
  const r = row([[0, 10], [20, 10], [40, 10], [60, 10]]);
  assert.deepEqual(visibleRange(r.start, r.endMax, r.n, 25, 45), [1, 3]);
  assert.deepEqual(visibleRange(r.start, r.endMax, r.n, 100, 200), [4, 4]);
  assert.deepEqual(visibleRange(r.start, r.endMax, r.n, -50, -1), [0, 0]);
  assert.deepEqual(visibleRange(r.start, r.endMax, r.n, 10, 10), [0, 1], 'a span ending exactly at t0 touches the window');
  // overlapping (malformed) row: a long span keeps endMax high
  const o = row([[0, 100], [10, 5], [20, 5]]);
  assert.deepEqual(visibleRange(o.start, o.endMax, o.n, 50, 60), [0, 3]);
});

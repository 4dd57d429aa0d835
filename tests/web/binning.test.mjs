// Plot binning: min/mean/max per pixel bin, so a spike is never hidden; non-finite values flagged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { binSeries, createBins, seriesExtent, binOf, binRange, BIN_NAN, BIN_POS_INF, BIN_NEG_INF } from '../../web/binning.js';

test('a one-sample spike survives binning 100,000 samples into 300 bins', () => {
  const n = 100000;
  const v = new Float64Array(n).fill(1);
  v[54321] = 1000;
  v[777] = -50;
  const bins = binSeries(v, n, 300, createBins());
  let maxBin = -1, minBin = -1;
  for (let b = 0; b < bins.nBins; b++) {
    if (bins.max[b] === 1000) maxBin = b;
    if (bins.min[b] === -50) minBin = b;
  }
  assert.equal(maxBin, binOf(54321, n, 300));
  assert.equal(minBin, binOf(777, n, 300));
  assert.equal(bins.argMax[maxBin], 54321);
  assert.equal(bins.argMin[minBin], 777);
  // the mean stays honest
  assert.ok(bins.mean[maxBin] > 1 && bins.mean[maxBin] < 1000);
});

test('bins cover the samples exactly once (binRange is the inverse of binOf)', () => {
  for (const [n, nb] of [[10, 3], [100, 7], [12345, 1000], [5, 5], [99991, 1280]]) {
    let next = 0;
    for (let b = 0; b < nb; b++) {
      const [i0, i1] = binRange(b, n, nb);
      assert.equal(i0, next);
      for (const i of [i0, i1 - 1]) if (i1 > i0) assert.equal(binOf(i, n, nb), b);
      next = i1;
    }
    assert.equal(next, n);
  }
});

test('counts per bin add up and the mean is the mean', () => {
  const v = Float64Array.from({ length: 1000 }, (_, i) => i);
  const bins = binSeries(v, 1000, 10, createBins());
  let total = 0;
  for (let b = 0; b < 10; b++) {
    total += bins.count[b];
    assert.equal(bins.min[b], b * 100);
    assert.equal(bins.max[b], b * 100 + 99);
    assert.equal(bins.mean[b], b * 100 + 49.5);
  }
  assert.equal(total, 1000);
});

test('NaN and infinities are flagged, not mixed into min/mean/max', () => {
  const v = Float64Array.from([1, NaN, 3, Infinity, 5, -Infinity, 7, 8]);
  const bins = binSeries(v, 8, 2, createBins());
  assert.equal(bins.flags[0], BIN_NAN | BIN_POS_INF);
  assert.equal(bins.flags[1], BIN_NEG_INF);
  assert.equal(bins.min[0], 1); assert.equal(bins.max[0], 3); assert.equal(bins.mean[0], 2);
  assert.equal(bins.min[1], 5); assert.equal(bins.max[1], 8);
  assert.equal(bins.count[0], 2);
});

test('a bin with no finite sample has NaN min/mean/max and count 0', () => {
  const v = Float64Array.from([NaN, NaN, 1, 2]);
  const bins = binSeries(v, 4, 2, createBins());
  assert.equal(bins.count[0], 0);
  assert.ok(Number.isNaN(bins.max[0]));
  assert.equal(bins.argMax[0], -1);
});

test('absent samples (present = 0) are ignored entirely', () => {
  const v = Float64Array.from([100, 1, 2, 3]);
  const present = Uint8Array.from([0, 1, 1, 1]);
  const bins = binSeries(v, 4, 1, createBins(), present);
  assert.equal(bins.max[0], 3);
  assert.equal(bins.count[0], 3);
  const ext = seriesExtent(v, 4, present);
  assert.equal(ext.max, 3);
  assert.equal(ext.last, 3);
});

test('seriesExtent ignores non-finite values and counts them', () => {
  const ext = seriesExtent(Float64Array.from([2, NaN, -1, Infinity]), 4);
  assert.equal(ext.min, -1);
  assert.equal(ext.max, 2);
  assert.equal(ext.nonFinite, 2);
  assert.equal(ext.finite, 2);
  assert.equal(ext.last, Infinity);
  const none = seriesExtent(Float64Array.from([NaN]), 1);
  assert.ok(Number.isNaN(none.min));
});

test('output buffers grow on demand and are reused', () => {
  const bins = createBins(2);
  binSeries(new Float64Array(10), 10, 5, bins);
  assert.ok(bins.capacity >= 5);
  const min = bins.min;
  binSeries(new Float64Array(10), 10, 4, bins);
  assert.equal(bins.min, min);
});

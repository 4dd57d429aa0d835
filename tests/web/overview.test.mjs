// overview.test.mjs: the whole-capture overview (web/overview.js): any range's min, max, sum,
// frame and flame counts and the entry of its maximum equal a scan of the entries; frames
// appended merge in pairs at the bound (no maximum lost); entries from an index replace the
// tail they overlap, a new stride replaces everything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Overview } from '../../web/overview.js';

function lcg(seed) { let s = seed >>> 0; return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32); }

function scan(o, a, b) {
  const r = { min: Infinity, max: -Infinity, sum: 0, frames: 0, flame: 0, argMax: -1 };
  for (let i = a; i < b; i++) {
    r.min = Math.min(r.min, o.min[i]);
    if (o.max[i] > r.max) { r.max = o.max[i]; r.argMax = i; }
    r.sum += o.sum[i]; r.frames += o.frames[i]; r.flame += o.flame[i];
  }
  return r;
}

test('a range query equals a scan of its entries, for any range', () => {
  const rnd = lcg(7);
  const o = new Overview();
  for (let i = 0; i < 5000; i++) o.appendFrame(i, i * 16e6, 16e6 + rnd() * 1e6 + (i === 3333 ? 3e8 : 0), i % 3 === 0);
  assert.equal(o.count, 5000);
  assert.equal(o.stride, 1);
  for (let k = 0; k < 2000; k++) {
    const a = Math.floor(rnd() * 5000), b = a + Math.floor(rnd() * (5001 - a));
    const q = o.query(a, b), s = scan(o, a, b);
    assert.equal(q.frames, s.frames); assert.equal(q.flame, s.flame);
    assert.equal(q.max, s.max); assert.equal(q.min, s.min);
    assert.ok(Math.abs(q.sum - s.sum) <= Math.abs(s.sum) * 1e-9);
    if (b > a) assert.equal(o.max[q.argMax], s.max);
  }
  assert.equal(o.query(0, 5000).argMax, 3333, 'the spike is the maximum');
  assert.equal(o.entryOf(1234.5), 1234);
  assert.equal(o.entryOf(-1), -1);
});

test('appended frames merge in pairs at the bound and keep every maximum', () => {
  const o = new Overview({ maxEntries: 64 });
  for (let i = 0; i < 1000; i++) o.appendFrame(i, i, i === 777 ? 999 : 10, false);
  assert.equal(o.stride, 16);
  assert.ok(o.count <= 64);
  assert.equal(o.totalFrames(), 1000);
  const q = o.query(0, o.count);
  assert.equal(q.max, 999);
  assert.ok(o.index[q.argMax] <= 777 && 777 < o.index[q.argMax] + o.frames[q.argMax]);
  assert.equal(o.lastFrame(), 999);
});

test('entries from an index replace the tail they overlap; a new stride replaces everything', () => {
  const o = new Overview();
  const arrays = (n, at, v) => ({
    index: Array.from({ length: n }, (_, i) => at + i), start: Array.from({ length: n }, (_, i) => (at + i) * 10),
    min: new Array(n).fill(v), max: new Array(n).fill(v), sum: new Array(n).fill(v), frames: new Array(n).fill(1), flame: new Array(n).fill(0),
  });
  o.setEntries(0, arrays(100, 0, 5), 100, 1);
  o.setEntries(99, arrays(10, 99, 7), 10, 1); // the last entry again (it may have grown), and 9 more
  assert.equal(o.count, 109);
  assert.equal(o.query(0, 109).max, 7);
  assert.equal(o.query(0, 99).max, 5);
  const v = o.version;
  assert.equal(o.setEntries(5, arrays(3, 0, 1), 3, 2), false, 'a new stride must start at entry 0');
  assert.equal(o.setEntries(0, arrays(3, 0, 1), 3, 2), true);
  assert.equal(o.count, 3);
  assert.equal(o.stride, 2);
  assert.ok(o.version > v);
});

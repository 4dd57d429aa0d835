// Flame model: rows per thread and depth, sorted, with self time from the end order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildFlameModel, spanAt, MAX_FLAME_DEPTH } from '../../web/flame_model.js';
import { parseFrameView } from '../../web/frame_view.js';
import { encodeFrameView, treeToScopes } from './frame_view_encoder.mjs';

const tree = [{
  site: 1, start: 0, dur: 100, children: [
    { site: 2, start: 10, dur: 30, children: [{ site: 4, start: 12, dur: 5 }, { site: 4, start: 20, dur: 5 }] },
    { site: 3, start: 50, dur: 40 },
  ],
}];

function view(index, start, trees, extra = []) {
  return parseFrameView(encodeFrameView({
    frameIndex: index, startNs: start, durationNs: 100,
    threads: [{ id: 5, scopes: treeToScopes(trees) }, ...extra],
  }));
}

test('rows per depth, sorted by start, with self time = duration - direct children', () => {
  const m = buildFlameModel([{ seq: 0, view: view(0, 0, tree) }]);
  assert.equal(m.lanes.length, 1);
  const rows = m.lanes[0].rows;
  assert.equal(rows.length, 3);
  assert.deepEqual([...rows[0].self], [30]); // 100 - 30 - 40
  assert.deepEqual([...rows[1].start], [10, 50]);
  assert.deepEqual([...rows[1].self], [20, 40]); // 30 - 5 - 5; leaf
  assert.deepEqual([...rows[2].self], [5, 5]);
  assert.equal(m.nScopes, 5);
  assert.equal(m.t0, 0);
  assert.equal(m.t1, 100);
});

test('frames of a range concatenate per row; lanes follow the thread order', () => {
  const shifted = (t) => JSON.parse(JSON.stringify(tree), (k, v) => (k === 'start' ? v + t : v));
  const frames = [0, 1, 2].map((i) => ({
    seq: i, view: view(i, i * 100, shifted(i * 100), [{ id: 1, scopes: [{ start: i * 100, dur: 10, site: 9, depth: 0 }] }]),
  }));
  const m = buildFlameModel(frames, (id) => (id === 1 ? 0 : 1));
  assert.deepEqual(m.lanes.map((l) => l.threadId), [1, 5]);
  assert.deepEqual([...m.lanes[1].rows[0].start], [0, 100, 200]);
  assert.equal(m.nScopes, 18);
  assert.equal(m.frames.length, 3);
  assert.equal(m.t1, 300);
});

test('an out-of-order row is sorted (robust to unexpected input)', () => {
  const v = parseFrameView(encodeFrameView({
    startNs: 0, durationNs: 100,
    threads: [{ id: 0, scopes: [{ start: 50, dur: 5, site: 1, depth: 0 }, { start: 10, dur: 5, site: 2, depth: 0 }] }],
  }));
  const m = buildFlameModel([{ seq: 0, view: v }]);
  assert.deepEqual([...m.lanes[0].rows[0].start], [10, 50]);
  assert.deepEqual([...m.lanes[0].rows[0].site], [2, 1]);
});

test('scopes deeper than the drawing limit are counted, not drawn', () => {
  const v = parseFrameView(encodeFrameView({
    startNs: 0, durationNs: 100,
    threads: [{ id: 0, scopes: [{ start: 0, dur: 5, site: 1, depth: MAX_FLAME_DEPTH + 3 }, { start: 0, dur: 9, site: 1, depth: 0 }] }],
  }));
  const m = buildFlameModel([{ seq: 0, view: v }]);
  assert.equal(m.tooDeep, 1);
  assert.equal(m.lanes[0].rows.length, 1);
});

test('spanAt finds the span under a time', () => {
  const m = buildFlameModel([{ seq: 0, view: view(0, 0, tree) }]);
  const row = m.lanes[0].rows[1];
  assert.equal(spanAt(row, 15), 0);
  assert.equal(spanAt(row, 60), 1);
  assert.equal(spanAt(row, 45), -1);
  assert.equal(spanAt(row, 200), -1);
});

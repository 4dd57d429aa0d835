// Hover aggregation (web/hover.js): the frame under the pointer on the bars, the slowest frame of a
// pixel's bin when frames outnumber pixels, a plot's value or its bin's min/mean/max (non-finite
// flagged), a flame span's name, source, duration and self time; nothing while dragging.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ViewModel } from '../../web/view_model.js';
import { FlameModelCache } from '../../web/flame_selection.js';
import { computeScene } from '../../web/scene.js';
import { computeLayout, FLAME_LANE_HEADER, FLAME_ROW } from '../../web/layout.js';
import { computeHover, frameAtX, columnBinStats } from '../../web/hover.js';
import { binRange } from '../../web/binning.js';
import { makeStore, FIRST_INDEX } from './panel_fixture.mjs';

function scene(store, pointer = null, width = 800) {
  const m = new ViewModel(store);
  if (pointer) m.state.pointer = { ...pointer, clientX: 0, clientY: 0 };
  const columns = store.plotColumns();
  const layout = computeLayout(width, 700, columns.length);
  return computeScene({ state: m.state, frames: m.viewRange(), store, width, height: 700, layout, columns, viewport: [0, 700], flameCache: new FlameModelCache(), threadOrder: (id) => id });
}

test('over the bars: the frame under the pointer and its tooltip', () => {
  const store = makeStore([{ ms: 10 }, { ms: 25, overheadNs: 5000, scopes: true }, { ms: 12 }]);
  const s0 = scene(store);
  const ax = s0.view.axis;
  const s = scene(store, { x: ax.xCenter(1), y: s0.layout.bars.chart.y + 10 });
  assert.equal(s.hover.region, 'bars');
  assert.equal(s.hover.seq, 1);
  assert.equal(s.hover.tip.title, `Frame #${FIRST_INDEX + 1}`);
  assert.deepEqual(s.hover.tip.rows, [['frame time', '25 ms'], ['over budget', '+8.3 ms'], ['vor overhead', '5 µs (0.02%)'], ['scopes', '2']]);
  assert.equal(scene(store, { x: s0.layout.chartX + 1, y: s0.layout.bars.chart.y + 10 }).hover, null, 'left of the frames: nothing');
});

test('frames outnumbering pixels: the slowest frame of the bin, and the bin\'s min/mean/max on a plot', () => {
  const specs = Array.from({ length: 3000 }, (_, i) => ({ ms: i === 1500 ? 90 : 10, loss: i === 1501 ? NaN : i }));
  const store = makeStore(specs, { capacity: 3000 });
  const s0 = scene(store);
  const ax = s0.view.axis;
  assert.ok(ax.binned);
  const b = Math.floor((1500 * ax.bins) / ax.n);
  const x = ax.x0 + b + 0.5;
  const f = frameAtX(store, ax, x);
  const [i0, i1] = binRange(b, ax.n, ax.bins);
  assert.deepEqual(f, { seq: 1500, binFrames: i1 - i0, i0, i1 });
  const bars = scene(store, { x, y: s0.layout.bars.chart.y + 10 }).hover;
  assert.equal(bars.seq, 1500);
  assert.match(bars.tip.note, new RegExp(`^Slowest of ${i1 - i0} frames in this pixel`));

  const loss = s0.layout.plots[1].chart; // plots: memory_mb, loss
  const plot = scene(store, { x, y: loss.y + 5 }).hover;
  assert.equal(plot.region, 'plot');
  assert.equal(plot.tip.title, 'loss');
  const stats = columnBinStats(store, 9, i0, i1);
  const finite = Array.from({ length: i1 - i0 }, (_, k) => i0 + k).filter((q) => q !== 1501);
  assert.deepEqual(stats, { frames: i1 - i0, min: finite[0], max: finite.at(-1), mean: finite.reduce((a, v) => a + v, 0) / finite.length, nonFinite: true });
  assert.deepEqual(plot.tip.rows.at(-1), ['non-finite', 'yes']);
  assert.deepEqual(columnBinStats(store, 9, 5000, 5001), { frames: 1, min: NaN, max: NaN, mean: NaN, nonFinite: false }, 'no values: NaN');
});

test('over the flame chart: the span with its source, duration and self time', () => {
  const store = makeStore([{ ms: 20, scopes: true }]);
  const s0 = scene(store);
  const c = s0.layout.flame.chart;
  const y = c.y + FLAME_LANE_HEADER + FLAME_ROW / 2; // main lane, depth 0: `frame`
  const h = scene(store, { x: c.x + c.w * 0.75, y }).hover;
  assert.equal(h.region, 'flame');
  assert.equal(h.seq, -1);
  assert.equal(h.tip.title, 'frame');
  assert.deepEqual(h.tip.rows, [['source', 'main.c:40'], ['duration', '20 ms'], ['self', '10 ms (50%)'], ['thread', 'main'], ['depth', '0']]);
  const child = scene(store, { x: c.x + c.w * 0.25, y: y + FLAME_ROW }).hover;
  assert.equal(child.tip.title, 'update');
  assert.equal(scene(store, { x: c.x + c.w * 0.75, y: y + FLAME_ROW }).hover, null, 'no span there');
});

test('no hover without a pointer or during a drag', () => {
  const store = makeStore([{}]);
  const s = scene(store);
  const args = { layout: s.layout, axis: s.view.axis, flame: s.flame, columns: s.columns, store, budgetMs: 16.7 };
  const p = { x: s.view.axis.xCenter(0), y: s.layout.bars.chart.y + 5, clientX: 0, clientY: 0 };
  assert.equal(computeHover({ ...args, pointer: null, dragging: false }), null);
  assert.equal(computeHover({ ...args, pointer: p, dragging: true }), null);
  assert.equal(computeHover({ ...args, pointer: p, dragging: false }).seq, 0);
});

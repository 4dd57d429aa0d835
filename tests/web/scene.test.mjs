// The scene (web/scene.js) and the flame chart's selection (web/flame_selection.js): which frame or
// range the flame chart shows and what it says about it, the memoised flame model, the flame window
// and scroll bound, the frame axis of live and zoomed views, the drag selection in frames and the
// plots inside the scrolled viewport.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ViewModel } from '../../web/view_model.js';
import { flameSelection, latestScopeSeq, FlameModelCache, selectionFrames } from '../../web/flame_selection.js';
import { computeScene, flameWindow, MAX_SLOT_PX } from '../../web/scene.js';
import { computeLayout } from '../../web/layout.js';
import { FrameStore } from '../../web/store.js';
import { makeStore, FRAME_STEP_NS } from './panel_fixture.mjs';

const threadOrder = (id) => id;
// frames 100..105: scopes on 101 and 103 (103 is 30 ms), 105 metrics only
const sixFrames = () => makeStore([{}, { scopes: true }, {}, { ms: 30, scopes: true, dropped: 2 }, {}, {}]);

function sceneOf(model, { width = 800, height = 700, viewport = [0, 700], cache = new FlameModelCache() } = {}) {
  const columns = model.store.plotColumns();
  const layout = computeLayout(width, height, columns.length);
  model.reconcile();
  return computeScene({ state: model.state, frames: model.viewRange(), store: model.store, width, height, layout, columns, viewport, flameCache: cache, threadOrder });
}

test('live, the flame chart shows the latest frame with scopes; paused and pinned say so', () => {
  const store = sixFrames();
  const m = new ViewModel(store);
  assert.equal(latestScopeSeq(store, false, 0, 6), 3);
  let sel = flameSelection(m.state, store, 0, 6);
  assert.deepEqual([sel.kind, sel.a, sel.b, sel.key, sel.message], ['frame', 3, 4, 'f:3:1', '']);
  assert.equal(sel.subtitle, 'latest frame #103 · 30 ms · 2 scopes · 2 dropped by the recorder');
  assert.deepEqual(sel.home, [3 * FRAME_STEP_NS, 3 * FRAME_STEP_NS + 30e6]);
  assert.equal(sel.origin, 3 * FRAME_STEP_NS);
  m.pause();
  assert.match(flameSelection(m.state, store, 0, 6).subtitle, /^paused at frame #103/);
  m.pinSeq(1);
  sel = flameSelection(m.state, store, 0, 6);
  assert.match(sel.subtitle, /^pinned frame #101 · 10 ms · 2 scopes$/);
  assert.equal(selectionFrames(sel, store).length, 1);
  m.pinSeq(5);
  sel = flameSelection(m.state, store, 0, 6);
  assert.equal(sel.message, 'Frame #105 carries metrics only (no flame frame was captured for it)');
  assert.equal(selectionFrames(sel, store).length, 0);
});

test('the flame chart explains an empty store, metrics-only frames and released scopes', () => {
  const m0 = new ViewModel(new FrameStore());
  assert.equal(flameSelection(m0.state, m0.store, 0, 0).message, 'Waiting for frames…');
  const metricsOnly = makeStore([{}, {}]);
  assert.match(flameSelection(new ViewModel(metricsOnly).state, metricsOnly, 0, 2).message, /^No frame with scopes yet/);
  // a scope budget of 3: frame 1's two scopes are released when frame 3 brings two more
  const store = makeStore([{}, { scopes: true }, {}, { scopes: true }], { scopeBudget: 3 });
  const m = new ViewModel(store);
  m.pinSeq(1);
  assert.equal(flameSelection(m.state, store, 0, 4).message,
    'The scopes of frame #101 were released to keep memory bounded (scope budget 3)');
});

test('a range selection counts its frames and scopes, names the pinned frame and the frames without scopes', () => {
  const store = sixFrames();
  const m = new ViewModel(store);
  m.zoomRange(1, 5);
  const sel = flameSelection(m.state, store, 1, 5);
  assert.deepEqual([sel.kind, sel.a, sel.b, sel.key], ['range', 1, 5, 'r:1:5:2']);
  assert.equal(sel.subtitle, 'frames #101–#104 (4 frames, 2 with scopes, 4 scopes) · pinned #103 30 ms');
  assert.deepEqual(sel.pinnedSpan, [3 * FRAME_STEP_NS, 3 * FRAME_STEP_NS + 30e6]);
  assert.deepEqual(selectionFrames(sel, store).map((f) => f.seq), [1, 3]);
  m.zoomRange(4, 6);
  assert.equal(flameSelection(m.state, store, 4, 6).message, 'No flame frames in frames #104–#105 (metrics only)');
});

test('the flame model is built once per selection and rebuilt after invalidate()', () => {
  const store = sixFrames();
  const m = new ViewModel(store);
  const cache = new FlameModelCache();
  const sel = flameSelection(m.state, store, 0, 6);
  cache.get(sel, store, threadOrder);
  const model = cache.model;
  assert.equal(model.nScopes, 2);
  assert.equal(cache.lanes.lanes.length, 1);
  cache.get(flameSelection(m.state, store, 0, 6), store, threadOrder);
  assert.equal(cache.model, model, 'same key: not rebuilt');
  cache.invalidate();
  cache.get(sel, store, threadOrder);
  assert.notEqual(cache.model, model, 'rebuilt');
  cache.clear();
  assert.deepEqual([cache.key, cache.model, cache.lanes], ['', null, null]);
});

test('the flame window: home, the user window relative to it, and the scroll bound', () => {
  const store = sixFrames();
  const m = new ViewModel(store);
  const cache = new FlameModelCache();
  const sel = flameSelection(m.state, store, 0, 6);
  cache.get(sel, store, threadOrder);
  const home = 3 * FRAME_STEP_NS;
  let w = flameWindow(sel, cache, m.state, 100);
  assert.deepEqual([w.home, w.t0, w.t1], [[home, home + 30e6], home, home + 30e6]);
  // one lane: header 20 + 2 rows of 18 = 56 px of lanes; a 20 px chart scrolls by 56 - 20 + 8
  w = flameWindow(sel, cache, { ...m.state, scrollY: 500 }, 20);
  assert.deepEqual([w.maxScroll, w.scrollY], [44, 44]);
  w = flameWindow(sel, cache, { ...m.state, flameRel: [1e6, 2e6] }, 100);
  assert.deepEqual([w.t0, w.t1], [home + 1e6, home + 2e6]);
  const none = flameSelection(new ViewModel(makeStore([{}])).state, makeStore([{}]), 0, 1);
  assert.deepEqual(flameWindow(none, new FlameModelCache(), m.state, 100), { home: null, t0: 0, t1: 0, maxScroll: 0, scrollY: 0 });
});

test('the scene: a live axis aligned right with capped slots, a range filling the width', () => {
  const store = sixFrames();
  const m = new ViewModel(store);
  let s = sceneOf(m);
  assert.deepEqual([s.a, s.b, s.view.axis.n, s.view.axis.slot], [0, 6, 6, MAX_SLOT_PX]);
  assert.equal(s.view.axis.x0 + s.view.axis.used, s.layout.chartX + s.layout.chartW, 'newest frame at the right edge');
  assert.equal(s.flame.model.nScopes, 2);
  assert.equal(s.flame.subtitle, 'latest frame #103 · 30 ms · 2 scopes · 2 dropped by the recorder');
  assert.equal(s.hover, null);
  m.zoomRange(1, 5);
  s = sceneOf(m);
  assert.deepEqual([s.a, s.b, s.view.pinned], [1, 5, 3]);
  assert.equal(s.view.axis.slot, s.layout.chartW / 4, 'a range fills the width');
  assert.equal(s.view.axis.x0, s.layout.chartX);
  assert.equal(s.flame.model.nScopes, 4);
  assert.deepEqual(s.view.range, [1, 5]);
});

test('the scene maps the drag selection to frames and draws only the plots in the viewport', () => {
  const store = sixFrames();
  const m = new ViewModel(store);
  m.zoomRange(0, 6);
  let s = sceneOf(m);
  const ax = s.view.axis;
  m.setDragSelection([ax.xCenter(4), ax.x0 - 50]);
  m.setPointer({ x: ax.xCenter(2), y: s.layout.bars.chart.y + 5, clientX: 0, clientY: 0 });
  s = sceneOf(m);
  assert.deepEqual(s.view.dragSel, [4, 0], 'ends clamped into the frames in view');
  assert.equal(s.hover, null, 'no hover while dragging');
  assert.deepEqual(s.columns.map((c) => c.name), ['memory_mb', 'loss']);
  const p1 = s.layout.plots[1];
  s = sceneOf(m, { viewport: [p1.y, p1.y + 10] });
  assert.deepEqual(s.plotVisible, [false, true]);
});

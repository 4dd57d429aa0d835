// The controller (web/controller.js) and the frame loop (web/frame_loop.js): gestures in canvas
// pixels become view-model actions through the last scene (a click pins the frame drawn under it,
// a shift-drag zooms to the frames under its ends, wheel and drag move the flame window); nothing
// happens before the first draw; many requests make one animation-frame callback.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ViewModel } from '../../web/view_model.js';
import { FlameModelCache } from '../../web/flame_selection.js';
import { computeScene } from '../../web/scene.js';
import { computeLayout } from '../../web/layout.js';
import { createController } from '../../web/controller.js';
import { createFrameLoop } from '../../web/frame_loop.js';
import { makeStore, FRAME_STEP_NS } from './panel_fixture.mjs';

function setup() {
  const store = makeStore(Array.from({ length: 10 }, (_, i) => ({ ms: 10 + i, scopes: true })));
  const model = new ViewModel(store);
  let scene = null;
  const draw = () => {
    const columns = store.plotColumns();
    const layout = computeLayout(800, 700, columns.length);
    model.reconcile();
    scene = computeScene({ state: model.state, frames: model.viewRange(), store, width: 800, height: 700, layout, columns, viewport: [0, 700], flameCache, threadOrder: (id) => id });
    model.clampScroll(scene.flame.maxScroll);
    return scene;
  };
  const flameCache = new FlameModelCache();
  let draws = 0;
  const ctl = createController(model, () => scene, () => { draws++; });
  return { store, model, ctl, draw, draws: () => draws };
}

test('before the first draw, pixel gestures do nothing', () => {
  const { model, ctl } = setup();
  assert.equal(ctl.regionAt(100, 100), null);
  ctl.pin(100);
  ctl.selectCommit(10, 500);
  ctl.flamePan(10, 10);
  ctl.flameZoom(100, 0.5);
  assert.deepEqual([model.state.pinned, model.state.range, model.state.flameRel], [-1, null, null]);
});

test('regions, a click pins the frame drawn under it, a shift-drag zooms to its frames', () => {
  const { model, ctl, draw } = setup();
  const s = draw();
  const L = s.layout;
  assert.equal(ctl.regionAt(L.bars.chart.x + 5, L.bars.chart.y + 5), 'bars');
  assert.equal(ctl.regionAt(L.plots[0].chart.x + 5, L.plots[0].chart.y + 5), 'plot');
  assert.equal(ctl.regionAt(L.flame.chart.x + 5, L.flame.chart.y + 5), 'flame');
  assert.equal(ctl.regionAt(1, 1), null);
  ctl.pin(s.view.axis.xCenter(4));
  assert.deepEqual([model.state.pinned, model.state.paused], [4, true]);

  ctl.selectPreview(s.view.axis.xCenter(7), s.view.axis.xCenter(2));
  assert.deepEqual(model.state.dragSel, [s.view.axis.xCenter(7), s.view.axis.xCenter(2)]);
  ctl.selectCommit(s.view.axis.xCenter(7), s.view.axis.xCenter(2));
  assert.equal(model.state.dragSel, null);
  assert.deepEqual(model.state.range, [2, 8]);
  assert.equal(model.state.pinned, 7, 'its slowest frame');
  ctl.selectPreview(1, 2);
  ctl.selectCancel();
  assert.equal(model.state.dragSel, null);
  ctl.resetRange();
  assert.equal(model.state.range, null);
});

test('wheel zooms the flame window around the pointer, drag pans it, double-click resets', () => {
  const { model, ctl, draw } = setup();
  ctl.pin(draw().view.axis.xCenter(5)); // a 15 ms frame
  let s = draw();
  const c = s.layout.flame.chart;
  const home = s.flame.home;
  assert.deepEqual([s.flame.t0, s.flame.t1], [5 * FRAME_STEP_NS, 5 * FRAME_STEP_NS + 15e6]);
  ctl.flameZoom(c.x + c.w * 0.25, 0.5);
  s = draw();
  assert.equal(s.flame.t1 - s.flame.t0, 7.5e6);
  assert.equal(s.flame.t0 + (s.flame.t1 - s.flame.t0) * 0.25, home[0] + 15e6 * 0.25, 'the time under the pointer stays put');
  const before = s.flame.t0;
  ctl.flamePan(c.w / 10, 0);
  s = draw();
  assert.equal(s.flame.t0, before - 0.75e6, 'dragging right by a tenth of the chart shows a tenth earlier');
  ctl.flameReset();
  s = draw();
  assert.deepEqual([s.flame.t0, s.flame.t1], home);
});

test('pointer, pause keys and requestDraw reach the model and the panel', () => {
  const { model, ctl, draws } = setup();
  ctl.hover(3, 4, 30, 40);
  assert.deepEqual(model.state.pointer, { x: 3, y: 4, clientX: 30, clientY: 40 });
  ctl.leave();
  assert.equal(model.state.pointer, null);
  ctl.togglePause();
  assert.equal(model.state.paused, true);
  ctl.resume();
  assert.equal(model.state.paused, false);
  ctl.requestDraw();
  assert.equal(draws(), 1);
});

test('the frame loop: one callback per animation frame, the toolbar alone when only it changed', () => {
  const queued = [];
  const win = { requestAnimationFrame: (cb) => queued.push(cb), cancelAnimationFrame: () => { queued.length = 0; } };
  const calls = [];
  const loop = createFrameLoop(win, { draw: () => calls.push('draw'), toolbar: () => calls.push('toolbar') });
  loop.request('toolbar');
  loop.request('draw');
  loop.request();
  assert.equal(queued.length, 1, 'one callback for three requests');
  queued.shift()();
  assert.deepEqual(calls, ['draw']);
  loop.request('toolbar');
  queued.shift()();
  assert.deepEqual(calls, ['draw', 'toolbar']);
  loop.request('draw');
  loop.drawn(); // a synchronous draw happened meanwhile
  queued.shift()();
  assert.deepEqual(calls, ['draw', 'toolbar'], 'nothing left to draw');
  loop.request('draw');
  assert.equal(loop.pending(), true);
  loop.stop();
  loop.request('draw');
  assert.deepEqual([queued.length, loop.pending()], [0, false], 'stopped: nothing scheduled');
});

// The view model (web/view_model.js): pause freezes the view while the store grows, resume follows
// again and drops the selection, pinning and range zoom (in seqs and by frame_index), the flame
// window's pan/zoom/reset, the silent reconcile with an evicting store, and change notifications.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ViewModel, DEFAULT_BUDGET_MS } from '../../web/view_model.js';
import { makeStore, pushFrames, FRAME_STEP_NS, FIRST_INDEX } from './panel_fixture.mjs';

const tenFrames = () => makeStore(Array.from({ length: 10 }, (_, i) => ({ ms: i === 6 ? 45 : 10 + i })), { capacity: 16 });
function modelOf(store, options = {}) {
  const m = new ViewModel(store, { ...options, onChange: () => { m.changes++; } });
  m.changes = 0;
  return m;
}

test('live, the view is every held frame; paused, it stays at the frames held when it paused', () => {
  const store = tenFrames();
  const m = modelOf(store);
  assert.equal(m.state.budgetMs, DEFAULT_BUDGET_MS);
  assert.deepEqual(m.viewRange(), [0, 10]);
  m.pause();
  assert.equal(m.changes, 1);
  pushFrames(store, [{}, {}, {}]);
  assert.deepEqual(m.viewRange(), [0, 10], 'frozen while the store grows');
  m.pause();
  assert.deepEqual(m.viewRange(), [0, 10], 'pausing again does not move the frozen end');
  pushFrames(store, Array.from({ length: 8 }, () => ({}))); // 21 frames, capacity 16: 0..4 evicted
  assert.deepEqual(m.viewRange(), [5, 10], 'evicted frames leave the frozen view');
  m.resume();
  assert.deepEqual(m.viewRange(), [5, 21]);
  assert.equal(m.state.paused, false);
});

test('pinning pauses, and ignores frames no longer held', () => {
  const store = tenFrames();
  const m = modelOf(store);
  m.state.flameRel = [1, 2];
  m.state.scrollY = 40;
  m.pinSeq(3);
  assert.equal(m.state.paused, true);
  assert.equal(m.state.pinned, 3);
  assert.equal(m.state.flameRel, null, 'outside a range the flame chart shows the frame whole');
  assert.equal(m.state.scrollY, 0);
  assert.ok(m.changes > 0);
  m.pinSeq(42);
  assert.equal(m.state.pinned, 3, 'not held: ignored');
  assert.equal(m.pinFrameIndex(FIRST_INDEX + 7), true);
  assert.equal(m.state.pinned, 7);
  assert.equal(m.pinFrameIndex(5), false);
});

test('a range zoom clamps to the history, pins its slowest frame, and pinning inside it frames that frame', () => {
  const store = tenFrames();
  const m = modelOf(store);
  m.zoomRange(-5, 8);
  assert.deepEqual(m.state.range, [0, 8]);
  assert.equal(m.state.pinned, 6, 'the 45 ms frame');
  assert.equal(m.state.paused, true);
  assert.deepEqual(m.viewRange(), [0, 8]);
  m.zoomRange(30, 40);
  assert.deepEqual(m.state.range, [0, 8], 'a range outside the history is ignored');

  m.zoomFrameIndexRange(FIRST_INDEX + 2, FIRST_INDEX + 5);
  assert.deepEqual(m.state.range, [2, 6]);
  assert.equal(m.state.pinned, 5, 'slowest of 12..15 ms');
  m.pinSeq(4);
  // frame 4 starts 2 frames after the range's first (2): its window relative to the range start
  assert.deepEqual(m.state.flameRel, [2 * FRAME_STEP_NS, 2 * FRAME_STEP_NS + 14e6]);

  m.resetRange();
  assert.equal(m.state.range, null);
  assert.equal(m.state.flameRel, null);
  const n = m.changes;
  m.resetRange();
  assert.equal(m.changes, n, 'nothing to reset: no change');
});

test('resume follows the stream and drops pin, range, flame window and drag', () => {
  const m = modelOf(tenFrames());
  m.zoomRange(2, 6);
  m.state.flameRel = [0, 1];
  m.setDragSelection([10, 50]);
  m.togglePause();
  assert.deepEqual([m.state.paused, m.state.range, m.state.pinned, m.state.flameRel, m.state.dragSel], [false, null, -1, null, null]);
  m.togglePause();
  assert.equal(m.state.paused, true);
});

test('reconcile drops a range and a pin that left the history, silently', () => {
  const store = tenFrames();
  const m = modelOf(store);
  m.zoomRange(1, 3);
  pushFrames(store, Array.from({ length: 10 }, () => ({}))); // first held is now 4
  const n = m.changes;
  assert.deepEqual(m.viewRange(), [4, 10], 'a vanished range falls back to the frozen view');
  assert.equal(m.reconcile(), true);
  assert.equal(m.state.range, null);
  assert.equal(m.state.pinned, -1);
  assert.equal(m.changes, n, 'no notification: the draw that reconciles shows it');
  assert.equal(m.reconcile(), false);
});

test('new frames redraw live, and while paused only when the frozen view lost frames', () => {
  const store = tenFrames();
  const m = modelOf(store);
  assert.equal(m.frameArrivalRedraws(null), true);
  m.pause();
  assert.equal(m.frameArrivalRedraws(null), false, 'nothing drawn yet');
  assert.equal(m.frameArrivalRedraws(0), false);
  pushFrames(store, Array.from({ length: 7 }, () => ({}))); // 17 frames, capacity 16: frame 0 evicted
  assert.equal(m.frameArrivalRedraws(0), true);
});

test('the flame window pans, zooms around the anchor, stays near its home and resets', () => {
  const m = modelOf(tenFrames());
  const w = { t0: 1000, t1: 2000, home: /** @type {[number, number]} */ ([1000, 2000]), maxScroll: 50 };
  m.zoomFlame(w, 1500, 0.5);
  assert.deepEqual(m.state.flameRel, [250, 750], 'half as wide, centred on the anchor');
  m.panFlame({ ...w, t0: 1250, t1: 1750 }, 100, -30);
  assert.deepEqual(m.state.flameRel, [350, 850]);
  assert.equal(m.state.scrollY, 30, 'dragging up scrolls the lanes down');
  m.panFlame({ ...w, t0: 1250, t1: 1750 }, 1e6, -500);
  assert.deepEqual(m.state.flameRel, [750, 1250], 'the window goes at most half its width past its home');
  assert.equal(m.state.scrollY, 50, 'scroll within maxScroll');
  m.zoomFlame(w, 1500, 1e-9);
  assert.equal(m.state.flameRel[1] - m.state.flameRel[0], 20, 'no narrower than 20 ns');
  m.clampScroll(10);
  assert.equal(m.state.scrollY, 10);
  m.resetFlame();
  assert.deepEqual([m.state.flameRel, m.state.scrollY], [null, 0]);
});

test('budget, overhead toggle, pointer and clearing notify; clearing keeps the pause', () => {
  const m = modelOf(tenFrames());
  m.setBudget(33.3);
  m.toggleOverhead();
  m.setPointer({ x: 1, y: 2, clientX: 3, clientY: 4 });
  assert.equal(m.changes, 3);
  m.clearPointer();
  m.clearPointer();
  assert.equal(m.changes, 4, 'clearing an absent pointer changes nothing');
  assert.deepEqual([m.state.budgetMs, m.state.showOverhead, m.state.pointer], [33.3, true, null]);
  m.zoomRange(2, 5);
  m.state.scrollY = 12;
  m.clearSelection();
  assert.deepEqual([m.state.range, m.state.pinned, m.state.flameRel, m.state.frozenEnd, m.state.scrollY, m.state.paused], [null, -1, null, 0, 0, true]);
});

test('a shift-drag holds the axis from its start: frames arriving meanwhile do not move it, and the range committed is the one previewed', () => {
  const store = tenFrames();
  const m = modelOf(store);
  m.setDragSelection([10, 20]);
  assert.equal(m.state.held, true);
  assert.equal(m.frozen(), true);
  pushFrames(store, [{ ms: 11 }, { ms: 12 }]);
  assert.deepEqual(m.viewRange(), [0, 10], 'the frames on the axis when the drag started');
  assert.equal(m.frameArrivalRedraws(0), false);
  m.setDragSelection([10, 40]);
  assert.deepEqual(m.viewRange(), [0, 10]);
  m.setDragSelection(null);
  m.zoomRange(2, 5); // what the controller commits, in the held axis's frames
  assert.deepEqual(m.state.range, [2, 5]);
  assert.equal(m.state.held, false);
  assert.equal(m.state.paused, true);
  m.resume();
  assert.deepEqual(m.viewRange(), [0, 12]);
  m.setDragSelection([1, 2]);
  m.clearSelection(); // a new capture drops a drag in progress
  assert.equal(m.state.held, false);
  assert.equal(m.state.dragSel, null);
});

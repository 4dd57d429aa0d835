// Text trimming and its measurement cache; axis mapping, ticks, window zoom/pan and formatting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { trimText, createTextMeasurer, ELLIPSIS } from '../../web/text.js';
import { linearScale, frameAxis, niceStep, ticks, niceCeil, formatNs, formatMs, formatValue, zoomWindow, panWindow } from '../../web/axis.js';

// a monospace "font": every character 7 px, the ellipsis 5 px
const mono = (s) => [...s].reduce((w, ch) => w + (ch === ELLIPSIS ? 5 : 7), 0);

test('text that fits is returned unchanged', () => {
  assert.equal(trimText('update', 42, mono), 'update');
  assert.equal(trimText('update', 100, mono), 'update');
});

test('text that does not fit keeps the longest prefix that fits with an ellipsis', () => {
  assert.equal(trimText('physics_step', 40, mono), 'physi…'); // 5*7 + 5 = 40 <= 40 < 6*7 + 5
  assert.equal(trimText('physics_step', 39, mono), 'phys…');
  const t = trimText('solve_contacts_in_parallel', 100, mono);
  assert.ok(mono(t) <= 100);
  assert.ok(t.endsWith(ELLIPSIS));
  assert.equal(t, 'solve_contact…'); // 13 * 7 + 5 = 96
});

test('nothing is drawn when not even one character and the ellipsis fit', () => {
  assert.equal(trimText('update', 11, mono), '');
  assert.equal(trimText('update', 0, mono), '');
  assert.equal(trimText('', 100, mono), '');
});

test('trailing spaces are not left before the ellipsis', () => {
  assert.equal(trimText('abc  defgh', 33, mono), 'abc…'); // 'abc ' fits, its space is dropped
});

test('the measurer caches widths per font and clears when devicePixelRatio changes', () => {
  let calls = 0;
  const m = createTextMeasurer((font, s) => { calls++; return mono(s) * (font === 'big' ? 2 : 1); }, { font: 'small' });
  m.setScale(1);
  assert.equal(m.width('abc'), 21);
  assert.equal(m.width('abc'), 21);
  assert.equal(calls, 1);
  assert.equal(m.width('abc', 'big'), 42);
  assert.equal(calls, 2);
  m.setScale(1); // unchanged: cache kept
  m.width('abc');
  assert.equal(calls, 2);
  m.setScale(2); // changed: cleared
  m.width('abc');
  assert.equal(calls, 3);
  assert.equal(m.trim('physics_step', 39), 'phys…');
});

test('the measurer cache is bounded', () => {
  const m = createTextMeasurer((f, s) => s.length, { maxEntries: 100 });
  for (let i = 0; i < 1000; i++) m.width(`name${i}`);
  assert.ok(m.size <= 100);
});

test('linearScale maps both ways', () => {
  const s = linearScale(100, 200, 0, 500);
  assert.equal(s.toPx(150), 250);
  assert.equal(s.fromPx(500), 200);
  assert.equal(linearScale(5, 5, 10, 20).toPx(5), 10);
});

test('frameAxis lays frames out in slots, right-aligned and capped when few', () => {
  const a = frameAxis({ first: 100, end: 110, left: 10, width: 1000, maxSlotPx: 14 });
  assert.equal(a.slot, 14);
  assert.equal(a.x0, 10 + 1000 - 140);
  assert.equal(a.xOf(100), a.x0);
  assert.equal(a.seqAt(a.x0 + 14 * 3 + 1), 103);
  assert.equal(a.seqAt(a.x0 - 1), -1);
  assert.equal(a.seqAt(a.x0 + 140), -1);
  assert.equal(a.binned, false);
  assert.equal(a.seqNear(-1000), 100);
  assert.equal(a.seqNear(99999), 109);
});

test('frameAxis bins when frames outnumber pixels', () => {
  const a = frameAxis({ first: 0, end: 10000, left: 0, width: 1000, alignRight: false });
  assert.equal(a.binned, true);
  assert.equal(a.bins, 1000);
  assert.equal(a.seqAt(500.5), 5005);
  const z = frameAxis({ first: 0, end: 3, left: 0, width: 300, alignRight: false });
  assert.equal(z.slot, 100);
  assert.equal(z.x0, 0);
});

test('nice steps, ticks and ceilings', () => {
  assert.equal(niceStep(10, 5), 2);
  assert.equal(niceStep(1e6, 4), 2e5);
  assert.equal(niceStep(7, 1), 5);
  assert.deepEqual(ticks(0, 10, 5), [0, 2, 4, 6, 8, 10]);
  assert.deepEqual(ticks(3, 9, 3), [4, 6, 8]);
  assert.equal(niceCeil(16.7 * 1.25), 25);
  assert.equal(niceCeil(48), 50);
  assert.equal(niceCeil(0), 1);
});

test('durations and values are formatted with units, non-finite spelled out', () => {
  assert.equal(formatNs(850), '850 ns');
  assert.equal(formatNs(12345), '12.3 µs');
  assert.equal(formatNs(4.567e6), '4.57 ms');
  assert.equal(formatNs(1.5e9), '1.5 s');
  assert.equal(formatMs(16.7), '16.7 ms');
  assert.equal(formatMs(0.25), '0.25 ms');
  assert.equal(formatValue(NaN), 'NaN');
  assert.equal(formatValue(Infinity, 'x'), '+∞ x');
  assert.equal(formatValue(-Infinity), '−∞');
  assert.equal(formatValue(183.456, 'MB'), '183.5 MB');
  assert.equal(formatValue(12345.6), '12,346');
  assert.equal(formatValue(2.5e-5), '2.50e-5');
});

test('zoomWindow keeps the anchor in place and respects limits', () => {
  const [a, b] = zoomWindow(0, 1000, 250, 0.5);
  assert.equal(b - a, 500);
  assert.equal((250 - a) / (b - a), 0.25);
  const [c, d] = zoomWindow(0, 100, 50, 0.0001, { minSpan: 20 });
  assert.equal(d - c, 20);
  const [e, f] = zoomWindow(0, 1000, 500, 100, { bounds: [0, 1000] });
  assert.ok(f - e <= 1200 + 1e-9);
});

test('panWindow moves the window but keeps it near the data', () => {
  assert.deepEqual(panWindow(0, 100, 50, [0, 1000]), [50, 150]);
  const [a, b] = panWindow(0, 100, -5000, [0, 1000]);
  assert.equal(b - a, 100);
  assert.ok(b > 0, 'part of the data stays in view');
});

test('layout: bars and plots share the chart x/width; plots shrink to leave the flame chart room', async () => {
  const { computeLayout, PLOT_HEIGHT, PLOT_MIN_HEIGHT, FLAME_MIN_HEIGHT } = await import('../../web/layout.js');
  const big = computeLayout(1280, 1000, 5);
  for (const p of big.plots) {
    assert.equal(p.chart.x, big.bars.chart.x);
    assert.equal(p.chart.w, big.bars.chart.w);
  }
  assert.equal(big.plots[0].h, PLOT_HEIGHT);
  assert.ok(big.flame.h >= 1000 * 0.4);
  const small = computeLayout(800, 560, 5);
  assert.ok(small.plots[0].h < PLOT_HEIGHT && small.plots[0].h >= PLOT_MIN_HEIGHT);
  assert.ok(small.flame.h >= FLAME_MIN_HEIGHT);
  const many = computeLayout(800, 600, 40);
  assert.equal(many.plots[0].h, PLOT_MIN_HEIGHT);
  assert.ok(many.totalHeight > 600, 'the canvas grows and the panel scrolls');
  assert.equal(computeLayout(800, 600, 0).plots.length, 0);
});

// Reading the panel (issue 12, "Reading"): the bars' y axis fitted to the data (and log), the x
// axis's frame numbers with times, ruler labels that tell neighbouring ticks apart at any zoom, units
// and a single label for a flat series on the plots' right axis, correct plurals, no name shown as a
// lone letter, and the untracked time of a frame (not covered by its top-level scopes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { trimText, plural, ELLIPSIS } from '../../web/text.js';
import { timeTickLabels, plotAxisLabels } from '../../web/axis.js';
import { barsScale, frameTicks, nextBarsScale } from '../../web/bars_axis.js';
import { untrackedTime, laneSummary, gapAt } from '../../web/untracked.js';
import { untrackedTooltip } from '../../web/tooltip.js';
import { ViewModel } from '../../web/view_model.js';
import { makeStore } from './panel_fixture.mjs';

const mono = (s) => [...s].reduce((w, ch) => w + (ch === ELLIPSIS ? 5 : 7), 0);

test('plurals: one scope, 2 scopes, 12,500 frames', () => {
  assert.equal(plural(1, 'scope'), '1 scope');
  assert.equal(plural(0, 'scope'), '0 scopes');
  assert.equal(plural(2, 'scope'), '2 scopes');
  assert.equal(plural(12500, 'frame'), '12,500 frames');
  assert.equal(plural(1, 'match', 'matches'), '1 match');
});

test('a trimmed name keeps at least three characters, or is hidden (never "m…")', () => {
  assert.equal(trimText('matmul', 19, mono), ''); // 'm…' would fit (12 px)
  assert.equal(trimText('matmul', 25, mono), ''); // 'ma…' (19 px) would fit
  assert.equal(trimText('matmul', 26, mono), 'mat…');
  assert.equal(trimText('ab', 14, mono), 'ab'); // a short name that fits whole is shown
  assert.equal(trimText('ab', 13, mono), '');
});

test('ruler labels tell neighbouring ticks apart at any zoom, from a shown base when deep', () => {
  // 1 ms ticks 26.5 s from the origin: not "+26.5 s" three times
  const mid = timeTickLabels([26.5e9, 26.501e9, 26.502e9], 1e6);
  assert.deepEqual(mid.labels, ['+26.500 s', '+26.501 s', '+26.502 s']);
  // 1 µs ticks there: the first tick carries the base, the others the offset from it
  const deep = timeTickLabels([26.500001e9, 26.500002e9, 26.500003e9], 1e3);
  assert.equal(new Set(deep.labels).size, 3);
  assert.deepEqual(deep.labels, ['+26.500001 s', '+1 µs', '+2 µs']);
  assert.equal(deep.baseText, '+26.500001 s');
  // the usual case stays short
  assert.deepEqual(timeTickLabels([0, 2e6, 4e6], 2e6).labels, ['0', '+2 ms', '+4 ms']);
  assert.deepEqual(timeTickLabels([-1e6, 0, 1e6], 1e6).labels, ['−1 ms', '0', '+1 ms']);
});

test('the bars\' y axis fits the frame times in view, so sub-millisecond variation fills it', () => {
  const fit = barsScale('fit', 16.2, 17.1, 16.7);
  assert.ok(fit.lo > 15 && fit.lo <= 16.2, `bottom ${fit.lo}`);
  assert.ok(fit.hi >= 17.1 && fit.hi < 18, `top ${fit.hi}`);
  assert.ok(fit.frac(17.1) - fit.frac(16.2) > 0.6, '0.9 ms spans most of the height');
  assert.ok(fit.ticks.every((t) => t.label.endsWith(' ms')), 'tick labels carry the unit');
  assert.equal(new Set(fit.ticks.map((t) => t.label)).size, fit.ticks.length, 'no two ticks read the same');
  // a flat series still gets distinct labels
  const flat = barsScale('fit', 16.6, 16.6, 16.7);
  assert.equal(new Set(flat.ticks.map((t) => t.label)).size, flat.ticks.length);
  // the earlier scale, from zero with the budget
  const budget = barsScale('budget', 16.2, 17.1, 16.7);
  assert.equal(budget.lo, 0);
  assert.ok(budget.hi >= 16.7 * 1.25);
  assert.ok(budget.frac(17.1) - budget.frac(16.2) < 0.05, 'the same variation is a few pixels there');
  // log: a 278 ms spike and 0.3 ms frames both readable
  const log = barsScale('log', 0.3, 278, 16.7);
  assert.ok(log.lo <= 0.3 && log.hi >= 278);
  assert.ok(log.frac(1) > 0.15 && log.frac(100) < 0.9);
  assert.deepEqual(log.ticks.map((t) => t.label), ['0.1 ms', '1 ms', '10 ms', '100 ms', '1000 ms']);
  const narrow = barsScale('log', 16.4, 16.9, 16.7);
  assert.deepEqual([narrow.lo, narrow.hi], [10, 100], 'one decade around the data, not two');
  assert.equal(nextBarsScale('fit'), 'budget');
  assert.equal(nextBarsScale('budget'), 'log');
  assert.equal(nextBarsScale('log'), 'fit');
});

test('the view model starts with the fitted scale and switches modes', () => {
  const store = makeStore([]);
  let changes = 0;
  const m = new ViewModel(store, { onChange: () => changes++ });
  assert.equal(m.state.barsScale, 'fit');
  m.setBarsScale('log');
  assert.equal(m.state.barsScale, 'log');
  m.setBarsScale('log');
  assert.equal(changes, 1);
});

test('the x axis labels frame numbers and their time since the capture\'s first frame', () => {
  const ticks = frameTicks({
    first: 0, end: 1000, count: 5, indexOf: (s) => s + 100, startOf: (s) => 5e9 + s * 16.67e6, originNs: 5e9,
  });
  assert.ok(ticks.length >= 4);
  assert.deepEqual(ticks.map((t) => t.frame), ['#200', '#400', '#600', '#800', '#1,000']);
  assert.deepEqual(ticks.map((t) => t.time), ['+1.7 s', '+5.0 s', '+8.3 s', '+11.7 s', '+15.0 s']);
  // a few frames far into a capture: distinct times, not "+26.7 s" five times
  const deep = frameTicks({ first: 0, end: 10, count: 5, indexOf: (s) => s + 1600, startOf: (s) => (s + 1600) * 16.67e6, originNs: 0 });
  assert.equal(new Set(deep.map((t) => t.time)).size, deep.length);
});

test('plot right axis: units on both labels, a flat series labelled once', () => {
  assert.deepEqual(plotAxisLabels(3.5, 12.25, 100, 'MB'), [{ text: '12.25 MB', at: 'top' }, { text: '3.5 MB', at: 'bottom' }]);
  assert.deepEqual(plotAxisLabels(12.12, 12.12, 100, 'ms'), [{ text: '12.12 ms', at: 'middle' }]);
  assert.deepEqual(plotAxisLabels(12.121, 12.124, 100, 'ms'), [{ text: '12.12 ms', at: 'middle' }]);
  assert.deepEqual(plotAxisLabels(Infinity, -Infinity, 0, 'ms'), [{ text: 'no data', at: 'middle' }]);
  assert.deepEqual(plotAxisLabels(0, 5, 3), [{ text: '5', at: 'top' }, { text: '0', at: 'bottom' }]);
});

/** A frame view with the fields untrackedTime reads: per thread [ended [start, dur, depth]...], open [start...]. */
function view(startNs, durationNs, threads) {
  const v = { startNs, durationNs, threadIds: [], threadFirst: [], threadScopeCounts: [], threadOpenCounts: [], scopeStart: [], scopeDuration: [], scopeDepth: [] };
  for (const [id, ended, open = []] of threads) {
    v.threadIds.push(id); v.threadFirst.push(v.scopeStart.length); v.threadScopeCounts.push(ended.length); v.threadOpenCounts.push(open.length);
    for (const [s, d, depth] of ended) { v.scopeStart.push(s); v.scopeDuration.push(d); v.scopeDepth.push(depth); }
    open.forEach((s, depth) => { v.scopeStart.push(s); v.scopeDuration.push(0); v.scopeDepth.push(depth); });
  }
  return v;
}

test('untracked time: the frame outside its top-level scopes, per thread', () => {
  // a 278 ms spike frame whose scopes cover 3 ms at its start: 275 ms untracked
  const spike = view(1000e6, 278e6, [[0, [[1000e6, 1e6, 1], [1000e6, 3e6, 0]]]]);
  const u = untrackedTime([{ seq: 0, view: spike }]).get(0);
  assert.deepEqual(u.gaps, [1003e6, 1278e6]);
  assert.equal(u.totalNs, 275e6);
  assert.equal(laneSummary(2, 2, u), '2 scopes · depth 2 · untracked 275 ms (99%)');
  assert.equal(laneSummary(1, 1, undefined), '1 scope · depth 1');
  // overlapping and clipped scopes, a gap between them, an open scope covering the frame's end
  const f = view(0, 100, [
    [0, [[-10, 30, 0], [10, 30, 0], [50, 10, 0]], [80]],
    [1, []],
  ]);
  const m = untrackedTime([{ seq: 0, view: f }, { seq: 1, view: view(100, 50, [[0, [[100, 50, 0]]]]) }]);
  assert.deepEqual(m.get(0).gaps, [40, 50, 60, 80]);
  assert.equal(m.get(0).totalNs, 30);
  assert.equal(m.get(0).frameNs, 150);
  assert.deepEqual(m.get(1).gaps, [0, 100], 'a thread without scopes: all of its frame');
  // the gap under a pointer (hover): binary search over the gaps in time order
  assert.deepEqual(gapAt(m.get(0), 45), [40, 50]);
  assert.deepEqual(gapAt(m.get(0), 60), [60, 80]);
  assert.equal(gapAt(m.get(0), 55), null);
  assert.equal(gapAt(m.get(0), 120), null);
  const tip = untrackedTooltip({ durNs: 275e6, threadName: 'main' });
  assert.equal(tip.title, 'untracked');
  assert.deepEqual(tip.rows, [['duration', '275 ms'], ['thread', 'main']]);
});

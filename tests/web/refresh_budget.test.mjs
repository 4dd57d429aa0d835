// The example page's budget (issue 12, "Example page"): a frame there is one animation frame, so its
// time is the display's refresh interval, jittering around the period. A fixed 16.7 ms budget flagged
// about half of the normal 60 Hz frames; the budget that follows the refresh (1.5 periods) flags only
// the frames that missed a refresh.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { refreshPeriodMs, budgetForRefresh, followRefreshRate } from '../../web/refresh_budget.js';
import { mulberry32 } from './synthetic.mjs';

/** rAF intervals at `hz` with ±0.6 ms jitter, and a missed refresh every 50th frame. */
function intervals(hz, n, seed = 7) {
  const rnd = mulberry32(seed);
  const p = 1000 / hz;
  return Array.from({ length: n }, (_, i) => (i % 50 === 49 ? 2 * p : p) + (rnd() - 0.5) * 1.2);
}

test('the refresh period is the median interval; the budget is 1.5 periods', () => {
  assert.ok(Math.abs(refreshPeriodMs(intervals(60, 120)) - 16.667) < 0.2);
  assert.ok(Math.abs(refreshPeriodMs(intervals(144, 120)) - 6.944) < 0.2);
  assert.ok(Number.isNaN(refreshPeriodMs([16, 17])), 'too few intervals');
  assert.equal(budgetForRefresh(1000 / 60), 25);
  assert.equal(budgetForRefresh(1000 / 120), 12.5);
});

test('normal 60 Hz frames are under the budget, missed refreshes over it (16.7 ms flagged about half)', () => {
  const iv = intervals(60, 600);
  const budget = budgetForRefresh(refreshPeriodMs(iv));
  const over = (b) => iv.filter((v) => v > b).length;
  assert.ok(over(16.7) > 600 * 0.35, `a fixed 16.7 ms budget flags ${over(16.7)} of 600`);
  assert.equal(over(budget), 12, 'only the 12 frames that missed a refresh');
});

test('followRefreshRate sets the panel\'s budget from animation frames and follows a new display', () => {
  /** @type {((t: number) => void)[]} */
  let queue = [];
  const win = { requestAnimationFrame: (f) => { queue.push(f); return queue.length; }, cancelAnimationFrame: () => { queue = []; } };
  const budgets = [];
  const stop = followRefreshRate({ setBudget: (ms) => budgets.push(ms) }, win);
  let t = 0;
  const run = (hz, n) => {
    for (const dt of intervals(hz, n)) { t += dt; const q = queue; queue = []; for (const f of q) f(t); }
  };
  run(60, 100);
  assert.deepEqual(budgets, [25]);
  run(120, 200);
  assert.equal(budgets[budgets.length - 1], 12.5, `budgets set: ${budgets}`);
  assert.ok(budgets.length <= 6, 'set again only when the period changed');
  stop();
  assert.equal(queue.length, 0);
});

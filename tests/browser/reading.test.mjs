// Reading the panel (issue 12, "Reading") in headless Chromium, fed frame views built in the page:
// the bars' y axis fitted to the frame times in view (a 0.5 ms variation spans the bars; the budget
// scale and the log scale on request), the x axis's frame numbers with times, the untracked time of
// a spike frame shaded and counted, ruler labels that tell ticks apart deep in a long range, the
// plots' right-axis labels with units. Pixels are read from the canvas; screenshots of each state go
// to build/screenshots/reading-*.png (VOR_SCREENSHOT_DIR overrides).
//
// Run: node tests/browser/reading.test.mjs

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { failWithoutBrowser, openPanelFixture, canvasRegionStats, hexToRgb, nextFrames, screenshot } from './harness.mjs';

await failWithoutBrowser('browser_reading');
const shotDir = process.env.VOR_SCREENSHOT_DIR || fileURLToPath(new URL('../../build/screenshots', import.meta.url));
const { THEME } = await import(new URL('../../web/colors.js', import.meta.url).href);
const CANVAS = '.vor-canvas';

/** @type {Awaited<ReturnType<typeof openPanelFixture>>} */
let fx;
let page, errors;
before(async () => {
  fx = await openPanelFixture();
  ({ page, errors } = fx);
});
after(async () => { await fx?.close(); });

const shot = (name) => screenshot(page, path.join(shotDir, `reading-${name}.png`));
const state = () => page.evaluate(() => window.vorTest.panel.viewState());
const regions = () => page.evaluate(() => window.vorTest.panel.regions());
async function draw() { await nextFrames(page, 2); await page.evaluate(() => window.vorTest.panel.draw()); }

/**
 * Feeds frames built in the page: `ms[i]` is frame i's time; `scopes(i, startNs, durNs)` its main
 * thread's scopes (ended, in end order). Columns: frame_ms, a flat `queue_ms` and a varying `memory_mb`.
 */
async function feed(ms, { withScopes = true, startIndex = 0 } = {}) {
  return page.evaluate(({ ms, withScopes, startIndex }) => {
    const { panel, source, encodeFrameView } = window.vorTest;
    source.pushDeclarations(JSON.stringify({
      columns: [
        { id: 0, name: 'frame_ms', unit: 'ms', system: true },
        { id: 1, name: 'memory_mb', unit: 'MB', system: true },
        { id: 5, name: 'queue_ms', unit: 'ms', system: false },
      ],
      sites: [
        { id: 1, name: 'step', function: 'step', file: 'loop.c', line: 10 },
        { id: 2, name: 'matmul_tiled_kernel', function: 'matmul_tiled_kernel', file: 'mm.c', line: 20 },
      ],
      threads: [{ id: 0, name: 'main' }],
    }));
    let t = 1e9 + startIndex * 16.7e6;
    for (let i = 0; i < ms.length; i++) {
      const dur = ms[i] * 1e6;
      // a 3 ms step at the frame's start, with one kernel inside it
      const threads = withScopes ? [{ id: 0, scopes: [
        { start: t + 0.2e6, dur: 1.5e6, site: 2, depth: 1, parent: 1 },
        { start: t, dur: Math.min(3e6, dur), site: 1, depth: 0 },
      ] }] : [];
      source.pushFrame(encodeFrameView({
        frameIndex: startIndex + i, startNs: t, durationNs: dur, threads, overheadNs: 0.2e6,
        values: [[0, ms[i]], [1, 200 + (i % 50)], [5, 12.12]],
      }));
      t += dur;
    }
    panel.draw();
    return panel.viewState().frames;
  }, { ms, withScopes, startIndex });
}

/** Height (px) of frame `index`'s bar: its column's pixels in the bar colours. */
async function barHeight(index) {
  const r = await regions();
  const x = await page.evaluate((i) => window.vorTest.panel.xOfFrameIndex(i), index);
  const s = await canvasRegionStats(page, CANVAS, { x: Math.round(x), y: r.bars.chart.y, w: 1, h: r.bars.chart.h });
  return s.count(hexToRgb(THEME.barOk), 10) + s.count(hexToRgb(THEME.barOver), 10) + s.count(hexToRgb(THEME.barBad), 10);
}

test('the bars\' y axis fits the frame times: a 0.5 ms variation spans the bars (budget and log on request)', async () => {
  const ms = Array.from({ length: 120 }, (_, i) => (i % 2 ? 16.9 : 16.4));
  assert.equal(await feed(ms), 120);
  await draw();
  const s = await state();
  assert.equal(s.barsScale.mode, 'fit');
  assert.ok(s.barsScale.lo > 15 && s.barsScale.hi < 18, `fitted to 16.4..16.9: ${s.barsScale.lo}..${s.barsScale.hi}`);
  assert.ok(s.barsScale.ticks.every((l) => / ms$/.test(l)), `units on the y labels: ${s.barsScale.ticks}`);
  const [low, high] = [await barHeight(100), await barHeight(101)];
  const r = await regions();
  assert.ok(high - low > r.bars.chart.h * 0.4, `16.4 vs 16.9 ms: ${low} px vs ${high} px of ${r.bars.chart.h}`);
  // x axis: frame numbers and times
  assert.ok(s.xTicks.length >= 3);
  for (const t of s.xTicks) assert.match(t, /^#\d[\d,]* (0|\+\d+(\.\d+)? (s|ms))$/);
  assert.equal(await page.textContent('.vor-yscale'), 'y: fit');
  await shot('fit');
  // the profiler's cost (0.2 ms a frame) is the top of each bar: visible on the fitted scale too
  await page.click('.vor-overhead');
  await draw();
  const x = await page.evaluate(() => window.vorTest.panel.xOfFrameIndex(101));
  const col = await canvasRegionStats(page, CANVAS, { x: Math.round(x), y: r.bars.chart.y, w: 1, h: r.bars.chart.h });
  const ohPx = col.count(hexToRgb(THEME.barOverhead), 10);
  const expected = 0.2 / (s.barsScale.hi - s.barsScale.lo) * r.bars.chart.h;
  assert.ok(Math.abs(ohPx - expected) <= 2, `overhead ${ohPx} px, ${expected.toFixed(1)} expected`);
  await shot('fit-overhead');
  await page.click('.vor-overhead');

  await page.click('.vor-yscale');
  await draw();
  assert.equal((await state()).barsScale.mode, 'budget');
  const [bLow, bHigh] = [await barHeight(100), await barHeight(101)];
  assert.ok(bHigh - bLow <= 4, `the budget scale from zero: ${bLow} px vs ${bHigh} px`);
  await shot('budget-scale');

  await page.click('.vor-yscale');
  await draw();
  const lg = await state();
  assert.equal(lg.barsScale.mode, 'log');
  assert.deepEqual([lg.barsScale.lo, lg.barsScale.hi], [10, 100], 'the decade around 16.4..16.9 ms');
  assert.equal(await page.textContent('.vor-yscale'), 'y: log');
  await shot('log-scale');
  await page.click('.vor-yscale');
  await draw();
  assert.equal((await state()).barsScale.mode, 'fit');
});

test('a spike frame: its untracked time is shaded and labelled, the lane says how much', async () => {
  await page.evaluate(() => { window.vorTest.panel.clear(); });
  const ms = Array.from({ length: 60 }, (_, i) => (i === 40 ? 278 : 16.6));
  await feed(ms);
  await page.evaluate(() => window.vorTest.panel.pinFrameIndex(40));
  await draw();
  const s = await state();
  assert.equal(s.pinnedFrameIndex, 40);
  assert.equal(s.untracked.length, 1);
  assert.equal(s.untracked[0].ns, 275e6, '278 ms frame, 3 ms of scopes');
  const r = await regions();
  // lane header (20 px) then the first row (18 px): the untracked band covers most of its width
  const row = { x: r.flame.chart.x, y: r.flame.chart.y + 20 + 4, w: r.flame.chart.w, h: 10 };
  const px = await canvasRegionStats(page, CANVAS, row);
  const shaded = px.count(hexToRgb(THEME.untracked), 3) / row.h;
  assert.ok(shaded > r.flame.chart.w * 0.9, `untracked band ${shaded} px of ${r.flame.chart.w}`);
  assert.ok(px.count(hexToRgb(THEME.untrackedText), 40) > 20, 'its label is drawn');
  // hovering the band says what it is
  const o = await page.evaluate(() => { const b = document.querySelector('.vor-canvas').getBoundingClientRect(); return [b.left, b.top]; });
  await page.mouse.move(o[0] + row.x + row.w / 2, o[1] + row.y + 4);
  await draw();
  const tip = await page.evaluate(() => { const t = document.querySelector('.vor-tooltip'); return t.hidden ? '' : t.textContent; });
  assert.match(tip, /^untracked.*duration\s*275 ms.*thread\s*main/s);
  await shot('untracked-hover');
  await page.mouse.move(0, 0);
  await shot('untracked');
});

test('the ruler labels tell ticks apart deep in a long range', async () => {
  await page.evaluate(() => { window.vorTest.panel.clear(); });
  await feed(Array.from({ length: 1700 }, () => 16.6));
  await page.evaluate(() => window.vorTest.panel.zoomFrameIndexRange(0, 1699));
  await draw();
  const r = await regions();
  // zoom the flame chart around frame 1600 (26.6 s into the range) until the window is under 100 µs
  const x = r.flame.chart.x + r.flame.chart.w * (1600 / 1700);
  const y = r.flame.chart.y + 40;
  const o = await page.evaluate(() => { const b = document.querySelector('.vor-canvas').getBoundingClientRect(); return [b.left, b.top]; });
  await page.mouse.move(o[0] + x, o[1] + y);
  for (let k = 0; k < 60; k++) {
    await page.mouse.wheel(0, -400);
    const w = (await state()).flameWindowNs;
    if (w && w[1] - w[0] < 100e3) break;
  }
  await draw();
  const s = await state();
  assert.ok(s.flameWindowNs[1] - s.flameWindowNs[0] < 100e3, `deep zoom: ${s.flameWindowNs[1] - s.flameWindowNs[0]} ns`);
  assert.ok(s.rulerLabels.length >= 3, `${s.rulerLabels}`);
  assert.equal(new Set(s.rulerLabels).size, s.rulerLabels.length, `distinct ruler labels: ${s.rulerLabels}`);
  await shot('deep-ruler');
  assert.deepEqual(errors, []);
});

// The DevTools entry budget keeps Chrome's trace buffer from overflowing.
//
// An instrumented library makes thousands of scopes per frame; in User Timing mode each is a
// performance.measure, and a DevTools recording of a few hundred such frames fills Chrome's trace
// buffer: the trace ends with dataLossOccurred and the frames after the buffer filled are gone.
// Headless Chromium runs 40 frames of 3,001 scopes each (devtools_scenes.c, scenes_heavy_frame:
// `heavy` holding 300 `long_leaf` of 30 us and 2,700 empty `short_leaf`) while a DevTools trace
// records, as the Performance panel records (recordUntilFull), into a buffer scaled down from
// Chrome's default (BUFFER_KB below):
//   - with the default budget (500 entries per frame): no data loss, every frame on the Frames
//     track with its count left out, and per frame exactly the 500 longest scopes (heavy, every
//     long_leaf, then short leaves), each nested in heavy;
//   - with the budget off (the check that the scene does overflow the buffer): data loss;
//   - Module.vorDevtools.setEntryBudget(n) sets it from the page (applied at the next frame), and
//     fast mode shows the count left out in the frame entry's data.
//
// Run: node tests/devtools/budget.test.mjs   (ctest: devtools_budget, from the native build)

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { browserUnavailableReason, serveDirectory, launchBrowser } from '../browser/harness.mjs';
import { startTrace, userTimingEntries, timeStampEntries } from './trace.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const siteDir = process.env.VOR_DEVTOOLS_SITE || path.join(repo, 'build/wasm/tests/devtools/site');

const missing = await browserUnavailableReason();
if (missing) {
  console.error(`# FAIL devtools_budget: ${missing} (run scripts/setup.sh)`);
  process.exit(1);
}
if (!fs.existsSync(path.join(siteDir, 'devtools_scenes.mjs'))) {
  console.error(`# FAIL devtools_budget: ${siteDir}/devtools_scenes.mjs is missing (build the wasm flavour: sh scripts/build-wasm.sh)`);
  process.exit(1);
}

const FRAMES = 40;
const LEAVES = 3000;            // + heavy: 3,001 scopes a frame
const LONG = LEAVES / 10;       // long_leaf scopes a frame
const BUDGET = 500;             // VOR_BROWSER_DEFAULT_ENTRY_BUDGET
// A trace buffer of 30 MB, 1/7 of Chrome's default (measured: the default holds about 450,000 of
// vor's measures, this one about 65,000), so the recordings stay short: 40 frames without the
// budget make 120,000 measures and overflow it, as 150 frames overflow the default one; with the
// budget they make 20,000, as 900 frames (15 s at 60 fps) of the default buffer's 450,000.
const BUFFER_KB = 30000;

let browser, server, page, cdp;
const results = {};

before(async () => {
  server = await serveDirectory(siteDir, {
    mounts: { '/fixtures/': path.join(here, 'fixtures') },
    routes: { '/favicon.ico': (req, res) => { res.writeHead(204); res.end(); } },
  });
  browser = await launchBrowser();
  page = await browser.context.newPage();
  await page.goto(`${server.url}fixtures/devtools.html?build=devtools_scenes`);
  await page.waitForFunction(() => window.scenesReady === true || window.scenesError !== undefined);
  assert.equal(await page.evaluate(() => window.scenesError), undefined);
  cdp = await page.context().newCDPSession(page);
  await page.evaluate(() => window.scenes.start());

  // 1. the default budget, user-timing mode
  let rec = await startTrace(cdp, undefined, undefined, { bufferKb: BUFFER_KB });
  results.defaultBudget = await page.evaluate(({ FRAMES, LEAVES }) => {
    const s = window.scenes;
    const budget = s.getEntryBudget();
    s.heavyFrames(FRAMES, LEAVES);
    return budget;
  }, { FRAMES, LEAVES });
  const events = await rec.stop();
  results.budgetedLoss = rec.dataLoss();
  results.ut = userTimingEntries(events);

  // 2. the page's setter, in fast mode
  rec = await startTrace(cdp, undefined, undefined, { bufferKb: BUFFER_KB });
  results.fastBudget = await page.evaluate(({ LEAVES }) => {
    const s = window.scenes;
    s.setMode('fast');
    s.api.setEntryBudget(40);
    s.heavyFrames(2, LEAVES); // the first frame applies the request
    return s.getEntryBudget();
  }, { LEAVES });
  results.ts = timeStampEntries(await rec.stop());
  const thrown = await page.evaluate(() => {
    const out = [];
    for (const bad of [-1, 1.5, 2 ** 32, NaN, '3']) {
      try { window.scenes.api.setEntryBudget(bad); out.push('accepted'); } catch (e) { out.push(e.name); }
    }
    return out;
  });
  results.thrown = thrown;

  // 3. the check that the scene overflows Chrome's buffer without the budget (the trace is not read)
  rec = await startTrace(cdp, undefined, undefined, { bufferKb: BUFFER_KB });
  await page.evaluate(({ FRAMES, LEAVES }) => {
    const s = window.scenes;
    s.setMode('user-timing');
    s.setEntryBudget(0);
    s.heavyFrames(FRAMES, LEAVES);
  }, { FRAMES, LEAVES });
  await rec.discard();
  results.unbudgetedLoss = rec.dataLoss();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test('the default budget is 500 entries per frame, and the recording loses nothing', () => {
  assert.equal(results.defaultBudget, BUDGET);
  assert.equal(results.budgetedLoss, false, 'dataLossOccurred with the budget');
});

test('every frame is on the Frames track with its count left out; each shows the 500 longest scopes, nested', () => {
  const frames = results.ut.filter((e) => e.track === 'Frames');
  assert.equal(frames.length, FRAMES, 'every frame recorded');
  const byFrame = new Map();
  for (const e of results.ut) {
    if (e.track !== 'main') continue;
    const k = e.properties.get('frame');
    if (!byFrame.has(k)) byFrame.set(k, []);
    byFrame.get(k).push(e);
  }
  for (const f of frames) {
    const k = f.properties.get('frame');
    assert.equal(f.properties.get('scopes'), String(LEAVES + 1));
    assert.equal(f.properties.get(`left out (entry budget ${BUDGET})`), String(LEAVES + 1 - BUDGET), `frame ${k}: count left out`);
    assert.match(f.devtools.tooltipText, new RegExp(`${LEAVES + 1 - BUDGET} scopes left out by the entry budget`));
    const scopes = byFrame.get(k) ?? [];
    assert.equal(scopes.length, BUDGET, `frame ${k}: ${scopes.length} entries`);
    const heavy = scopes.filter((e) => e.name === 'heavy');
    assert.equal(heavy.length, 1);
    assert.equal(scopes.filter((e) => e.name === 'long_leaf').length, LONG, `frame ${k}: every long scope kept`);
    assert.equal(scopes.filter((e) => e.name === 'short_leaf').length, BUDGET - 1 - LONG);
    for (const e of scopes) {
      if (e === heavy[0]) continue;
      assert.ok(heavy[0].start < e.start && e.end <= heavy[0].end, `frame ${k}: ${e.name} inside heavy`);
    }
  }
});

test('Module.vorDevtools.setEntryBudget sets it from the page; fast mode shows the count left out', () => {
  assert.equal(results.fastBudget, 40);
  const frames = results.ts.filter((e) => e.track === 'Frames');
  assert.equal(frames.length, 2);
  for (const f of frames) {
    const data = JSON.parse(f.data.devtools);
    assert.equal(data[`left out (entry budget 40)`], String(LEAVES + 1 - 40));
    const mine = results.ts.filter((e) => e.track === 'main' && f.start <= e.start && e.end <= f.end);
    assert.equal(mine.length, 40, `${f.name}: 40 entries`);
    assert.equal(mine.filter((e) => e.name === 'heavy').length, 1);
    // the 39 longest leaves: the long ones, unless a short one was preempted past 30 us (then it
    // rightly takes a place)
    const shorts = mine.filter((e) => e.name === 'short_leaf');
    assert.equal(mine.filter((e) => e.name === 'long_leaf').length + shorts.length, 39);
    for (const e of shorts) assert.ok(e.end - e.start >= 29, `a short leaf of ${e.end - e.start} us beat a 30 us one`);
  }
  assert.deepEqual(results.thrown, ['RangeError', 'RangeError', 'RangeError', 'RangeError', 'RangeError']);
});

test('without the budget the same recording overflows Chrome\'s trace buffer (the scene is big enough)', () => {
  assert.equal(results.unbudgetedLoss, true);
});

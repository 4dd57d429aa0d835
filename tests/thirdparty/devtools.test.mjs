// devtools.test.mjs: the third-party drivers built for a page, with the whole library compiled
// with -finstrument-functions (zstd: ~40,000 scopes a step; Lua: its error and coroutine steps
// included), run in headless Chromium while a DevTools trace records, as the Performance panel
// records (recordUntilFull), into a trace buffer scaled down from Chrome's default as in
// tests/devtools/budget.test.mjs (30 MB holds about 65,000 of vor's entries; the default about
// 450,000, i.e. the 8 zstd steps here are 1/8 of the default buffer's load at 64 steps):
//   - with the default entry budget: no dataLossOccurred, every step's frame on the Frames track
//     (indices 0 .. STEPS-1), each frame's scopes within the budget (500 longest, plus their
//     ancestors) and the count left out on the frame entry; the program ran to its end;
//   - zstd with the budget off: the same run loses data (the check that the load is real).
//
//   node tests/thirdparty/devtools.test.mjs WASM_BIN   (ctest: thirdparty_devtools)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { browserUnavailableReason, serveDirectory, launchBrowser } from '../browser/harness.mjs';
import { startTrace, userTimingEntries } from '../devtools/trace.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const [binDir] = process.argv.slice(2);
const STEPS = 8;
const BUDGET = 500;        // VOR_BROWSER_DEFAULT_ENTRY_BUDGET
const BUFFER_KB = 30000;
const LIBS = { zstd: 'zstd_driver', lua: 'lua_driver' };

const missing = await browserUnavailableReason();
if (missing) {
  console.error(`# FAIL thirdparty_devtools: ${missing} (run scripts/setup.sh)`);
  process.exit(1);
}
for (const lib of Object.keys(LIBS)) {
  if (!binDir || !fs.existsSync(path.join(binDir, `${lib}_whole_web.mjs`))) {
    console.error(`# FAIL thirdparty_devtools: ${binDir}/${lib}_whole_web.mjs is missing (tests/thirdparty/build.sh)`);
    process.exit(1);
  }
}

let browser, server;
const runs = {};

async function record(lib, budget, read = true) {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`${server.url}fixtures/driver.html?lib=${lib}`);
  await page.waitForFunction(() => window.ready === true || window.failed !== undefined);
  assert.equal(await page.evaluate(() => window.failed), undefined);
  const cdp = await page.context().newCDPSession(page);
  const rec = await startTrace(cdp, undefined, undefined, { bufferKb: BUFFER_KB });
  const result = await page.evaluate(({ args, budget }) => window.runDriver(args, budget), { args: ['--steps', String(STEPS)], budget });
  const events = read ? await rec.stop() : (await rec.discard(), []);
  await page.close();
  return { ...result, errors, dataLoss: rec.dataLoss(), entries: userTimingEntries(events) };
}

before(async () => {
  server = await serveDirectory(path.join(here), { mounts: { '/bin/': binDir } });
  browser = await launchBrowser();
  for (const lib of Object.keys(LIBS)) runs[lib] = await record(lib, null);
  runs.zstdUnbudgeted = await record('zstd', 0, false);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

for (const [lib, thread] of Object.entries(LIBS)) {
  test(`${lib}: the default budget keeps every frame, without data loss`, () => {
    const run = runs[lib];
    assert.deepEqual(run.errors, []);
    assert.equal(run.status, 0, run.out.join('\n'));
    assert.ok(run.out.some((l) => /^checksum [0-9a-f]{16}$/.test(l)), run.out.join('\n'));
    assert.equal(run.dataLoss, false, 'dataLossOccurred');
    const frames = run.entries.filter((e) => e.track === 'Frames');
    assert.deepEqual(frames.map((f) => Number(f.properties.get('frame'))).sort((a, b) => a - b),
      [...Array(STEPS).keys()], 'every frame on the Frames track');
    const byFrame = new Map();
    for (const e of run.entries) {
      if (e.track !== thread) continue;
      const k = e.properties.get('frame');
      if (!byFrame.has(k)) byFrame.set(k, []);
      byFrame.get(k).push(e);
    }
    assert.ok(byFrame.size > 0, `no scope on the ${thread} track`);
    const perFrame = new Map([...byFrame].map(([k, es]) => [k, es.length]));
    // The budget picks the 500 longest, then adds their ancestors (a scope is never shown
    // without its parent): the shown scopes that contain no other shown scope are within it.
    for (const [k, es] of byFrame) {
      const leaves = es.filter((e) => !es.some((f) => f !== e && e.start <= f.start && f.end <= e.end));
      assert.ok(leaves.length <= BUDGET, `frame ${k}: ${leaves.length} innermost entries, over the budget`);
    }
    if (lib === 'zstd') {
      for (const f of frames) {
        const k = f.properties.get('frame');
        const scopes = Number(f.properties.get('scopes'));
        assert.ok(scopes > BUDGET, `frame ${k}: ${scopes} scopes (the workload should exceed the budget)`);
        assert.equal(Number(f.properties.get(`left out (entry budget ${BUDGET})`)), scopes - perFrame.get(k), `frame ${k}: count left out`);
      }
    }
  });
}

test('zstd: without the budget the same recording overflows the buffer (the load is real)', () => {
  assert.equal(runs.zstdUnbudgeted.status, 0);
  assert.equal(runs.zstdUnbudgeted.dataLoss, true);
});

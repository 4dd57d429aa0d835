// Browser clocks in DevTools: every scope reaches the vor tracks whatever its length, and the
// clock's resolution is detected and shown.
//
// performance.now() moves in 5 us steps on a cross-origin isolated page and 100 us steps on one
// that is not, so most scopes of a busy frame measure zero. Chromium writes a zero-length
// performance.measure as an instant, which the DevTools trace engine drops: on the example page
// 22 of 180 `gradients` scopes reached the tracks in User Timing mode. Headless Chromium loads
// fixtures/devtools.html twice, served with COOP/COEP and without, and runs frames of 60
// zero-length `gradients { optimizer_step }` pairs inside a `step` (devtools_scenes.c,
// scenes_burst_frame) in both modes while a DevTools trace records. The trace is read by the
// DevTools trace engine (npm @paulirish/trace_engine, the Performance panel's own model), and:
//   - every scope of every frame is an entry on the "main" track, nested as the program nests it
//     (the engine's own tree), at least one clock step wide, inside its frame's entry;
//   - the Frames track says the step and whether the page is isolated (User Timing: a property;
//     fast mode: the entry's data);
//   - the page that is not isolated gets exactly one console warning naming the two headers; the
//     isolated one gets none.
//
// Run: node tests/devtools/clock.test.mjs   (ctest: devtools_clock, from the native build)

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { browserUnavailableReason, serveDirectory, launchBrowser } from '../browser/harness.mjs';
import { startTrace, traceEngineEntries } from './trace.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const siteDir = process.env.VOR_DEVTOOLS_SITE || path.join(repo, 'build/wasm/tests/devtools/site');

const missing = await browserUnavailableReason();
if (missing) {
  console.error(`# FAIL devtools_clock: ${missing} (run scripts/setup.sh)`);
  process.exit(1);
}
if (!fs.existsSync(path.join(siteDir, 'devtools_scenes.mjs'))) {
  console.error(`# FAIL devtools_clock: ${siteDir}/devtools_scenes.mjs is missing (build the wasm flavour: sh scripts/build-wasm.sh)`);
  process.exit(1);
}

const PAIRS = 60;       // gradients { optimizer_step } per frame
const FRAMES = 3;       // per mode
const SPIN_MS = 14;     // room after the scopes: 120 steps of 100 us fit
const SLACK_US = 1;     // the trace's own rounding to whole microseconds

let browser;
const servers = [];
const runs = {};

async function run(isolation) {
  const server = await serveDirectory(siteDir, {
    isolation,
    mounts: { '/fixtures/': path.join(here, 'fixtures') },
    routes: { '/favicon.ico': (req, res) => { res.writeHead(204); res.end(); } },
  });
  servers.push(server);
  const page = await browser.context.newPage();
  const console_ = [];
  page.on('console', (msg) => console_.push({ type: msg.type(), text: msg.text() }));
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`${server.url}fixtures/devtools.html?build=devtools_scenes`);
  await page.waitForFunction(() => window.scenesReady === true || window.scenesError !== undefined);
  assert.equal(await page.evaluate(() => window.scenesError), undefined);
  const cdp = await page.context().newCDPSession(page);
  const rec = await startTrace(cdp);
  const isolated = await page.evaluate(({ FRAMES, PAIRS, SPIN_MS }) => {
    const s = window.scenes;
    s.start();
    s.setMode('user-timing');
    s.burstFrames(FRAMES, PAIRS, SPIN_MS);
    s.setMode('fast');
    s.burstFrames(FRAMES, PAIRS, SPIN_MS);
    return crossOriginIsolated;
  }, { FRAMES, PAIRS, SPIN_MS });
  await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 50)));
  const events = await rec.stop();
  await page.close();
  return { isolated, entries: await traceEngineEntries(events), console: console_, errors };
}

before(async () => {
  browser = await launchBrowser();
  runs.isolated = await run(true);
  runs.plain = await run(false);
});

after(async () => {
  await browser?.close();
  for (const s of servers) await s.close();
});

const cases = [
  ['a cross-origin isolated page', 'isolated', true, 5, /^5 µs steps \(cross-origin isolated\)$/],
  ['a page that is not cross-origin isolated', 'plain', false, 100, /^100 µs steps \(not cross-origin isolated/],
];

for (const [label, key, isolated, stepUs, clockText] of cases) {
  test(`${label}: the clock's ${stepUs} µs step is detected and shown on the Frames track in both modes`, () => {
    const r = runs[key];
    assert.equal(r.isolated, isolated);
    assert.deepEqual(r.errors, []);
    const frames = r.entries.filter((e) => e.track === 'Frames');
    assert.equal(frames.length, 2 * FRAMES, 'one entry per frame');
    for (const f of frames) {
      assert.equal(f.group, 'vor');
      const props = f.devtools.properties ? new Map(f.devtools.properties) : null;
      const clock = props ? props.get('clock') : f.userDetail?.clock; // user-timing: properties; fast: the data
      assert.match(String(clock), clockText, `${f.name}: clock shown`);
      const wide = props ? props.get('zero-length scopes drawn') : f.userDetail?.['zero-length scopes drawn'];
      assert.equal(wide, `${stepUs} µs wide`, `${f.name}: the width of a zero-length scope`);
      const overhead = props ? props.get('vor overhead') : f.userDetail?.['vor overhead'];
      assert.match(String(overhead), / µs$/, 'microseconds are written µs');
    }
  });

  test(`${label}: every scope of every frame is on the track, nested, one step wide, inside its frame`, () => {
    const r = runs[key];
    const frames = r.entries.filter((e) => e.track === 'Frames').sort((a, b) => a.start - b.start);
    const scopes = r.entries.filter((e) => e.track === 'main');
    for (const e of scopes) assert.equal(e.group, 'vor');
    let assigned = 0;
    for (const f of frames) {
      const mine = scopes.filter((e) => f.start <= e.start && e.end <= f.end);
      assigned += mine.length;
      const count = (name) => mine.filter((e) => e.name === name).length;
      assert.deepEqual([count('step'), count('gradients'), count('optimizer_step')], [1, PAIRS, PAIRS],
        `${f.name}: every scope inside the frame's entry`);
      for (const e of mine) {
        assert.ok(e.inTree, `${e.name}: placed in the engine's tree`);
        assert.ok(e.end - e.start >= stepUs - SLACK_US, `${e.name} is ${e.end - e.start} us wide, under one ${stepUs} us step`);
        const expected = { step: null, gradients: 'step', optimizer_step: 'gradients' }[e.name];
        assert.equal(e.parent?.name ?? null, expected, `${e.name} nests under ${expected}`);
      }
      const gradients = mine.filter((e) => e.name === 'gradients').sort((a, b) => a.start - b.start);
      for (let i = 1; i < gradients.length; i++) assert.ok(gradients[i - 1].end <= gradients[i].start, 'gradients in order, apart');
    }
    assert.equal(assigned, scopes.length, 'no scope outside a frame');
    assert.equal(scopes.length, 2 * FRAMES * (1 + 2 * PAIRS));
  });
}

test('a page that is not cross-origin isolated gets one console warning naming the headers; an isolated one none', () => {
  const warnings = (r) => r.console.filter((m) => m.type === 'warning' && m.text.startsWith('vor: performance.now()'));
  const plain = warnings(runs.plain);
  assert.equal(plain.length, 1, plain.map((m) => m.text).join('\n'));
  assert.match(plain[0].text, /100 µs steps/);
  assert.match(plain[0].text, /Cross-Origin-Opener-Policy: same-origin/);
  assert.match(plain[0].text, /Cross-Origin-Embedder-Policy: require-corp/);
  assert.equal(warnings(runs.isolated).length, 0);
});

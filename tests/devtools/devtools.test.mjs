// DevTools sink test: vor's scopes on custom tracks of the Chrome DevTools Performance panel.
//
// Headless Chromium loads fixtures/devtools.html, which runs devtools_scenes.c (built by the wasm
// flavour into build/wasm/tests/devtools/site/; VOR_DEVTOOLS_SITE overrides). While the page runs
// frames in each mode, the test records a DevTools trace over CDP exactly as the Performance panel
// does, then reads the entries back out of it and checks, frame by frame, against the C program's
// known scopes: exact names and counts per thread track, nesting (children inside their parents on
// the same track, siblings in order), durations at least the program's busy-waits, every scope
// inside its frame's entry on the "Frames" track, the track group, colours (the DevTools palette,
// one per site, the FNV-1a hash of the name), the minimum-duration filter, the settings from C
// and from Module.vorDevtools, the metrics on frame entries (memory_mb, wasm_heap_mb, no GPU), a
// bounded User Timing buffer that keeps the page's own entries, PerformanceObserver delivery, the
// pthreads build (one track per thread), a browser without performance.measure (the sink turns off
// and says so once), and node (where the sink is off by default).
//
// Run: node tests/devtools/devtools.test.mjs   (ctest: devtools_tracks, from the native build)
// Without Chromium, playwright-core or the wasm build it fails, saying why.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { browserUnavailableReason, serveDirectory, launchBrowser, collectPageErrors } from '../browser/harness.mjs';
import { startTrace, userTimingEntries, userTimingMarks, timeStampEntries } from './trace.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const siteDir = process.env.VOR_DEVTOOLS_SITE || path.join(repo, 'build/wasm/tests/devtools/site');

const missing = await browserUnavailableReason();
if (missing) {
  console.error(`# FAIL devtools_tracks: ${missing} (run scripts/setup.sh)`);
  process.exit(1);
}
for (const f of ['devtools_scenes.mjs', 'devtools_scenes.wasm', 'devtools_scenes_mt.mjs', 'devtools_scenes_mt.worker.js', 'devtools_scenes_node.cjs']) {
  if (!fs.existsSync(path.join(siteDir, f))) {
    console.error(`# FAIL devtools_tracks: ${path.join(siteDir, f)} is missing (build the wasm flavour: sh scripts/build-wasm.sh)`);
    process.exit(1);
  }
}

// ---- What the C program does (devtools_scenes.c) ------------------------------------------------

const MAIN_SCOPES = { update: 1, physics: 1, collide: 1, render: 1, draw_batch: 3, tiny: 1 };
const MAIN_SCOPES_LONG = { update: 1, physics: 1, collide: 1, render: 1, draw_batch: 3 }; // tiny usually < 100 us
const LOADER_SCOPES = { load_chunk: 1, decode: 1 };
// Lower bounds of each scope's duration in us (its own busy-waits and its children's), minus slack
// for the 5 us resolution of performance.now() in a cross-origin isolated page.
const MIN_US = { update: 1350, physics: 700, collide: 300, render: 650, draw_batch: 150, load_chunk: 500, decode: 200 };
const SLACK_US = 12;
const PALETTE = ['primary', 'primary-light', 'primary-dark', 'secondary', 'secondary-light', 'secondary-dark',
  'tertiary', 'tertiary-light', 'tertiary-dark'];

/** The colour devtools.js must give a site named `name` (FNV-1a over UTF-16 units, mod 9). */
function expectedColor(name) {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return PALETTE[(h >>> 0) % PALETTE.length];
}

function counts(entries) {
  const c = {};
  for (const e of entries) c[e.name] = (c[e.name] ?? 0) + 1;
  return c;
}

const inside = (child, parent) => parent.start <= child.start && child.end <= parent.end;

/**
 * Entries of one thread track by frame, for console.timeStamp entries (which carry no frame
 * index): each goes to the first frame, in time order, whose entry contains it. A zero-length
 * scope ending exactly at a frame boundary (tiny, the last scope of a frame) is thus in the frame
 * it ended in, as vor recorded it. Returns Map(frame index -> entries).
 */
function byFrame(entries, track) {
  const frames = entries.filter((e) => e.track === 'Frames').sort((a, b) => a.start - b.start);
  const out = new Map(frames.map((f) => [Number(f.name.replace('frame ', '')), []]));
  for (const e of entries) {
    if (e.track !== track) continue;
    const f = frames.find((fr) => inside(e, fr));
    if (f) out.get(Number(f.name.replace('frame ', ''))).push(e);
  }
  return out;
}
const one = (entries, name) => {
  const found = entries.filter((e) => e.name === name);
  assert.equal(found.length, 1, `exactly one ${name}`);
  return found[0];
};

/** The main thread's scopes of one frame nest as the C program nests them. */
function checkMainNesting(entries, label) {
  const update = one(entries, 'update');
  const physics = one(entries, 'physics');
  const collide = one(entries, 'collide');
  const render = one(entries, 'render');
  const batches = entries.filter((e) => e.name === 'draw_batch').sort((a, b) => a.start - b.start);
  for (const e of [physics, render, ...batches, collide]) assert.ok(inside(e, update), `${label}: ${e.name} inside update`);
  assert.ok(inside(collide, physics), `${label}: collide inside physics`);
  assert.ok(physics.end <= render.start, `${label}: physics before render`);
  for (const b of batches) assert.ok(inside(b, render), `${label}: draw_batch inside render`);
  for (let i = 1; i < batches.length; i++) assert.ok(batches[i - 1].end <= batches[i].start, `${label}: draw_batch ${i} after ${i - 1}`);
  const tiny = entries.find((e) => e.name === 'tiny');
  if (tiny) {
    assert.ok(inside(tiny, update), `${label}: tiny inside update`);
    assert.ok(render.end <= tiny.start, `${label}: tiny after render`);
  }
}

function checkDurations(entries, label) {
  for (const e of entries) {
    if (MIN_US[e.name] === undefined) continue;
    assert.ok(e.end - e.start >= MIN_US[e.name] - SLACK_US, `${label}: ${e.name} lasts ${e.end - e.start} us, at least ${MIN_US[e.name]} expected`);
  }
}

function checkColors(entries, label) {
  for (const e of entries) {
    assert.ok(PALETTE.includes(e.color), `${label}: ${e.name} has colour ${e.color}, a palette colour without error/warning`);
    if (e.track !== 'Frames') assert.equal(e.color, expectedColor(e.name), `${label}: ${e.name}'s colour is the hash of its name`);
  }
}

// ---- Browser, server, recording -------------------------------------------------------------------

let server;
let browser;

async function startBrowser() {
  server = await serveDirectory(siteDir, {
    mounts: { '/fixtures/': path.join(here, 'fixtures') },
    routes: { '/favicon.ico': (req, res) => { res.writeHead(204); res.end(); } },
  });
  browser = await launchBrowser();
}

after(async () => {
  await browser?.close();
  await server?.close();
});

async function openPage(query) {
  const page = await browser.context.newPage();
  const errors = collectPageErrors(page);
  await page.goto(`${server.url}fixtures/devtools.html?${query}`);
  await page.waitForFunction(() => window.scenesReady === true || window.scenesError !== undefined);
  const failed = await page.evaluate(() => window.scenesError);
  assert.equal(failed, undefined, `the page loaded the program: ${failed}`);
  const cdp = await page.context().newCDPSession(page);
  return { page, errors, cdp };
}

/** Runs `steps` (a function evaluated in the page) while a DevTools trace records. */
async function recordTrace(cdp, page, steps, arg) {
  const rec = await startTrace(cdp);
  let result;
  let failure = null;
  try {
    result = await page.evaluate(steps, arg);
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 50))); // observers, trace flush
  } catch (err) {
    failure = err;
  }
  const events = await rec.stop();
  if (failure) throw failure;
  return { events, result };
}

// Frames and the settings in force when each is closed (the settings take effect at the next frame).
//   0-2  user-timing, min 0      3-5  fast, min 0
//   6-7  user-timing, min 100us  8-9  fast, min 100us
//   10   off
//   11   fast, min 0, group "scenes"   (set through Module.vorDevtools)
//   12   user-timing, no group         (set through Module.vorDevtools)
const UT_FULL = [0, 1, 2];
const FAST_FULL = [3, 4, 5];
const UT_MIN = [6, 7];
const FAST_MIN = [8, 9];

let single; // the single-threaded page's recording
before(async () => {
  await startBrowser();
  const { page, errors, cdp } = await openPage('build=devtools_scenes');
  const { events, result } = await recordTrace(cdp, page, () => {
    const s = window.scenes;
    const before = { mode: s.getMode(), group: s.getTrackGroup(), min: s.getMinDurationUs(), apiMode: s.api.getMode() };
    s.start();
    s.setMode('user-timing');
    s.frames(0, 3);
    s.setMode('fast');
    s.frames(3, 3);
    s.setMinDurationUs(100);
    s.setMode('user-timing');
    s.frames(6, 2);
    s.setMode('fast');
    s.frames(8, 2);
    s.setMode('off');
    s.frames(10, 1);
    const offMode = { mode: s.getMode(), apiMode: s.api.getMode() };
    s.api.setMode('fast');
    s.api.setTrackGroup('scenes');
    s.api.setMinDurationMs(0);
    const pending = { mode: s.api.getMode(), cMode: s.getMode() }; // JS asked, C not yet told
    s.frames(11, 1);
    const applied = { mode: s.getMode(), group: s.getTrackGroup(), min: s.getMinDurationUs() };
    s.api.setMode('user-timing');
    s.api.setTrackGroup('');
    s.frames(12, 1);
    const last = { mode: s.getMode(), group: s.getTrackGroup(), apiMode: s.api.getMode() };
    return { before, offMode, pending, applied, last, columns: s.columns(), frames: s.frameCount() };
  });
  const after = await page.evaluate(() => new Promise((resolve) => setTimeout(() => resolve({
    measures: performance.getEntriesByType('measure').map((e) => e.name),
    marks: performance.getEntriesByType('mark').map((e) => e.name),
    observed: window.observed,
    log: window.scenes.log(),
  }), 50)));
  // A track group longer than 63 bytes is cut (at a character boundary) and reported once.
  const longGroup = await page.evaluate(() => {
    window.scenes.setTrackGroup('g'.repeat(60) + 'é'.repeat(4)); // 68 bytes
    const cut = window.scenes.getTrackGroup();
    window.scenes.setTrackGroup('h'.repeat(70));
    return { cut, group: window.scenes.getTrackGroup(), log: window.scenes.log() };
  });
  single = { events, result, after, errors, longGroup, ut: userTimingEntries(events), ts: timeStampEntries(events) };
  await page.close();
});

const utFrame = (k) => single.ut.filter((e) => e.track !== 'Frames' && e.properties.get('frame') === String(k));
const utFrameEntry = (k) => one(single.ut.filter((e) => e.track === 'Frames'), `frame ${k}`);
const tsFrameEntry = (k) => one(single.ts.filter((e) => e.track === 'Frames'), `frame ${k}`);
const tsFrame = (k) => byFrame(single.ts, 'main').get(k) ?? [];

test('defaults in a browser page: user-timing mode, track group "vor", no minimum duration', () => {
  assert.deepEqual(single.result.before, { mode: 'user-timing', group: 'vor', min: 0, apiMode: 'user-timing' });
  assert.equal(single.result.frames, 13);
  assert.deepEqual(single.errors, []);
});

test('user-timing mode: each scope of a frame is a measure on the "main" track, with exact names and counts', () => {
  for (const k of UT_FULL) {
    const entries = utFrame(k);
    assert.deepEqual(counts(entries), MAIN_SCOPES, `frame ${k}`);
    for (const e of entries) {
      assert.equal(e.track, 'main', `frame ${k}: ${e.name} on the main thread's track`);
      assert.equal(e.trackGroup, 'vor');
      assert.equal(e.devtools.dataType, 'track-entry');
      assert.match(e.properties.get('location'), /devtools_scenes\.c:\d+$/);
      assert.match(e.devtools.tooltipText, new RegExp(`^${e.name} \\(devtools_scenes\\.c:\\d+\\)$`));
    }
    checkMainNesting(entries, `user-timing frame ${k}`);
    checkDurations(entries, `user-timing frame ${k}`);
    checkColors(entries, `user-timing frame ${k}`);
    const frame = utFrameEntry(k);
    for (const e of entries) assert.ok(inside(e, frame), `frame ${k}: ${e.name} inside its frame entry`);
  }
  // each site has one location, different sites different lines
  const locations = new Map();
  for (const k of UT_FULL) for (const e of utFrame(k)) {
    if (!locations.has(e.name)) locations.set(e.name, e.properties.get('location'));
    assert.equal(e.properties.get('location'), locations.get(e.name));
  }
  assert.equal(new Set(locations.values()).size, Object.keys(MAIN_SCOPES).length);
});

test('user-timing mode: frames on their own track, contiguous, with marks and their metrics', () => {
  const frames = single.ut.filter((e) => e.track === 'Frames');
  assert.deepEqual(frames.map((e) => e.name), ['frame 0', 'frame 1', 'frame 2', 'frame 6', 'frame 7', 'frame 12']);
  for (const k of [...UT_FULL, ...UT_MIN]) {
    const f = utFrameEntry(k);
    assert.equal(f.trackGroup, 'vor');
    assert.equal(f.properties.get('frame'), String(k));
    assert.equal(Number(f.properties.get('scopes')), 8);
    for (const column of ['frame_ms', 'memory_mb', 'wasm_heap_mb', 'io_ms', 'io_MB', 'loss', 'tokens']) {
      assert.ok(f.properties.has(column), `frame ${k} carries ${column}`);
    }
    assert.ok(parseFloat(f.properties.get('memory_mb')) > 0, 'memory_mb (JS heap) is a positive figure');
    assert.match(f.properties.get('memory_mb'), / MB$/);
    assert.ok(parseFloat(f.properties.get('wasm_heap_mb')) > 0, 'wasm_heap_mb is a positive figure');
    assert.ok(Math.abs(parseFloat(f.properties.get('loss')) - 1 / (k + 1)) < 1e-5, `frame ${k}: loss`);
    assert.equal(f.properties.get('tokens'), `${1000 * k} tokens/s`);
    assert.ok(Math.abs(parseFloat(f.properties.get('frame_ms')) * 1000 - (f.end - f.start)) <= 2, `frame ${k}: frame_ms matches the entry`);
    for (const name of f.properties.keys()) assert.doesNotMatch(name, /gpu/i, 'no GPU row in the browser');
  }
  for (const k of [0, 1, 6]) assert.ok(Math.abs(utFrameEntry(k + 1).start - utFrameEntry(k).end) <= 1, `frame ${k + 1} starts where ${k} ends`);
  const marks = userTimingMarks(single.events, 'vor.frame');
  assert.equal(marks.length, 6, 'one vor.frame mark per user-timing frame');
  for (const [i, k] of [0, 1, 2, 6, 7, 12].entries()) assert.ok(Math.abs(marks[i].ts - utFrameEntry(k).start) <= 1, `mark at frame ${k}'s start`);
});

test('metric columns in the browser: memory_mb (JS heap) and wasm_heap_mb, no GPU column', () => {
  const columns = single.result.columns;
  assert.deepEqual(columns.slice(0, 5), ['frame_ms', 'memory_mb', 'wasm_heap_mb', 'io_ms', 'io_MB']);
  assert.ok(columns.includes('loss') && columns.includes('tokens'));
  assert.equal(columns.filter((c) => /gpu/i.test(c)).length, 0);
});

test('fast mode: console.timeStamp entries with the same tracks, names, nesting and colours', () => {
  for (const k of FAST_FULL) {
    const entries = tsFrame(k);
    assert.deepEqual(counts(entries), MAIN_SCOPES, `frame ${k}`);
    for (const e of entries) {
      assert.equal(e.track, 'main');
      assert.equal(e.trackGroup, 'vor');
    }
    checkMainNesting(entries, `fast frame ${k}`);
    checkDurations(entries, `fast frame ${k}`);
    checkColors(entries, `fast frame ${k}`);
    assert.equal(tsFrameEntry(k).trackGroup, 'vor');
  }
  // the same site has the same colour in both modes
  for (const name of Object.keys(MAIN_SCOPES)) {
    assert.equal(utFrame(0).find((e) => e.name === name).color, tsFrame(3).find((e) => e.name === name).color);
  }
  // no User Timing entry for fast frames, and no timeStamp for user-timing frames
  for (const k of FAST_FULL) assert.equal(utFrame(k).length, 0);
  assert.deepEqual(single.ts.filter((e) => e.track === 'Frames').map((e) => e.name), ['frame 3', 'frame 4', 'frame 5', 'frame 8', 'frame 9', 'frame 11']);
  for (const k of [3, 4, 8]) assert.ok(Math.abs(tsFrameEntry(k + 1).start - tsFrameEntry(k).end) <= 1);
});

test('minimum duration: scopes shorter than 100 us are left out in both modes, the rest are all there', () => {
  // `tiny` is empty, so it normally lasts well under 100 us and is left out; on a loaded machine
  // it can be preempted and genuinely last longer, and then it is rightly kept. So: every scope
  // kept lasts at least the minimum (tiny included, when kept), every long scope is kept, and
  // across the four frames at least one tiny was filtered out (all four preempted past 100 us is
  // not a thing that happens; a filter that does nothing keeps all four).
  const MIN = 100;
  let tinyKept = 0;
  const check = (entries, label) => {
    const { tiny = 0, ...rest } = counts(entries);
    assert.deepEqual(rest, MAIN_SCOPES_LONG, label);
    assert.ok(tiny <= 1, `${label}: ${tiny} tiny entries`);
    tinyKept += tiny;
    for (const e of entries) {
      assert.ok(e.end - e.start >= MIN - SLACK_US, `${label}: ${e.name} lasts ${e.end - e.start} us, under the ${MIN} us minimum, yet it was kept`);
    }
    checkMainNesting(entries, label);
  };
  for (const k of UT_MIN) {
    check(utFrame(k), `user-timing frame ${k}`);
    assert.equal(Number(utFrameEntry(k).properties.get('scopes')), 8, 'the frame still counts every scope');
  }
  for (const k of FAST_MIN) check(tsFrame(k), `fast frame ${k}`);
  const tinyRun = UT_MIN.length + FAST_MIN.length;
  assert.ok(tinyKept < tinyRun, `all ${tinyRun} tiny scopes were kept: the minimum duration filtered nothing`);
});

test('off: nothing reaches DevTools for the frame', () => {
  assert.deepEqual(single.result.offMode, { mode: 'off', apiMode: 'off' });
  assert.equal(utFrame(10).length, 0);
  assert.equal(single.ut.filter((e) => e.name === 'frame 10').length, 0);
  assert.equal(single.ts.filter((e) => e.name === 'frame 10').length, 0);
});

test('Module.vorDevtools changes mode, track group and minimum duration at the next frame', () => {
  assert.deepEqual(single.result.pending, { mode: 'fast', cMode: 'off' });
  assert.deepEqual(single.result.applied, { mode: 'fast', group: 'scenes', min: 0 });
  const fast = tsFrame(11);
  assert.deepEqual(counts(fast), MAIN_SCOPES);
  for (const e of fast) assert.equal(e.trackGroup, 'scenes');
  assert.equal(tsFrameEntry(11).trackGroup, 'scenes');
  // an empty group: the tracks sit at the top level, without a group
  assert.deepEqual(single.result.last, { mode: 'user-timing', group: '', apiMode: 'user-timing' });
  const top = utFrame(12);
  assert.deepEqual(counts(top), MAIN_SCOPES);
  for (const e of [...top, utFrameEntry(12)]) assert.equal(e.trackGroup, undefined);
  for (const e of top) assert.equal(e.color, expectedColor(e.name), 'colours survive a group change');
});

test('track groups longer than 63 bytes are cut at a character boundary and reported once', () => {
  const { cut, group, log } = single.longGroup;
  assert.equal(cut, 'g'.repeat(60) + 'é', '62 bytes: a second é would end past byte 63');
  assert.equal(group, 'h'.repeat(63));
  assert.equal(log.split('\n').filter((l) => l.includes('track group')).length, 1);
});

test('the User Timing buffer stays bounded and keeps the page\'s own entries; observers see vor\'s', () => {
  assert.deepEqual(single.after.measures, ['page-own']);
  assert.deepEqual(single.after.marks, ['page-mark']);
  const observed = single.after.observed.filter((e) => e.type === 'measure' && e.name !== 'page-own');
  // user-timing frames 0-2 and 12 (8 scopes), 6-7 (7 scopes), and one frame entry each
  assert.equal(observed.length, 8 * 4 + 7 * 2 + 6);
  assert.equal(observed.filter((e) => e.name === 'draw_batch').length, 3 * 6);
  const physics = observed.find((e) => e.name === 'physics');
  assert.equal(physics.detail.devtools.track, 'main');
  assert.equal(single.after.observed.filter((e) => e.type === 'mark' && e.name === 'vor.frame').length, 6);
});

// In a pthreads build Emscripten 3.1.6 shifts a worker's emscripten_get_now() onto the main
// thread's time origin with an offset measured by a postMessage, so it comes out early by that
// message's latency (often a millisecond or two); vor corrects its own clock on a worker with the
// exact difference of the time origins (core/src/clock.h). So the worker's scopes must lie inside
// the frame that asked for them, in time and not only by frame index, from frame 0 on.
test('pthreads build: one track per thread inside the group, the worker\'s scopes nested', async () => {
  const { page, errors, cdp } = await openPage('build=devtools_scenes_mt');
  const { events, result } = await recordTrace(cdp, page, () => {
    const s = window.scenes;
    s.start();
    s.frames(0, 3);
    s.setMode('fast');
    s.frames(3, 3);
    return s.frameCount();
  });
  await page.close();
  assert.equal(result, 6);
  assert.deepEqual(errors, []);
  const ut = userTimingEntries(events);
  const ts = timeStampEntries(events);
  for (const entries of [ut, ts]) {
    assert.deepEqual(new Set(entries.map((e) => e.track)), new Set(['main', 'loader', 'Frames']), 'three tracks');
    for (const e of entries) assert.equal(e.trackGroup, 'vor');
    checkColors(entries, 'pthreads');
    checkDurations(entries, 'pthreads');
  }
  const describe = (entries) => entries.map((e) => `${e.name} ${e.track} ${e.properties?.get('frame') ?? ''} ${e.start} ${e.end}`).join('\n');
  // user-timing: frames 0-2 by their index
  // The worker starts after the main thread asks, inside update, and is done before the frame
  // ends. Slack: the 5 us steps of performance.now() and of timeOrigin on both threads come to
  // about 10-15 us at worst; 50 us allows for that and still catches Emscripten's own alignment
  // (250-1000 us early here).
  const SLACK = 50;
  for (const k of [0, 1, 2]) {
    const scopes = ut.filter((e) => e.track !== 'Frames' && e.properties.get('frame') === String(k));
    const main = scopes.filter((e) => e.track === 'main');
    assert.deepEqual(counts(main), MAIN_SCOPES, `user-timing frame ${k}: main`);
    checkMainNesting(main, `user-timing frame ${k}`);
    const loader = scopes.filter((e) => e.track === 'loader');
    assert.deepEqual(counts(loader), LOADER_SCOPES, `user-timing frame ${k}: loader; entries:\n${describe(ut)}`);
    assert.ok(inside(one(loader, 'decode'), one(loader, 'load_chunk')), `frame ${k}: decode inside load_chunk`);
    const frame = one(ut.filter((e) => e.track === 'Frames'), `frame ${k}`);
    const chunk = one(loader, 'load_chunk');
    assert.ok(frame.start - SLACK <= chunk.start && chunk.end <= frame.end + SLACK,
      `frame ${k}: the worker's load_chunk [${chunk.start}, ${chunk.end}] lies in its frame [${frame.start}, ${frame.end}]`);
    assert.ok(one(main, 'update').start - SLACK <= chunk.start,
      `frame ${k}: load_chunk (${chunk.start}) starts after the main thread asked for it (update ${one(main, 'update').start})`);
  }
  // fast: timeStamp entries carry no frame index, so both tracks go to frames by time (the
  // worker's by their midpoint, then checked to lie in the frame within the slack above)
  const main = byFrame(ts, 'main');
  const frames = ts.filter((e) => e.track === 'Frames');
  for (const k of [3, 4, 5]) {
    assert.deepEqual(counts(main.get(k)), MAIN_SCOPES, `fast frame ${k}: main`);
    checkMainNesting(main.get(k), `fast frame ${k}`);
    const frame = one(frames, `frame ${k}`);
    const loader = ts.filter((e) => e.track === 'loader' && frame.start <= (e.start + e.end) / 2 && (e.start + e.end) / 2 <= frame.end);
    assert.deepEqual(counts(loader), LOADER_SCOPES, `fast frame ${k}: loader; entries:\n${describe(ts)}`);
    assert.ok(inside(one(loader, 'decode'), one(loader, 'load_chunk')), `fast frame ${k}: decode inside load_chunk`);
    for (const e of loader)
      assert.ok(frame.start - SLACK <= e.start && e.end <= frame.end + SLACK, `fast frame ${k}: ${e.name} [${e.start}, ${e.end}] lies in [${frame.start}, ${frame.end}]`);
  }
});

test('without performance.measure the sink turns itself off, reports once, and can be re-armed', async () => {
  const { page, errors } = await openPage('build=devtools_scenes&break=measure');
  const r = await page.evaluate(() => {
    const s = window.scenes;
    s.start();
    s.frames(0, 3);
    const off = { mode: s.getMode(), failures: s.failures(), log: s.log() };
    s.setMode('fast');
    s.frames(3, 2);
    return { off, rearmed: { mode: s.getMode(), failures: s.failures(), frames: s.frameCount() } };
  });
  await page.close();
  assert.equal(r.off.mode, 'off');
  assert.equal(r.off.failures, 1);
  assert.equal(r.off.log.split('\n').filter((l) => l.includes('performance.measure is missing')).length, 1);
  assert.deepEqual(r.rearmed, { mode: 'fast', failures: 1, frames: 5 });
  assert.deepEqual(errors, [], 'nothing thrown into the page');
});

test('under node the sink is off by default and nothing is measured', async () => {
  const require = createRequire(import.meta.url);
  const createScenes = require(path.join(siteDir, 'devtools_scenes_node.cjs'));
  const m = await createScenes({ printErr: () => {} });
  assert.equal(m._scenes_get_mode(), 0);
  assert.equal(m._scenes_start(), 1);
  for (let k = 0; k < 3; k++) m._scenes_frame(k);
  assert.equal(m._scenes_get_mode(), 0);
  assert.equal(m.vorDevtools.getMode(), 'off');
  assert.equal(performance.getEntriesByType('measure').length, 0);
  const columns = m.UTF8ToString(m._scenes_columns()).split(',');
  assert.ok(columns.includes('memory_mb') && columns.includes('wasm_heap_mb'));
  assert.equal(m._scenes_frames(), 3);
});

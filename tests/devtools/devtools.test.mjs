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
// bounded User Timing buffer that keeps the page's own entries (even ones named like vor's: vor's
// names end with U+2060, which the trace reader strips), PerformanceObserver delivery, a minimum
// duration past the range of uint64_t (every scope left out, not none), a site name past 255
// bytes (cut at a character boundary, alike in DevTools and the in-page panel), the pthreads
// build (one track per thread; a frame loop in a worker that the page's Module.vorDevtools still
// steers, with getMode() on the page seeing its mode), a browser without performance.measure (the
// sink turns off and says so once), and node (where the sink is off by default). The in-page panel
// bridge (wasm/src/panel_bridge.c) is checked on the same programs: a panel source that throws
// (no exception through C, no frame sent twice, no name lost, reported once) and thread ids that
// collide modulo a table size (each thread declared once).
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
import { startTrace, userTimingEntries, userTimingMarks, timeStampEntries, stripVorSuffix, VOR_NAME_SUFFIX } from './trace.mjs';

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
// The site named 150 x "é" (300 bytes): every output keeps 127 characters (254 bytes), since 255
// bytes would end inside the 128th.
const LONG_CUT = 'é'.repeat(127);
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
  // A second recording, frames 13-16: the page's own entries named like vor's (frame 13), the
  // site with a 300-byte name in both modes (14 user-timing, 15 fast), a minimum duration far
  // past the range of uint64_t (16); then the in-page panel bridge gets frames 13-16.
  const extra = await recordTrace(cdp, page, () => {
    const s = window.scenes;
    s.panelPoll(); // enables the frame ring (no panel source yet: nothing is sent)
    s.api.setTrackGroup('vor');
    s.api.setMinDurationMs(0);
    s.setMode('user-timing');
    performance.measure('update', { start: 0, end: 2 });
    performance.measure('frame 13', { start: 0, end: 3 });
    performance.mark('vor.frame');
    const own = () => ({
      update: performance.getEntriesByName('update', 'measure').length,
      frame: performance.getEntriesByName('frame 13', 'measure').length,
      mark: performance.getEntriesByName('vor.frame', 'mark').length,
    });
    const ownBefore = own();
    s.frames(13, 1);
    const ownAfter = own();
    s.longNameFrame(); // 14
    s.setMode('fast');
    s.longNameFrame(); // 15
    s.setMode('user-timing');
    s.api.setMinDurationMs(1e306);
    s.frames(16, 1);
    const hugeMin = s.getMinDurationUs();
    s.setMinDurationUs(1e300); // the C setter, from a double
    const hugeMinC = s.getMinDurationUs();
    s.setMinDurationUs(0);
    s.module.vorPanelSource = window.panelSource;
    const polled = s.panelPoll();
    return { ownBefore, ownAfter, hugeMin, hugeMinC, polled, panel: window.panelSource };
  });
  single = {
    events, result, after, errors, longGroup, ut: userTimingEntries(events), ts: timeStampEntries(events),
    extra: { ...extra.result, ut: userTimingEntries(extra.events), ts: timeStampEntries(extra.events) },
  };
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
      assert.equal(e.rawName, e.name + VOR_NAME_SUFFIX, 'vor\'s User Timing names end with U+2060');
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
  for (const m of marks) assert.equal(m.rawName, 'vor.frame' + VOR_NAME_SUFFIX);
  for (const f of frames) assert.equal(f.rawName, f.name + VOR_NAME_SUFFIX);
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
  for (const e of observed) assert.ok(e.name.endsWith(VOR_NAME_SUFFIX), `${e.name}: vor's suffix`);
  assert.equal(observed.filter((e) => stripVorSuffix(e.name) === 'draw_batch').length, 3 * 6);
  const physics = observed.find((e) => stripVorSuffix(e.name) === 'physics');
  assert.equal(physics.detail.devtools.track, 'main');
  assert.equal(single.after.observed.filter((e) => e.type === 'mark' && stripVorSuffix(e.name) === 'vor.frame').length, 6);
});

test('the page\'s own entries named like vor\'s ("update", "frame 13", "vor.frame") survive vor\'s clearing', () => {
  const { ownBefore, ownAfter, ut } = single.extra;
  assert.deepEqual(ownBefore, { update: 1, frame: 1, mark: 1 });
  assert.deepEqual(ownAfter, { update: 1, frame: 1, mark: 1 }, 'none of the page\'s entries was cleared');
  // vor's own entries of that frame were made (and cleared) as usual, told apart by the suffix
  const frame13 = ut.filter((e) => e.track !== 'Frames' && e.properties.get('frame') === '13');
  assert.deepEqual(counts(frame13), MAIN_SCOPES);
  const pageUpdate = ut.filter((e) => e.rawName === 'update');
  assert.equal(pageUpdate.length, 1, 'the page\'s own "update" is in the trace, without the suffix');
  assert.equal(pageUpdate[0].devtools, null);
});

test('a site name past 255 bytes is cut at a character boundary, the same in both modes and in the panel', () => {
  const { ut, ts, panel } = single.extra;
  const long = ut.filter((e) => e.name.startsWith('é'));
  assert.deepEqual(long.map((e) => [e.name, e.properties.get('frame')]), [[LONG_CUT, '14']]);
  assert.equal(long[0].rawName, LONG_CUT + VOR_NAME_SUFFIX);
  assert.equal(long[0].color, expectedColor(LONG_CUT));
  assert.match(long[0].devtools.tooltipText, new RegExp(`^${LONG_CUT} \\(devtools_scenes\\.c:\\d+\\)$`));
  const fast = ts.filter((e) => e.name.startsWith('é'));
  assert.deepEqual(fast.map((e) => e.name), [LONG_CUT]);
  assert.equal(fast[0].color, expectedColor(LONG_CUT));
  const declared = panel.declarations.flatMap((d) => d.sites ?? []).filter((site) => site.name.startsWith('é'));
  assert.deepEqual(declared.map((site) => site.name), [LONG_CUT], 'the live panel gets the same name');
});

test('a minimum duration past the range of uint64_t leaves every scope out (it saturates, not wraps to 0)', () => {
  const { ut, hugeMin, hugeMinC } = single.extra;
  const UINT64_MAX_US = 18446744073709551615 / 1000;
  assert.equal(hugeMin, UINT64_MAX_US, 'setMinDurationMs(1e306): UINT64_MAX ns');
  assert.equal(hugeMinC, UINT64_MAX_US, 'a C caller converting 1e300 us');
  assert.equal(ut.filter((e) => e.track !== 'Frames' && e.properties.get('frame') === '16').length, 0);
  const frame = one(ut.filter((e) => e.track === 'Frames'), 'frame 16');
  assert.equal(Number(frame.properties.get('scopes')), 8, 'the frame itself is still shown');
});

test('the in-page panel bridge gets every frame once, with its names declared first', () => {
  const { polled, panel } = single.extra;
  assert.equal(polled, 4);
  assert.deepEqual(panel.frames, [13, 14, 15, 16]);
  const sites = panel.declarations.flatMap((d) => d.sites ?? []).map((site) => site.name);
  for (const name of Object.keys(MAIN_SCOPES)) assert.equal(sites.filter((n) => n === name).length, 1, name);
  assert.deepEqual(panel.declarations.flatMap((d) => d.threads ?? []).map((t) => t.name), ['main']);
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

// The frame loop in a worker (the frame thread is a pthread, as with -sPROXY_TO_PTHREAD): the
// page's Module.vorDevtools lives in the main thread's realm, the sink runs in the worker's, so
// the settings must travel through linear memory. Thread ids go by first scope: the main thread
// (a scope of the page's before each batch of frames) takes 0, 255 short threads churn 1-255,
// then the framer takes 256: equal to the main thread's modulo 256 (the panel bridge once kept
// declared threads in a table indexed by id % 256, where these two evicted each other).
test('a frame loop in a worker follows the page\'s Module.vorDevtools, and getMode() on the page sees its mode', async () => {
  const { page, errors, cdp } = await openPage('build=devtools_scenes_mt');
  const { events, result } = await recordTrace(cdp, page, async () => {
    const s = window.scenes;
    s.start();
    s.panelPoll(); // enables the frame ring
    s.module.vorPanelSource = window.panelSource;
    s.pageWork();
    await s.churn(255);
    await s.framerStart();
    await s.framerFrames(2); // frames 0-1: user-timing (the default)
    s.panelPoll();
    s.api.setMode('fast');
    s.api.setMinDurationMs(0.1);
    const pending = { api: s.api.getMode(), c: s.getMode() };
    s.pageWork();
    await s.framerFrames(2); // frames 2-3: fast, at least 100 us
    s.panelPoll();
    const applied = { api: s.api.getMode(), c: s.getMode(), min: s.getMinDurationUs() };
    s.setMode('user-timing'); // the C setters, from the page's thread
    s.setMinDurationUs(0);
    s.pageWork();
    await s.framerFrames(2); // frames 4-5
    s.panelPoll();
    const cSet = { api: s.api.getMode(), c: s.getMode() };
    s.api.setMode('off');
    s.pageWork();
    await s.framerFrames(1); // frame 6: off
    s.panelPoll();
    const off = { api: s.api.getMode(), c: s.getMode() };
    return { pending, applied, cSet, off, frames: s.frameCount(), panel: window.panelSource, log: s.log() };
  });
  await page.close();
  assert.deepEqual(errors, []);
  assert.equal(result.frames, 7, result.log);
  assert.deepEqual(result.pending, { api: 'fast', c: 'user-timing' }, 'asked, not yet applied');
  assert.deepEqual(result.applied, { api: 'fast', c: 'fast', min: 100 }, 'the worker applied the page\'s settings');
  assert.deepEqual(result.cSet, { api: 'user-timing', c: 'user-timing' }, 'the page sees the mode the worker uses');
  assert.deepEqual(result.off, { api: 'off', c: 'off' });

  const ut = userTimingEntries(events);
  const ts = timeStampEntries(events);
  const utScopes = (k) => ut.filter((e) => e.track !== 'Frames' && e.properties.get('frame') === String(k));
  for (const k of [0, 1, 4, 5]) {
    const scopes = utScopes(k);
    assert.deepEqual(counts(scopes.filter((e) => e.track === 'framer')), MAIN_SCOPES, `user-timing frame ${k}: framer`);
    assert.deepEqual(counts(scopes.filter((e) => e.track === 'loader')), LOADER_SCOPES, `user-timing frame ${k}: loader`);
    checkMainNesting(scopes.filter((e) => e.track === 'framer'), `worker frame ${k}`);
  }
  assert.deepEqual(ut.filter((e) => e.track === 'Frames').map((e) => e.name), ['frame 0', 'frame 1', 'frame 4', 'frame 5']);
  assert.deepEqual(ts.filter((e) => e.track === 'Frames').map((e) => e.name), ['frame 2', 'frame 3'], 'frames 2-3 in fast mode');
  for (const k of [2, 3]) {
    assert.equal(utScopes(k).length, 0, `no User Timing entry for fast frame ${k}`);
    const { tiny = 0, ...rest } = counts(byFrame(ts, 'framer').get(k));
    assert.deepEqual(rest, MAIN_SCOPES_LONG, `fast frame ${k}: framer`);
    for (const e of byFrame(ts, 'framer').get(k)) assert.ok(e.end - e.start >= 100 - SLACK_US, `fast frame ${k}: ${e.name} kept under the minimum`);
  }
  assert.equal(ut.filter((e) => e.properties.get('frame') === '6' || e.name === 'frame 6').length + ts.filter((e) => e.name === 'frame 6').length, 0);

  // The panel bridge, polled by the page while the worker closes frames.
  const { declarations, frames } = result.panel;
  assert.deepEqual(frames, [0, 1, 2, 3, 4, 5, 6], 'every frame once');
  const threads = declarations.flatMap((d) => d.threads ?? []);
  const idOf = (name) => {
    const ids = new Set(threads.filter((t) => t.name === name).map((t) => t.id));
    assert.equal(ids.size, 1, `one id for ${name}`);
    return [...ids][0];
  };
  const main = idOf('main'), framer = idOf('framer');
  assert.ok(framer !== main && (framer - main) % 256 === 0, `ids equal modulo 256 (main ${main}, framer ${framer})`);
  for (const [name, id] of [['main', main], ['framer', framer], ['loader', idOf('loader')]])
    assert.equal(threads.filter((t) => t.id === id).length, 1, `${name} (thread ${id}) declared once`);
  assert.equal(threads.filter((t) => t.name === 'churn').length, 255, 'each churned thread declared once');
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

test('the panel bridge with a source that throws: nothing reaches C or the caller, no frame twice, no name lost', async () => {
  const require = createRequire(import.meta.url);
  const createScenes = require(path.join(siteDir, 'devtools_scenes_node.cjs'));
  const m = await createScenes({ printErr: () => {} });
  const got = { declarations: [], frames: [] };
  let throwNext = [];
  const source = {
    pushDeclarations(json) {
      if (throwNext[0] === 'declarations') { throwNext.shift(); throw new Error('declarations refused'); }
      got.declarations.push(JSON.parse(json));
      return true;
    },
    pushFrame(u8) {
      if (throwNext[0] === 'frame') { throwNext.shift(); throw new Error('frame refused'); }
      got.frames.push(new DataView(u8.buffer, u8.byteOffset, u8.byteLength).getFloat64(16, true));
      return true;
    },
  };
  const poll = () => {
    let r;
    assert.doesNotThrow(() => { r = m._scenes_panel_poll(); });
    return r;
  };
  assert.equal(m._scenes_start(), 1);
  poll(); // enables the frame ring
  m.vorPanelSource = source;
  m._scenes_frame(0);
  m._scenes_frame(1);
  throwNext = ['declarations'];
  // frame 0: its declarations throw, so it is skipped (it would name what the panel does not
  // know); frame 1 carries every declaration again
  assert.equal(poll(), 1);
  assert.deepEqual(got.frames, [1]);
  const sites = got.declarations.flatMap((d) => d.sites ?? []).map((s) => s.name);
  assert.deepEqual(sites.sort(), Object.keys(MAIN_SCOPES).sort(), 'no name lost');
  assert.deepEqual(got.declarations.flatMap((d) => d.threads ?? []).map((t) => t.name), ['main']);
  assert.ok(got.declarations.flatMap((d) => d.columns ?? []).some((c) => c.name === 'loss'));
  m._scenes_frame(2);
  m._scenes_frame(3);
  throwNext = ['frame'];
  assert.equal(poll(), 1); // frame 2 throws and is dropped, frame 3 goes
  assert.equal(poll(), 0); // nothing is sent twice
  m._scenes_frame(4);
  assert.equal(poll(), 1);
  assert.deepEqual(got.frames, [1, 3, 4]);
  assert.equal(got.declarations.length, 1, 'names are declared once they were taken');
  const log = m.UTF8ToString(m._scenes_log());
  assert.equal(log.split('\n').filter((l) => l.includes('panel source threw')).length, 1, `reported once:\n${log}`);
  assert.match(log, /declarations refused/);
  assert.equal(m._scenes_failures(), 2, 'both throws counted');
});

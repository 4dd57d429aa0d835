// sources.test.mjs: the panel fed by each of its three real sources, in headless Chromium:
//   1. in-page: the wasm example page (build/site/example.html), fed from the in-process ring;
//   2. vor serve: the panel page streaming a capture that a running program is still writing;
//   3. a .vor file opened on the page, decoded (and indexed) by the C reader compiled to wasm; a cut copy of it
//      is shown with a warning, an empty file is an error (neither passes as a complete capture).
// Each must draw in the bar, plot and flame regions (canvas pixels, not just "no error"), and
// on the live stream, pin and pause must change (or freeze) what is drawn. Screenshots land in
// build/screenshots/source-*.png.
//
//   node sources.test.mjs VOR TRAINING_LOOP SITE_DIR
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  failWithoutBrowser, serveDirectory, launchBrowser, collectPageErrors, canvasRegionStats, nextFrames, screenshot,
  hexToRgb,
} from './harness.mjs';

const [vorBin, trainingLoop, siteDir] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const shotDir = process.env.VOR_SCREENSHOT_DIR || path.resolve(here, '../../build/screenshots');
await failWithoutBrowser('browser_sources');
fs.mkdirSync(shotDir, { recursive: true });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vor-sources-'));
const CANVAS = 'canvas.vor-canvas';
const { THEME } = await import(path.resolve(here, '../../web/colors.js'));
const REGION = hexToRgb(THEME.region), REGION_ALT = hexToRgb(THEME.regionAlt);
const children = [];
let browser;

before(async () => { browser = await launchBrowser({ viewport: { width: 1280, height: 860 } }); });
after(async () => {
  await browser?.close();
  for (const c of children) c.kill('SIGINT');
  fs.rmSync(tmp, { recursive: true, force: true });
});

function run(cmd, args, env = {}) {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return child;
}

async function waitFor(page, predicate, what, timeoutMs = 20000, arg = undefined) {
  const t0 = Date.now();
  for (;;) {
    const v = await page.evaluate(predicate, arg).catch(() => null);
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const view = (page) => page.evaluate(() => window.vorPanel.viewState());
const regions = (page) => page.evaluate(() => window.vorPanel.regions());

// Every region must hold drawn pixels: bars, each metric plot, the flame chart.
async function assertDrawn(page, label) {
  const r = await regions(page);
  const bars = await canvasRegionStats(page, CANVAS, r.bars.chart, REGION);
  // an absolute floor, not a share of the region: a blank chart has no differing pixel, and on a
  // loaded machine one slow frame scales every other bar down to a few pixels
  assert.ok(bars.colors >= 3 && bars.differing > 1000, `${label}: frame bars drawn (${bars.differing}/${bars.pixels})`);
  assert.ok(r.plots.length >= 3, `${label}: one plot per metric (${r.plots.length})`);
  for (const [i, p] of r.plots.entries()) {
    const s = await canvasRegionStats(page, CANVAS, p.chart, i % 2 ? REGION_ALT : REGION);
    assert.ok(s.colors >= 2 && s.differing > 50, `${label}: plot ${i} drawn (${s.differing} pixels)`);
  }
  const flame = await canvasRegionStats(page, CANVAS, r.flame.chart, REGION);
  assert.ok(flame.colors > 4 && flame.differing > flame.pixels * 0.02, `${label}: flame chart drawn (${flame.differing}/${flame.pixels})`);
}

test('in-page: the wasm example page draws its own live frames', async () => {
  const server = await serveDirectory(siteDir);
  const page = await browser.context.newPage();
  const errors = collectPageErrors(page);
  try {
    await page.goto(new URL('example.html', server.url).href);
    await waitFor(page, () => window.vorPanel && window.vorPanel.viewState().frames >= 40, '40 frames from the ring');
    await nextFrames(page, 3);
    const s = await view(page);
    assert.ok(s.scopes > 40 * 20, `scopes arrive with the frames (${s.scopes})`);
    await assertDrawn(page, 'in-page');
    const names = await page.evaluate(() => [...document.querySelectorAll('canvas')].length);
    assert.ok(names >= 1);
    await screenshot(page, path.join(shotDir, 'source-in-page.png'));
    assert.deepEqual(errors.filter((e) => !/favicon/.test(e)), []);
  } finally {
    await page.close();
    await server.close();
  }
});

// A frame of the example is one animation frame, so its time is the display's refresh interval: a
// fixed 16.7 ms budget flagged about half of the normal 60 Hz frames. The page's budget follows the
// measured refresh period (web/refresh_budget.js: 1.5 periods), so only frames that missed a
// refresh are over it.
test('in-page: the example page\'s budget follows the display\'s refresh interval', async () => {
  const server = await serveDirectory(siteDir);
  const page = await browser.context.newPage();
  try {
    await page.goto(new URL('example.html', server.url).href);
    await waitFor(page, () => window.vorRefresh && window.vorPanel.viewState().frames >= 150, '150 frames, the refresh period measured');
    const r = await page.evaluate(() => {
      const p = window.vorPanel;
      const st = p.store;
      const ms = Array.from(st.frameMsSeries(st.first, st.end)).slice(10); // past the first frames (start-up)
      return { refresh: window.vorRefresh, budget: p.model.state.budgetMs, field: document.querySelector('.vor-budget input').value, note: document.getElementById('budget-note').textContent, ms };
    });
    const { refresh } = r;
    assert.equal(r.budget, refresh.budgetMs);
    assert.equal(Number(r.field), refresh.budgetMs, 'the budget field shows it');
    assert.ok(refresh.periodMs > 4 && refresh.periodMs < 50, `a display's refresh period: ${refresh.periodMs} ms`);
    assert.ok(Math.abs(refresh.budgetMs - 1.5 * refresh.periodMs) < 0.1);
    assert.match(r.note, /^budget [\d.]+ ms = 1\.5 × the display's [\d.]+ ms refresh \(\d+ Hz\)$/);
    const over = (b) => r.ms.filter((v) => v > b).length;
    console.log(`# ${r.ms.length} frames, refresh ${refresh.periodMs.toFixed(2)} ms: ${over(16.7)} over 16.7 ms, ${over(r.budget)} over ${r.budget} ms`);
    assert.ok(over(r.budget) < over(16.7) || over(16.7) === 0, `fewer frames flagged than with the fixed 16.7 ms (${over(r.budget)} vs ${over(16.7)})`);
    // how many frames miss a refresh depends on the machine's load (under two CPU hogs headless
    // Chromium drops to 30 Hz and misses a quarter): the exact split is checked in tests/web/refresh_budget.test.mjs
    await screenshot(page, path.join(shotDir, 'example-refresh-budget.png'));
  } finally {
    await page.close();
    await server.close();
  }
});

test('vor serve: the panel follows a capture that is still being written; pin and pause act on it', async () => {
  const live = path.join(tmp, 'live.vor');
  run(trainingLoop, ['100000000'], { VOR_RECORD: live, VOR_RECORD_FLAME: '1', VOR_RECORD_EVERY: '2' });
  for (let i = 0; i < 100 && !fs.existsSync(live); i++) await new Promise((r) => setTimeout(r, 50));
  const server = run(vorBin, ['serve', live, '--port', '0', '--site', siteDir]);
  const url = await new Promise((resolve, reject) => {
    let text = '';
    server.stderr.on('data', (d) => {
      text += d;
      const m = text.match(/http:\/\/127\.0\.0\.1:(\d+)\//);
      if (m) resolve(m[0]);
    });
    server.on('exit', (code) => reject(new Error(`vor serve exited (${code}): ${text}`)));
  });
  const page = await browser.context.newPage();
  const errors = collectPageErrors(page);
  try {
    await page.goto(url + '?history=100000'); /* the writer makes ~1,000 frames/s: stay below the cap */
    await waitFor(page, () => window.vorPanel && window.vorPanel.viewState().frames >= 60, '60 streamed frames');
    const first = (await view(page)).frames;
    await waitFor(page, (n) => window.vorPanel.viewState().frames > n + 20, 'more frames as the file grows', 20000, first)
      .catch(() => null);
    const grown = await page.evaluate(() => window.vorPanel.viewState().frames);
    assert.ok(grown > first, `the stream follows the growing file (${first} -> ${grown})`);
    await nextFrames(page, 3);
    await assertDrawn(page, 'vor serve');
    await screenshot(page, path.join(shotDir, 'source-serve-live.png'));

    // Click a bar: pinned and paused, and the flame chart shows the pinned frame.
    const r = await regions(page);
    const box = await page.evaluate((sel) => { const b = document.querySelector(sel).getBoundingClientRect(); return { x: b.left, y: b.top }; }, CANVAS);
    const flameBefore = await canvasRegionStats(page, CANVAS, r.flame.chart);
    await page.mouse.click(box.x + r.bars.chart.x + r.bars.chart.w * 0.3, box.y + r.bars.chart.y + r.bars.chart.h - 3);
    await nextFrames(page, 3);
    const pinned = await view(page);
    assert.equal(pinned.paused, true, 'clicking a bar pauses');
    assert.notEqual(pinned.pinnedFrameIndex, null, 'clicking a bar pins a frame');
    // Paused: the capture goes on (the overview counts its frames), the drawing does not move.
    const frozen = await canvasRegionStats(page, CANVAS, r.bars.chart);
    const framesThen = pinned.captureFrames;
    await waitFor(page, (n) => window.vorPanel.viewState().captureFrames > n + 5, 'frames while paused', 15000, framesThen)
      .catch(() => null);
    await nextFrames(page, 3);
    const still = await canvasRegionStats(page, CANVAS, r.bars.chart);
    assert.ok((await view(page)).captureFrames > framesThen, 'the capture goes on while paused');
    assert.equal(still.hash, frozen.hash, 'nothing moves on screen while paused');
    const flamePinned = await canvasRegionStats(page, CANVAS, r.flame.chart);
    assert.notEqual(flamePinned.hash, flameBefore.hash, 'the flame chart changed to the pinned frame');
    await screenshot(page, path.join(shotDir, 'source-serve-pinned.png'));
    // Space resumes: the bars move again.
    await page.keyboard.press('Space');
    await waitFor(page, () => !window.vorPanel.viewState().paused, 'resume');
    await new Promise((res) => setTimeout(res, 600));
    await nextFrames(page, 3);
    const moving = await canvasRegionStats(page, CANVAS, r.bars.chart);
    assert.notEqual(moving.hash, still.hash, 'resumed: the bars follow the stream again');
    assert.deepEqual(errors.filter((e) => !/favicon/.test(e)), []);
  } finally {
    await page.close();
  }
});

test('a .vor file opened on the page is decoded in the browser, no server needed', async () => {
  const file = path.join(tmp, 'file.vor');
  await new Promise((resolve, reject) => {
    const c = run(trainingLoop, ['120'], { VOR_RECORD: file, VOR_RECORD_FLAME: '1' });
    c.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`training_loop exited ${code}`))));
  });
  const server = await serveDirectory(siteDir); // a plain static server: no /api/captures
  const page = await browser.context.newPage();
  const errors = collectPageErrors(page);
  try {
    await page.goto(server.url);
    await waitFor(page, () => window.vorPanel, 'the panel');
    await page.setInputFiles('input[type=file]', file);
    await waitFor(page, () => window.vorPanel.viewState().frames >= 120, 'the 120 frames of the file');
    await nextFrames(page, 3);
    const s = await view(page);
    assert.equal(s.frames, 120);
    await assertDrawn(page, 'file');
    await screenshot(page, path.join(shotDir, 'source-file.png'));
    await waitFor(page, () => /complete/.test(document.querySelector('.vor-status').textContent), 'the file indexed');
    assert.equal(await page.textContent('.vor-status'), 'file.vor: complete · 120 frames');

    // the same capture cut short (a copy taken while it was written, or a broken download)
    const bytes = fs.readFileSync(file);
    const status = async () => page.evaluate(() => { const e = document.querySelector('.vor-status'); return [e.dataset.kind, e.textContent]; });
    await page.setInputFiles('input[type=file]', { name: 'cut.vor', mimeType: 'application/octet-stream', buffer: bytes.subarray(0, Math.floor(bytes.length * 0.6)) });
    await waitFor(page, () => /^cut\.vor: [\d,]+ frames/.test(document.querySelector('.vor-status').textContent), 'the cut file read');
    const [kind, text] = await status();
    const cutFrames = (await view(page)).frames;
    assert.ok(cutFrames > 10 && cutFrames < 120, `the frames before the cut are shown (${cutFrames})`);
    assert.equal(kind, 'warn');
    assert.equal(text, `cut.vor: ${cutFrames} frames · ends before its end record: truncated or still being written`);
    await page.setInputFiles('input[type=file]', { name: 'empty.vor', mimeType: 'application/octet-stream', buffer: Buffer.alloc(0) });
    await waitFor(page, () => /^empty\.vor: (?!reading)/.test(document.querySelector('.vor-status').textContent), 'the empty file read');
    assert.deepEqual(await status(), ['error', 'empty.vor: empty file, not a .vor capture']);
    await page.setInputFiles('input[type=file]', { name: 'header.vor', mimeType: 'application/octet-stream', buffer: bytes.subarray(0, 20) });
    await waitFor(page, () => /^header\.vor: (?!reading)/.test(document.querySelector('.vor-status').textContent), 'the header fragment read');
    assert.deepEqual(await status(), ['error', 'header.vor: ends before its first frame: not a complete capture']);
    assert.deepEqual(errors.filter((e) => !/favicon|api\/captures|404/.test(e)), []);
  } finally {
    await page.close();
    await server.close();
  }
});

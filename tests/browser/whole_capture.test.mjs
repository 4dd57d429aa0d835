// whole_capture.test.mjs: the panel on whole captures, in headless Chromium, against the real
// `vor serve` and captures written by vor's writer (vor_make_capture):
//   1. a served finished capture of 200,000 frames (more than the panel's 10,000-frame window):
//      the newest frame is shown first, without replaying the file; the overview strip covers every
//      frame; a click on the strip at the 278 ms spike loads that window and pins the spike; the
//      toolbar says which frames of how many; resuming goes back to the newest frames; "complete".
//   2. a capture still being written: the viewer starts at the newest frame and follows; paused,
//      the frames on screen stay (nothing evicted) while the overview keeps counting.
//   3. the same 200,000-frame file opened on the page (no server): the newest frames first, then
//      the whole capture indexed in the browser; the spike reachable from the strip; a garbage
//      file says why in the canvas, and opening it names it and drops the previous capture.
// Screenshots: build/screenshots/whole-*.png.
//
//   node whole_capture.test.mjs VOR MAKE_CAPTURE SITE_DIR
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { failWithoutBrowser, serveDirectory, launchBrowser, collectPageErrors, nextFrames, screenshot, startVorServe, waitForPage } from './harness.mjs';

const [vorBin, makeCapture, siteDir] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const shotDir = process.env.VOR_SCREENSHOT_DIR || path.resolve(here, '../../build/screenshots');
await failWithoutBrowser('browser_whole_capture');
fs.mkdirSync(shotDir, { recursive: true });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vor-whole-'));
const N = 200000, SPIKE = 123457;
const big = path.join(tmp, 'big.vor');
execFileSync(makeCapture, [big, '--frames', String(N), '--every', '4', '--spike-at', String(SPIKE)]);
const children = [];
let browser;

before(async () => { browser = await launchBrowser({ viewport: { width: 1280, height: 860 } }); });
after(async () => {
  await browser?.close();
  for (const c of children) c.kill('SIGINT');
  fs.rmSync(tmp, { recursive: true, force: true });
});

const serve = (file) => startVorServe(vorBin, [file], siteDir, children);
const waitFor = waitForPage;
const view = (page) => page.evaluate(() => window.vorPanel.viewState());
const statsText = (page) => page.evaluate(() => document.querySelector('.vor-stats').textContent);

/** Clicks the strip at the column of frame f. */
async function clickStripAt(page, f) {
  const box = await page.locator('canvas.vor-strip').boundingBox();
  const x = await page.evaluate(([frame, w]) => {
    const ov = window.vorPanel.overview;
    return ((frame - ov.firstFrame() + 0.5) / (ov.lastFrame() + 1 - ov.firstFrame())) * w;
  }, [f, box.width]);
  await page.mouse.click(box.x + x, box.y + box.height / 2);
}

/** Pixels of the strip that differ from its background (the bars drawn). */
async function stripPixels(page) {
  return page.evaluate(() => {
    const c = document.querySelector('canvas.vor-strip');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] !== d[0] || d[i + 1] !== d[1] || d[i + 2] !== d[2]) n++;
    return n;
  });
}

async function spikeReachable(page, label) {
  const overviewMax = await page.evaluate(() => { const ov = window.vorPanel.overview; return ov.index[ov.query(0, ov.count).argMax]; });
  assert.ok(Math.abs(overviewMax - SPIKE) <= 64, `${label}: the overview's maximum is the spike (${overviewMax})`);
  await clickStripAt(page, SPIKE);
  await waitFor(page, (f) => window.vorPanel.viewState().pinnedFrameIndex === f, `${label}: the spike pinned`, 30000, SPIKE);
  const s = await view(page);
  assert.ok(s.window[0] <= SPIKE && SPIKE <= s.window[1], `${label}: the window holds the spike (${s.window})`);
  assert.equal(s.paused, true, `${label}: an older window is shown paused`);
  assert.match(await statsText(page), new RegExp(`^frames #[\\d,]+–#[\\d,]+ of ${N.toLocaleString('en-US')} · `));
}

test('vor serve, a finished 200,000-frame capture: newest frame first, every frame reachable from the strip', async () => {
  const url = await serve(big);
  const page = await browser.context.newPage();
  const errors = collectPageErrors(page);
  try {
    const t0 = Date.now();
    await page.goto(url);
    await waitFor(page, (last) => window.vorPanel?.viewState().window?.[1] === last, 'the newest frame', 30000, N - 1);
    const newestMs = Date.now() - t0;
    console.log(`# newest frame shown ${newestMs} ms after navigation (${(fs.statSync(big).size / 1e6).toFixed(0)} MB capture)`);
    await waitFor(page, (n) => window.vorPanel.viewState().captureFrames === n, 'the whole capture indexed', 60000, N);
    await waitFor(page, () => /complete · 200,000 frames$/.test(document.querySelector('.vor-status').textContent), '"complete"');
    await nextFrames(page, 2);
    assert.ok((await stripPixels(page)) > 1000, 'the strip is drawn');
    const live = await view(page);
    assert.ok(live.frames <= 10000 && live.frames > 100, `a window of the capture is held (${live.frames})`);
    await screenshot(page, path.join(shotDir, 'whole-served-newest.png'));
    await spikeReachable(page, 'served');
    await screenshot(page, path.join(shotDir, 'whole-served-spike.png'));
    // resume: back to the newest frames
    await page.keyboard.press('Space');
    await waitFor(page, (last) => window.vorPanel.viewState().window?.[1] === last && !window.vorPanel.viewState().paused, 'the newest frames again', 30000, N - 1);
    assert.deepEqual(errors.filter((e) => !/favicon/.test(e)), []);
  } finally {
    await page.close();
  }
});

test('vor serve, a capture still being written: the newest frame first, followed; paused, nothing leaves the screen', async () => {
  const file = path.join(tmp, 'live.vor');
  const writer = spawn(makeCapture, [file, '--frames', '50000', '--every', '2', '--live-fps', '200', '--live-frames', '200000'], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(writer);
  await new Promise((resolve) => { let t = ''; writer.stdout.on('data', (d) => { t += d; if (/LIVE/.test(t)) resolve(); }); });
  const url = await serve(file);
  const page = await browser.context.newPage();
  const errors = collectPageErrors(page);
  try {
    await page.goto(url + '?history=2000');
    await waitFor(page, () => (window.vorPanel?.viewState().window?.[1] ?? 0) >= 50000, 'a frame written after the first 50,000');
    const a = (await view(page)).window[1];
    await waitFor(page, (n) => window.vorPanel.viewState().window[1] > n + 20, 'the viewer follows the file', 20000, a);
    // the index of a growing capture is still being fetched when the first frames arrive: the
    // status says "indexing…" until it is whole, then "live"
    await waitFor(page, () => /: live · [\d,]+ frames$/.test(document.querySelector('.vor-status').textContent), 'the status says live', 30000);
    await page.keyboard.press('Space');
    await waitFor(page, () => window.vorPanel.viewState().paused, 'paused');
    const frozen = await view(page);
    const n0 = frozen.captureFrames;
    await waitFor(page, (n) => window.vorPanel.viewState().captureFrames > n + 100, 'the overview counts on while paused', 20000, n0);
    const still = await view(page);
    assert.deepEqual(still.window, frozen.window, 'paused: the frames held stay');
    await screenshot(page, path.join(shotDir, 'whole-live-paused.png'));
    await page.keyboard.press('Space');
    await waitFor(page, (n) => window.vorPanel.viewState().window[1] > n, 'resumed: the newest frames again', 20000, still.captureFrames - 1);
    assert.deepEqual(errors.filter((e) => !/favicon/.test(e)), []);
  } finally {
    await page.close();
    writer.kill('SIGINT');
  }
});

test('a 200,000-frame file opened on the page: newest frames first, indexed in the browser, the spike reachable', async () => {
  const server = await serveDirectory(siteDir); // a plain static server: no /api/captures
  const page = await browser.context.newPage();
  const errors = collectPageErrors(page);
  try {
    await page.goto(server.url);
    await waitFor(page, () => window.vorPanel, 'the panel');
    const t0 = Date.now();
    await page.setInputFiles('input[type=file]', big);
    await waitFor(page, (last) => window.vorPanel.viewState().window?.[1] === last, 'the newest frame', 60000, N - 1);
    console.log(`# file: newest frame shown ${Date.now() - t0} ms after opening`);
    await waitFor(page, () => /^big\.vor: complete · 200,000 frames$/.test(document.querySelector('.vor-status').textContent), 'indexed', 120000);
    console.log(`# file: indexed ${Date.now() - t0} ms after opening`);
    assert.equal((await view(page)).captureFrames, N);
    await spikeReachable(page, 'file');
    await screenshot(page, path.join(shotDir, 'whole-file-spike.png'));
    // a garbage file: the previous capture goes, the name is the new file's, the canvas says why
    await page.setInputFiles('input[type=file]', { name: 'garbage.vor', mimeType: 'application/octet-stream', buffer: Buffer.from('this is not a capture at all, just some words '.repeat(20)) });
    await waitFor(page, () => /^garbage\.vor: (?!opening|reading)/.test(document.querySelector('.vor-status').textContent), 'the garbage file read');
    const g = await view(page);
    assert.equal(g.frames, 0);
    assert.equal(g.captureFrames, 0);
    assert.equal(g.paused, false);
    const notice = await page.evaluate(() => { const n = document.querySelector('.vor-notice'); return n.hidden ? '' : n.textContent; });
    assert.match(notice, /garbage\.vor: .+/);
    await screenshot(page, path.join(shotDir, 'whole-file-garbage.png'));
    assert.deepEqual(errors.filter((e) => !/favicon|api\/captures|404/.test(e)), []);
  } finally {
    await page.close();
    await server.close();
  }
});

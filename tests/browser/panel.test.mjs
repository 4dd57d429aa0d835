// Browser tests of the panel (web/) in headless Chromium: it is fed synthetic frame views through the
// in-page source, and every check reads canvas pixels or the panel's view state: the regions are
// drawn, and pinning, range zoom, pause, the flame chart's zoom/pan/reset and tooltips change what is
// drawn; a redraw allocates no large scratch; 4,096 metric columns keep the canvas and the memory
// bounded. Also the standalone page: its message without any source, a websocket stream from a fake
// `vor serve` (an unreadable one closed with a code the browser accepts) and files chosen with the
// file input (also while the decoder is still loading), all through the test stand-in decoder.
// Screenshots of each state go to build/screenshots/panel-*.png (VOR_SCREENSHOT_DIR overrides).
//
// Run: node tests/browser/panel.test.mjs

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  failWithoutBrowser, serveDirectory, launchBrowser, collectPageErrors, canvasRegionStats,
  hexToRgb, nextFrames, screenshot,
} from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const webDir = path.join(repo, 'web');
const testsDir = path.join(repo, 'tests');
const shotDir = process.env.VOR_SCREENSHOT_DIR || path.join(repo, 'build', 'screenshots');

// scripts/setup.sh installs Chromium and playwright-core; without them this test fails
// (saying why) rather than passing without having run.
await failWithoutBrowser('browser_panel');

// theme colours the checks look for (web/colors.js THEME)
const { THEME } = await import(path.join(webDir, 'colors.js'));
const BG = hexToRgb(THEME.region);
const CANVAS = '.vor-canvas';

let server, browser, page, errors;

before(async () => {
  server = await serveDirectory(webDir, { mounts: { '/__tests__/': testsDir } });
  browser = await launchBrowser({ viewport: { width: 1280, height: 800 } });
  page = browser.page;
  errors = collectPageErrors(page);
  await page.goto(`${server.url}__tests__/browser/fixtures/panel_test.html`);
  await page.waitForFunction(() => window.vorTestReady === true);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const state = () => page.evaluate(() => window.vorTest.panel.viewState());
const regions = () => page.evaluate(() => window.vorTest.panel.regions());
const shot = (name) => screenshot(page, path.join(shotDir, `panel-${name}.png`));
const stats = (rect, bg = BG) => canvasRegionStats(page, CANVAS, rect, bg);
async function settle() { await nextFrames(page, 3); }
async function canvasOrigin() {
  return page.evaluate((sel) => { const r = document.querySelector(sel).getBoundingClientRect(); return { x: r.left, y: r.top }; }, CANVAS);
}
async function toPage(x, y) { const o = await canvasOrigin(); return [o.x + x, o.y + y]; }
async function frameX(index) { return page.evaluate((i) => window.vorTest.panel.xOfFrameIndex(i), index); }
async function barPoint(index) {
  const r = await regions();
  return toPage(await frameX(index), r.bars.chart.y + r.bars.chart.h - 4);
}

test('draws the frame bars, one plot per metric and the flame chart', async () => {
  const n = await page.evaluate(() => window.vorTest.feed({ frames: 600 }));
  assert.equal(n, 600);
  await settle();
  const r = await regions();
  const s = await state();
  assert.equal(s.frames, 600);
  assert.equal(s.paused, false);

  const bars = await stats(r.bars.chart);
  assert.ok(bars.count(hexToRgb(THEME.barOk)) > 2000, 'within-budget bars are drawn');
  assert.ok(bars.count(hexToRgb(THEME.barOver)) > 20, 'over-budget bars are drawn in their colour');
  assert.ok(bars.count(hexToRgb(THEME.barBad)) > 20, 'frames over twice the budget are drawn in theirs');

  // system columns first, frame_ms is the bars (not a plot)
  assert.equal(r.plots.length, 5, 'memory_mb, wasm_heap_mb, io_ms, loss, tokens_per_s');
  for (const [i, p] of r.plots.entries()) {
    const ps = await stats(p.chart, hexToRgb(i % 2 ? THEME.regionAlt : THEME.region));
    assert.ok(ps.count(hexToRgb(THEME.plotLine), 40) > 150, `plot ${i} has its line drawn`);
  }
  const loss = await stats(r.plots[3].chart);
  assert.ok(loss.count(hexToRgb(THEME.plotNonFinite), 20) > 8, 'NaN and +Infinity losses are marked');

  const flame = await stats(r.flame.chart);
  assert.ok(flame.differing > flame.pixels * 0.2, `flame chart drawn (${flame.differing}/${flame.pixels})`);
  assert.ok(flame.colors > 8, 'flame spans in several site colours');
  assert.ok(s.flameScopes > 50, 'the latest frame with scopes is shown live');

  const chip = await page.textContent('.vor-overhead');
  assert.match(chip, /vor 14 µs\/frame · 0\.\d+%/);
  await shot('live');
});

test('the clock chip: hidden until a clock is declared, the step, amber at 100 µs with the fix in its title', async () => {
  const chipState = () => page.evaluate(() => {
    window.vorTest.panel.draw();
    const c = document.querySelector('.vor-clock');
    return { hidden: c.hidden, text: c.textContent, coarse: c.dataset.coarse, title: c.title, background: getComputedStyle(c).backgroundColor };
  });
  assert.equal((await chipState()).hidden, true, 'no clock declared by the synthetic feed');
  await page.evaluate(() => window.vorTest.panel.pushDeclarations({ clock: { resolution_ns: 5000, source: 'performance.now', cross_origin_isolated: true } }));
  const fine = await chipState();
  assert.deepEqual([fine.hidden, fine.text, fine.coarse], [false, 'clock 5 µs', 'false']);
  assert.match(fine.title, /cross-origin isolated/);
  await page.evaluate(() => window.vorTest.panel.pushDeclarations(JSON.stringify({ clock: { resolution_ns: 100000, source: 'performance.now', cross_origin_isolated: false } })));
  const coarse = await chipState();
  assert.deepEqual([coarse.hidden, coarse.text, coarse.coarse], [false, 'clock 100 µs', 'true']);
  assert.match(coarse.title, /Cross-Origin-Opener-Policy: same-origin.*Cross-Origin-Embedder-Policy: require-corp/);
  const warn = await page.evaluate(() => getComputedStyle(document.querySelector('.vor-panel')).getPropertyValue('--vor-warn').trim());
  const [r, g, b] = hexToRgb(warn);
  assert.equal(coarse.background, `rgb(${r}, ${g}, ${b})`, 'amber');
  await page.evaluate(() => window.vorTest.panel.pushDeclarations({ clock: { resolution_ns: 'x' } }));
  assert.equal((await chipState()).text, 'clock 100 µs', 'a malformed clock is ignored');
  await shot('clock-chip');
});

test('a redraw allocates no large scratch (the plot line points are kept by the panel)', async () => {
  assert.ok((await state()).frames >= 600, 'the plots have lines to draw');
  const big = await page.evaluate(() => {
    const panel = window.vorTest.panel;
    for (let i = 0; i < 3; i++) panel.draw(); // warm: scratch that grows once
    const Native = window.Float64Array;
    let n = 0;
    window.Float64Array = class extends Native {
      constructor(...args) { super(...args); if (this.length >= 1024) n++; }
    };
    try { for (let i = 0; i < 10; i++) panel.draw(); } finally { window.Float64Array = Native; }
    return n;
  });
  assert.equal(big, 0, 'Float64Arrays of 1,024+ elements allocated by 10 redraws');
});

test('clicking a frame bar pins that frame in every graph and pauses', async () => {
  const r = await regions();
  const flameBefore = await stats(r.flame.chart);
  const plotBefore = await stats(r.plots[0].chart);
  const [x, y] = await barPoint(137);
  await page.mouse.click(x, y);
  await settle();
  const s = await state();
  assert.equal(s.paused, true);
  assert.equal(s.pinnedFrameIndex, 137);
  assert.equal(await page.textContent('.vor-pause'), '▶ Resume');
  const flameAfter = await stats(r.flame.chart);
  assert.notEqual(flameAfter.hash, flameBefore.hash, 'the flame chart now shows frame #137');
  assert.ok(Math.abs(s.flameWindowNs[1] - s.flameWindowNs[0] - 48e6) < 1e3, 'the flame window is that 48 ms frame');
  const plotAfter = await stats(r.plots[0].chart);
  assert.notEqual(plotAfter.hash, plotBefore.hash, 'the pinned cursor is drawn across the plots');
  const pinLine = await stats({ x: x - (await canvasOrigin()).x - 1, y: r.plots[2].chart.y, w: 3, h: r.plots[2].chart.h }, null);
  assert.ok(pinLine.count(hexToRgb(THEME.pinned), 30) > 5, 'the pinned frame line crosses the plots');
  await page.mouse.move(x, y);
  await settle();
  assert.match((await state()).tooltip, /Frame #137[\s\S]*48 ms[\s\S]*over budget/);
  await shot('pinned');
});

test('while paused incoming frames do not move the graphs; space resumes and pauses', async () => {
  const r = await regions();
  await page.mouse.move(5, 5);
  await settle();
  const before = await stats(r.bars.chart);
  await page.evaluate(() => window.vorTest.feed({ frames: 60, startIndex: 600, seed: 2 }));
  await settle();
  assert.equal((await state()).frames, 660);
  assert.equal((await stats(r.bars.chart)).hash, before.hash, 'frozen while paused');

  await page.keyboard.press('Space');
  await settle();
  let s = await state();
  assert.equal(s.paused, false);
  assert.equal(s.pinnedFrameIndex, null);
  assert.equal(s.framesInView, 660);
  assert.notEqual((await stats(r.bars.chart)).hash, before.hash, 'resumed: the new frames are drawn');
  await shot('resumed');

  await page.keyboard.press('Space');
  await settle();
  s = await state();
  assert.equal(s.paused, true);
  await page.click('.vor-pause');
  await settle();
  assert.equal((await state()).paused, false, 'the pause button resumes too');
});

test('shift-drag on the bars zooms every graph to that frame range and pins its slowest frame', async () => {
  const r = await regions();
  const barsBefore = await stats(r.bars.chart);
  const plotBefore = await stats(r.plots[1].chart);
  const [x0, y] = await barPoint(100);
  const [x1] = await barPoint(200);
  await page.keyboard.down('Shift');
  await page.mouse.move(x0, y);
  await page.mouse.down();
  await page.mouse.move((x0 + x1) / 2, y, { steps: 4 });
  await settle();
  const sel = await stats(r.bars.chart);
  assert.notEqual(sel.hash, barsBefore.hash, 'the selection is shown while dragging');
  await page.mouse.move(x1, y, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await settle();
  const s = await state();
  assert.deepEqual(s.range, [100, 200]);
  assert.equal(s.framesInView, 101);
  assert.equal(s.pinnedFrameIndex, 137, 'the slowest frame of the range is pinned');
  assert.equal(s.paused, true);
  assert.ok(s.flameScopes > 100 * 80, `the flame chart holds the whole range (${s.flameScopes} scopes)`);
  assert.notEqual((await stats(r.bars.chart)).hash, barsBefore.hash);
  assert.notEqual((await stats(r.plots[1].chart)).hash, plotBefore.hash, 'plots zoom with the bars');
  await page.mouse.move(5, 5);
  await settle();
  await shot('range');

  // clicking a bar inside the range pins it and frames it in the flame chart
  const [xp, yp] = await barPoint(150);
  await page.mouse.click(xp, yp);
  await settle();
  const s2 = await state();
  assert.equal(s2.pinnedFrameIndex, 150);
  assert.deepEqual(s2.range, [100, 200]);
  assert.ok(s2.flameWindowNs[1] - s2.flameWindowNs[0] < 30e6, 'flame window framed on frame #150');

  // double-click on the bars shows all frames again
  await page.mouse.dblclick(xp, yp);
  await settle();
  assert.equal((await state()).range, null);
});

test('wheel zooms, drag pans and double-click resets the flame chart', async () => {
  await page.evaluate(() => window.vorTest.panel.pinFrameIndex(137));
  await settle();
  const r = await regions();
  const home = (await state()).flameWindowNs;
  const before = await stats(r.flame.chart);
  const [cx, cy] = await toPage(r.flame.chart.x + r.flame.chart.w * 0.3, r.flame.chart.y + 60);
  await page.mouse.move(cx, cy);
  await page.mouse.wheel(0, -400);
  await settle();
  const zoomed = (await state()).flameWindowNs;
  const span0 = home[1] - home[0], span1 = zoomed[1] - zoomed[0];
  assert.ok(span1 < span0 * 0.6, `wheel zooms in (${span0} -> ${span1})`);
  const anchor0 = home[0] + span0 * 0.3, anchor1 = zoomed[0] + span1 * 0.3;
  assert.ok(Math.abs(anchor1 - anchor0) < span0 * 0.01, 'the time under the cursor stays put');
  const afterZoom = await stats(r.flame.chart);
  assert.notEqual(afterZoom.hash, before.hash);
  await page.mouse.move(5, 5);
  await settle();
  await shot('flame-zoom');

  await page.mouse.move(cx, cy);
  await page.mouse.down();
  await page.mouse.move(cx + 200, cy, { steps: 5 });
  await page.mouse.up();
  await settle();
  const panned = (await state()).flameWindowNs;
  assert.ok(panned[0] < zoomed[0], 'dragging right shows earlier time');
  assert.ok(Math.abs((panned[1] - panned[0]) - span1) < 1, 'panning keeps the zoom');
  assert.equal((await state()).pinnedFrameIndex, 137, 'dragging the flame chart does not re-pin');
  assert.notEqual((await stats(r.flame.chart)).hash, afterZoom.hash);

  await page.mouse.dblclick(cx, cy);
  await settle();
  assert.deepEqual((await state()).flameWindowNs, home, 'double-click resets to the whole frame');
});

test('hovering a flame span shows its name, source, duration and self time', async () => {
  const r = await regions();
  // main lane (first), depth 0: the "frame" scope spans the whole pinned frame
  const [x, y] = await toPage(r.flame.chart.x + r.flame.chart.w / 2, r.flame.chart.y + 20 + 9);
  await page.mouse.move(x, y);
  await settle();
  const tip = (await state()).tooltip;
  assert.ok(tip, 'a tooltip is shown');
  assert.match(tip, /^frame\n/);
  assert.match(tip, /source\tmain\.c:40/);
  assert.match(tip, /duration\t4\d(\.\d+)? ms/);
  assert.match(tip, /self\t[\d.]+ [µm]?s \(\d+%\)/);
  assert.match(tip, /thread\tmain/);
  const visible = await page.isVisible('.vor-tooltip');
  assert.ok(visible);
  await shot('tooltip');
  // depth 1: a child, with self time below its duration
  await page.mouse.move(x, y + 18);
  await settle();
  const tip2 = (await state()).tooltip;
  assert.match(tip2, /^(update|render|present)\n/);
  await page.mouse.move(5, 5);
  await settle();
  assert.equal((await state()).tooltip, null, 'the tooltip goes away');
});

test('sub-pixel spans merge into buckets instead of vanishing (100k scopes in one frame)', async () => {
  await page.evaluate(() => window.vorTest.feed({ frames: 3, startIndex: 700, seed: 3, bigFrameAt: 701, bigFrameScopes: 100000 }));
  await page.evaluate(() => window.vorTest.panel.pinFrameIndex(701));
  await settle();
  const s = await state();
  assert.ok(s.flameScopes >= 100000);
  assert.ok(s.flameStats.merged > 100, 'buckets were drawn');
  assert.ok(s.flameStats.rects < s.flameStats.spans / 10, `${s.flameStats.rects} rects for ${s.flameStats.spans} spans`);
  const r = await regions();
  // the leaf row (main lane, depth 3) is covered, not empty
  const row = await stats({ x: r.flame.chart.x, y: r.flame.chart.y + 20 + 3 * 18 + 2, w: r.flame.chart.w, h: 12 });
  assert.ok(row.differing > row.pixels * 0.6, `dense row stays visible (${row.differing}/${row.pixels})`);
  // hovering a bucket explains it
  const [x, y] = await toPage(r.flame.chart.x + r.flame.chart.w * 0.2, r.flame.chart.y + 20 + 3 * 18 + 9);
  await page.mouse.move(x, y);
  await settle();
  assert.match((await state()).tooltip ?? '', /spans merged|duration/);
  await shot('dense');
  await page.mouse.move(5, 5);
});

test('malformed frame views are rejected, counted and reported, never drawn', async () => {
  const before = await state();
  const ok = await page.evaluate(() => {
    const bad = new Uint8Array(80);
    bad.set([1, 2, 3, 4]);
    return window.vorTest.source.pushFrame(bad);
  });
  assert.equal(ok, false);
  await settle();
  const s = await state();
  assert.equal(s.frames, before.frames);
  assert.equal(s.rejected, 1);
  assert.match(await page.textContent('.vor-stats'), /1 rejected/);
  assert.match(await page.getAttribute('.vor-stats', 'title'), /bad magic/);
});

test('the panel stays within budget drawing 10,000 frames of history', async () => {
  await page.keyboard.press('Escape'); // resume: follow the stream again
  await page.evaluate(() => window.vorTest.feed({ frames: 10000, startIndex: 1000, seed: 4, flameEvery: 8 }));
  await settle();
  const s = await state();
  assert.equal(s.frames, 10000, 'the ring holds the default 10,000 frames');
  assert.equal(s.framesInView, 10000);
  assert.equal(s.paused, false);
  const times = await page.evaluate(async () => {
    const out = [];
    for (let i = 0; i < 10; i++) {
      await new Promise((resolve) => requestAnimationFrame(resolve)); // one draw per frame, as the panel does
      out.push(window.vorTest.panel.draw());
    }
    return out;
  });
  times.sort((a, b) => a - b);
  console.log(`# draw with 10k frames: median ${times[5].toFixed(1)} ms`);
  assert.ok(times[5] < 100, 'a full redraw is far below 100 ms even on a loaded machine');
  await shot('history');
  assert.deepEqual(errors, [], 'no page errors');
});

test('4,096 metric columns: 64 plots, only the visible ones drawn, canvas and memory bounded', async () => {
  const p = await browser.context.newPage();
  const errs = collectPageErrors(p);
  try {
    await p.goto(`${server.url}__tests__/browser/fixtures/panel_test.html?history=100000`);
    await p.waitForFunction(() => window.vorTestReady === true);
    const fed = await p.evaluate(() => {
      const { panel, source, encodeFrameView } = window.vorTest;
      const columns = [{ id: 0, name: 'frame_ms', unit: 'ms', system: true }];
      for (let id = 1; id < 4096; id++) columns.push({ id, name: `metric_${id}`, unit: '' });
      source.pushDeclarations(JSON.stringify({ columns }));
      let ok = 0;
      for (let i = 0; i < 60; i++) {
        const values = columns.map((c) => [c.id, c.id === 0 ? 10 + (i % 7) : Math.sin(i / 5 + c.id)]);
        if (source.pushFrame(encodeFrameView({ frameIndex: i, startNs: i * 2e7, durationNs: 1e7, values }))) ok++;
      }
      panel.draw();
      return ok;
    });
    assert.equal(fed, 60, 'every frame stored');
    const canvas = await p.evaluate(() => { const c = document.querySelector('.vor-canvas'); return { h: c.height, w: c.width, css: c.clientHeight }; });
    assert.ok(canvas.h <= 16384 && canvas.css < 4000, `canvas ${canvas.w}x${canvas.h} (${canvas.css} CSS px)`);
    const r = await p.evaluate(() => window.vorTest.panel.regions());
    const bars = await canvasRegionStats(p, CANVAS, r.bars.chart, BG);
    assert.ok(bars.count(hexToRgb(THEME.barOk)) > 500, 'the bars are drawn');
    assert.equal(r.plots.length, 64, 'at most 64 plots');
    const s = await p.evaluate(() => window.vorTest.panel.viewState());
    assert.equal(s.rejected, 0);
    assert.equal(s.plots, 64);
    assert.equal(s.hiddenColumns, 4095 - 64);
    assert.match(await p.textContent('.vor-stats'), /4,031 more metrics not plotted/);
    assert.ok(s.plotsDrawn > 0 && s.plotsDrawn < 30, `only the plots in view are drawn (${s.plotsDrawn})`);
    const bytes = await p.evaluate(() => window.vorTest.panel.store.ringBytes());
    assert.ok(bytes < 100000 * (100 + 9 * 64), `the ring holds ${bytes} bytes at 100,000 frames of history`);
    const line = hexToRgb(THEME.plotLine);
    const first = await canvasRegionStats(p, CANVAS, r.plots[0].chart);
    assert.ok(first.count(line, 40) > 50, 'the first plot is drawn');
    const last = r.plots.at(-1);
    assert.equal((await canvasRegionStats(p, CANVAS, last.chart)).count(line, 40), 0, 'the last plot is out of view, not drawn');
    await screenshot(p, path.join(shotDir, 'panel-many-columns.png'));
    await p.evaluate((y) => { document.querySelector('.vor-scroll').scrollTop = y; }, last.y);
    await nextFrames(p, 3);
    assert.ok((await canvasRegionStats(p, CANVAS, last.chart)).count(line, 40) > 50, 'scrolled into view: drawn');
    assert.deepEqual(errs, []);
  } finally {
    await p.close();
  }
});

test('the standalone page says why there is nothing to show without a source or decoder', async () => {
  const p = await browser.context.newPage();
  const errs = collectPageErrors(p);
  await p.goto(server.url);
  await p.waitForSelector('.vor-notice:not([hidden])');
  const text = await p.textContent('.vor-notice');
  assert.match(text, /No data source/);
  assert.match(text, /capture_decoder\.js/);
  assert.match(await p.textContent('.vor-status'), /no capture server/);
  await screenshot(p, path.join(shotDir, 'panel-no-source.png'));
  assert.deepEqual(errs.filter((e) => !/Failed to load resource.*404/.test(e)), []);
  await p.close();
});

test('the standalone page streams captures from a vor serve websocket and opens chosen files', async () => {
  const { WebSocketServer } = await import('ws');
  const { generateSession } = await import(path.join(testsDir, 'web', 'synthetic.mjs'));
  const { buildTestCapture } = await import(path.join(testsDir, 'web', 'test_capture.mjs'));
  const sessions = [generateSession({ frames: 300, seed: 5 }), generateSession({ frames: 120, seed: 6, flameEvery: 3 })];
  const files = sessions.map((s) => buildTestCapture(s.declarations, s.frames));
  files.push(new TextEncoder().encode('these bytes are no capture at all'));
  const api = {
    captures: [
      { id: '0', name: 'run.vor', bytes: files[0].byteLength, ws: '/capture/0' },
      { id: '1', name: 'train.vor', bytes: files[1].byteLength, ws: '/capture/1' },
      { id: '2', name: 'junk.vor', bytes: files[2].byteLength, ws: '/capture/2' },
    ],
  };
  const srv = await serveDirectory(webDir, {
    mounts: { '/capture_decoder.js': path.join(testsDir, 'web', 'test_capture.mjs') },
    routes: {
      '/api/captures': (req, res) => { res.writeHead(200, { 'Content-Type': 'application/json' }); res.end(JSON.stringify(api)); },
    },
  });
  const protocols = [];
  const closeCodes = {}; // capture id -> close code the server received from the page
  const wss = new WebSocketServer({ server: srv.httpServer, handleProtocols: (set) => (set.has('vor-capture') ? 'vor-capture' : false) });
  wss.on('connection', (ws, req) => {
    protocols.push(ws.protocol);
    const id = Number(req.url.split('/').pop());
    ws.on('close', (code) => { closeCodes[id] = code; });
    const bytes = files[id];
    for (let off = 0; off < bytes.byteLength; off += 7777) ws.send(bytes.subarray(off, off + 7777));
    if (id !== 2) ws.send(JSON.stringify({ type: 'end' })); // junk.vor: the server would go on streaming
  });
  const p = await browser.context.newPage();
  const errs = collectPageErrors(p);
  try {
    await p.goto(`${srv.url}?capture=0`);
    await p.waitForFunction(() => /complete/.test(document.querySelector('.vor-status')?.textContent ?? ''));
    await nextFrames(p, 2);
    assert.match(await p.textContent('.vor-status'), /run\.vor: complete · 300 frames/);
    assert.deepEqual(protocols, ['vor-capture']);
    const options = await p.$$eval('.vor-capture-picker option', (os) => os.map((o) => o.textContent));
    assert.equal(options.length, 3);
    assert.match(options[1], /train\.vor/);
    assert.match(await p.textContent('.vor-stats'), /^300 frames/);
    assert.equal(await p.isHidden('.vor-notice'), true);
    await nextFrames(p, 3);
    const flame = await p.evaluate(() => {
      const c = document.querySelector('.vor-canvas');
      return c.getContext('2d').getImageData(0, c.height - 100, c.width, 50).data.some((v, i) => i % 4 === 0 && v > 60);
    });
    assert.ok(flame, 'the streamed frames are drawn');
    await screenshot(p, path.join(shotDir, 'panel-websocket.png'));

    await p.selectOption('.vor-capture-picker', '1');
    await p.waitForFunction(() => /train\.vor: complete/.test(document.querySelector('.vor-status')?.textContent ?? ''));
    await nextFrames(p, 2);
    assert.match(await p.textContent('.vor-stats'), /^120 frames/);
    assert.match(p.url(), /capture=1/);

    // an unreadable stream: the page closes the socket itself (WebSocket.close() throws on 1003)
    await p.selectOption('.vor-capture-picker', '2');
    await p.waitForFunction(() => /junk\.vor: capture unreadable/.test(document.querySelector('.vor-status')?.textContent ?? ''));
    for (let i = 0; i < 100 && closeCodes[2] === undefined; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(closeCodes[2], 4003, 'the server was told to stop sending');
    // this stand-in server has no random access (/api/captures/<id>/index...): the page's probes get 404
    // and it streams the capture from its start instead
    assert.deepEqual(errs.filter((e) => !/Failed to load resource.*404/.test(e)), []);

    await p.setInputFiles('.vor-file input', { name: 'run.vor', mimeType: 'application/octet-stream', buffer: Buffer.from(files[0]) });
    await p.waitForFunction(() => /run\.vor: 300 frames/.test(document.querySelector('.vor-status')?.textContent ?? ''));
    await nextFrames(p, 2);
    assert.match(await p.textContent('.vor-stats'), /^300 frames/);

    await p.setInputFiles('.vor-file input', { name: 'junk.vor', mimeType: 'application/octet-stream', buffer: Buffer.from('not a capture at all') });
    await p.waitForFunction(() => /junk\.vor: capture unreadable/.test(document.querySelector('.vor-status')?.textContent ?? ''));
    // this stand-in server has no random access (/api/captures/<id>/index...): the page's probes get 404
    // and it streams the capture from its start instead
    assert.deepEqual(errs.filter((e) => !/Failed to load resource.*404/.test(e)), []);
  } finally {
    await p.close();
    wss.close();
    await srv.close();
  }
});

test('the standalone page: files opened while the decoder loads, only the last one is read', async () => {
  const { generateSession } = await import(path.join(testsDir, 'web', 'synthetic.mjs'));
  const { buildTestCapture } = await import(path.join(testsDir, 'web', 'test_capture.mjs'));
  const [a, b] = [generateSession({ frames: 300, seed: 7 }), generateSession({ frames: 120, seed: 8 })]
    .map((x) => Buffer.from(buildTestCapture(x.declarations, x.frames)));
  let release;
  const gate = new Promise((r) => { release = r; });
  const decoderSource = fs.readFileSync(path.join(testsDir, 'web', 'test_capture.mjs'));
  const srv = await serveDirectory(webDir, {
    routes: { // the decoder module arrives late (a slow network); no /api/captures
      '/capture_decoder.js': async (req, res) => {
        await gate;
        res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-store' });
        res.end(decoderSource);
      },
    },
  });
  const p = await browser.context.newPage();
  const errs = collectPageErrors(p);
  try {
    await p.goto(srv.url);
    await p.waitForSelector('.vor-file input', { state: 'attached' });
    await p.evaluate(() => {
      window.statuses = [];
      const el = document.querySelector('.vor-status');
      new MutationObserver(() => window.statuses.push([el.dataset.kind, el.textContent])).observe(el, { childList: true, characterData: true, subtree: true });
    });
    await p.setInputFiles('.vor-file input', { name: 'a.vor', mimeType: 'application/octet-stream', buffer: a });
    await p.setInputFiles('.vor-file input', { name: 'b.vor', mimeType: 'application/octet-stream', buffer: b });
    release();
    await p.waitForFunction(() => /b\.vor: \d+ frames|error/.test(window.statuses.map((x) => x.join(' ')).join('\n')));
    await new Promise((r) => setTimeout(r, 300)); // anything late (a second reader, the page's own start) would show by now
    await nextFrames(p, 2);
    const statuses = await p.evaluate(() => window.statuses);
    assert.deepEqual(statuses.filter(([k]) => k === 'error'), [], 'no error status');
    assert.ok(!statuses.some(([, t]) => /a\.vor/.test(t)), `a.vor was never read: ${JSON.stringify(statuses)}`);
    assert.equal(await p.textContent('.vor-status'), 'b.vor: 120 frames');
    assert.equal((await p.evaluate(() => window.vorPanel.viewState())).frames, 120);
    assert.equal(await p.isHidden('.vor-notice'), true, 'the page did not cover the file with its "open a capture" notice');
    assert.deepEqual(errs.filter((e) => !/Failed to load resource.*404/.test(e)), []);
  } finally {
    release();
    await p.close();
    await srv.close();
  }
});

test('HiDPI: the canvas is backed at devicePixelRatio and still drawn', async () => {
  const hi = await launchBrowser({ viewport: { width: 900, height: 700 }, deviceScaleFactor: 2 });
  try {
    await hi.page.goto(`${server.url}__tests__/browser/fixtures/panel_test.html`);
    await hi.page.waitForFunction(() => window.vorTestReady === true);
    await hi.page.evaluate(() => window.vorTest.feed({ frames: 300 }));
    await nextFrames(hi.page, 3);
    const dims = await hi.page.evaluate(() => { const c = document.querySelector('.vor-canvas'); return [c.width, c.clientWidth, c.height, c.clientHeight]; });
    assert.equal(dims[0], dims[1] * 2);
    assert.equal(dims[2], dims[3] * 2);
    const r = await hi.page.evaluate(() => window.vorTest.panel.regions());
    const bars = await canvasRegionStats(hi.page, CANVAS, r.bars.chart, BG);
    assert.ok(bars.count(hexToRgb(THEME.barOk)) > 4000);
    await screenshot(hi.page, path.join(shotDir, 'panel-hidpi.png'));
  } finally {
    await hi.close();
  }
});

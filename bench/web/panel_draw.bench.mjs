// Panel draw benchmark: headless Chromium, the panel from web/ holding 10,000 frames of history
// (the default ring) and a flame chart of 100,000 scopes, timed over repeated full redraws
// (performance.now around panel.draw(): bars, every plot, the flame chart, overlays).
// Prints median and p95 per scenario; asserts nothing. Target: <= 16 ms per draw.
//
//   node bench/web/panel_draw.bench.mjs [--draws 50] [--width 1600] [--height 1000]
//
// "draw" is the draw call as the panel makes it, once per animation frame (the browser presents in
// between): the JavaScript side, canvas commands recorded. "draw+raster" also reads one pixel back,
// which forces Chromium to rasterise those commands before returning (software raster here:
// --disable-gpu): an upper bound on what one panel frame costs. The machine's load average is
// printed too: on a shared 2-core machine the p95 mostly measures the neighbours.

import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveDirectory, launchBrowser, browserUnavailableReason, nextFrames, collectPageErrors } from '../../tests/browser/harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const arg = (name, def) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? Number(process.argv[i + 1]) : def; };
const DRAWS = arg('draws', 50);
const WIDTH = arg('width', 1600);
const HEIGHT = arg('height', 1000);

const reason = await browserUnavailableReason();
if (reason) { console.log(`panel_draw: skipped (${reason})`); process.exit(0); }

const server = await serveDirectory(path.join(repo, 'web'), { mounts: { '/__tests__/': path.join(repo, 'tests') } });
const browser = await launchBrowser({ viewport: { width: WIDTH, height: HEIGHT } });
const { page } = browser;
const errors = collectPageErrors(page);
try {
  await page.goto(`${server.url}__tests__/browser/fixtures/panel_test.html`);
  await page.waitForFunction(() => window.vorTestReady === true);

  // 10,000 frames: a flame frame every 10th (~87 scopes each), one frame of 100,000 scopes near the end
  const ingest = await page.evaluate(() => {
    const s = window.vorTest.generateSession({ frames: 10000, flameEvery: 10, bigFrameAt: 9900, bigFrameScopes: 100000, seed: 11 });
    window.vorTest.source.pushDeclarations(s.declarations);
    const t0 = performance.now();
    for (const f of s.frames) window.vorTest.source.pushFrame(f);
    const ms = performance.now() - t0;
    return { ms, bytes: s.frames.reduce((n, f) => n + f.byteLength, 0) };
  });
  await nextFrames(page, 3);

  const measure = (setup) => page.evaluate(async ([n, setupSrc]) => {
    const panel = window.vorTest.panel;
    // eslint-disable-next-line no-new-func
    new Function('panel', setupSrc)(panel);
    const first = panel.draw(); // includes building the flame model for a new selection
    const ctx = panel.canvas.getContext('2d');
    const draw = [], raster = [];
    const nextFrame = () => new Promise((resolve) => requestAnimationFrame(resolve));
    for (let i = 0; i < n; i++) { await nextFrame(); draw.push(panel.draw()); }
    for (let i = 0; i < n; i++) {
      await nextFrame();
      const t0 = performance.now();
      panel.draw();
      ctx.getImageData(0, 0, 1, 1);
      raster.push(performance.now() - t0);
    }
    const st = panel.viewState();
    return { first, draw, raster, scopes: st.flameScopes, stats: st.flameStats, frames: st.framesInView };
  }, [DRAWS, setup]);

  const scenarios = [
    ['live: 10k frames in view, latest flame frame', 'panel.resume();'],
    ['pinned frame with 100k scopes, whole frame', 'panel.pinFrameIndex(9900);'],
    ['range of 1,000 frames (incl. the 100k-scope frame)', 'panel.resume(); panel.zoomFrameIndexRange(8901, 9900);'],
  ];
  const q = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * (s.length - 1) + 0.5))]; };
  const f = (x) => x.toFixed(2).padStart(7);
  console.log(`panel_draw: Chromium headless, ${WIDTH}x${HEIGHT} CSS px, dpr 1, ${DRAWS} draws per scenario, load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} on ${os.cpus().length} cores`);
  console.log(`ingest: 10,000 frame views (${(ingest.bytes / 1e6).toFixed(1)} MB) parsed and stored in ${ingest.ms.toFixed(0)} ms (${(ingest.ms / 10).toFixed(1)} µs/frame)`);
  console.log(`${'scenario'.padEnd(58)} ${'scopes'.padStart(7)} ${'rects'.padStart(6)}  first  | draw median    p95 | draw+raster median    p95`);
  for (const [name, setup] of scenarios) {
    const r = await measure(setup);
    console.log(`${name.padEnd(58)} ${String(r.scopes).padStart(7)} ${String(r.stats?.rects ?? 0).padStart(6)} ${f(r.first)} | ${f(q(r.draw, 0.5))} ${f(q(r.draw, 0.95))} | ${f(q(r.raster, 0.5))}        ${f(q(r.raster, 0.95))}   (ms)`);
  }

  // streaming: frames arrive continuously (1 kHz in bursts of 16 every 16 ms, like a fast app or a
  // replay), the panel live; the panel should draw once per animation frame, not once per frame view
  const stream = await page.evaluate(async () => {
    const panel = window.vorTest.panel;
    panel.resume();
    const s = window.vorTest.generateSession({ frames: 3000, flameEvery: 1, seed: 12, startIndex: 20000 });
    const draws0 = panel.viewState().drawCount;
    const times = [];
    let i = 0, done = false, rafs = 0;
    const t0 = performance.now();
    const sample = () => { rafs++; times.push(panel.viewState().lastDrawMs); if (!done) requestAnimationFrame(sample); };
    requestAnimationFrame(sample);
    await new Promise((resolve) => {
      const timer = setInterval(() => {
        for (let k = 0; k < 16 && i < s.frames.length; k++) window.vorTest.source.pushFrame(s.frames[i++]);
        if (i >= s.frames.length) { clearInterval(timer); resolve(); }
      }, 16);
    });
    await new Promise((resolve) => requestAnimationFrame(resolve));
    done = true;
    const secs = (performance.now() - t0) / 1000;
    times.sort((a, b) => a - b);
    return { frames: i, secs, draws: panel.viewState().drawCount - draws0, rafs, median: times[times.length >> 1], p95: times[Math.floor(times.length * 0.95)] };
  });
  console.log(`streaming: ${stream.frames} frame views in ${stream.secs.toFixed(1)} s -> ${stream.draws} draws (${(stream.draws / stream.secs).toFixed(0)}/s, ${stream.rafs} animation frames); draw median ${stream.median.toFixed(2)} ms, p95 ${stream.p95.toFixed(2)} ms`);
  if (errors.length) console.log(`page errors: ${errors.join('; ')}`);
} finally {
  await browser.close();
  await server.close();
}

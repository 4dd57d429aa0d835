// Whole-capture benchmark (issue 12's targets): a capture of --frames frames (1,000,000 by default,
// a flame frame every 4th) written by vor_make_capture, then in headless Chromium:
//   served: `vor serve` + the panel page: ms from navigation to the newest frame on screen, ms until
//           the whole capture's index is in the overview, ms to load a window around a click on
//           the strip; draw ms (median, p95) of the panel with the strip, whole and zoomed; JS heap;
//   file:   the same file opened on the page (indexed in the browser): ms to the newest frame, ms
//           until indexed.
// Prints figures; asserts nothing. On a shared 2-core machine, compare with the load average printed.
//
//   node bench/web/whole_capture.bench.mjs VOR MAKE_CAPTURE SITE_DIR [--frames N] [--draws 40]

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serveDirectory, launchBrowser, browserUnavailableReason } from '../../tests/browser/harness.mjs';

const [vorBin, makeCapture, siteDir] = process.argv.slice(2);
const arg = (name, def) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? Number(process.argv[i + 1]) : def; };
const FRAMES = arg('frames', 1000000), DRAWS = arg('draws', 40);
const reason = await browserUnavailableReason();
if (reason || !vorBin) { console.log(`whole_capture: skipped (${reason ?? 'usage: VOR MAKE_CAPTURE SITE_DIR'})`); process.exit(0); }

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vor-whole-bench-'));
const file = path.join(tmp, 'big.vor');
let t = Date.now();
execFileSync(makeCapture, [file, '--frames', String(FRAMES), '--every', '4', '--spike-at', String(Math.floor(FRAMES * 0.61))]);
const mb = fs.statSync(file).size / 1e6;
console.log(`capture: ${FRAMES.toLocaleString('en-US')} frames, ${mb.toFixed(0)} MB, written in ${Date.now() - t} ms; load ${os.loadavg()[0].toFixed(2)}`);

const server = spawn(vorBin, ['serve', file, '--port', '0', '--site', siteDir], { stdio: ['ignore', 'pipe', 'pipe'] });
const url = await new Promise((resolve, reject) => {
  let text = '';
  server.stderr.on('data', (d) => { text += d; const m = text.match(/http:\/\/127\.0\.0\.1:(\d+)\//); if (m) resolve(m[0]); });
  server.on('exit', (code) => reject(new Error(`vor serve exited (${code}): ${text}`)));
});
const browser = await launchBrowser({ viewport: { width: 1600, height: 1000 } });
const page = browser.page;
async function waitFor(predicate, arg, timeoutMs = 600000) {
  const t0 = Date.now();
  for (;;) {
    if (await page.evaluate(predicate, arg).catch(() => false)) return Date.now() - t0;
    if (Date.now() - t0 > timeoutMs) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
const pct = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
async function draws(label) {
  const ms = await page.evaluate((n) => { const out = []; for (let i = 0; i < n; i++) out.push(window.vorPanel.draw()); return out; }, DRAWS);
  console.log(`  draw ${label}: median ${pct(ms, 0.5).toFixed(2)} ms, p95 ${pct(ms, 0.95).toFixed(2)} ms`);
}
try {
  t = Date.now();
  await page.goto(url);
  await waitFor((last) => window.vorPanel?.viewState().window?.[1] === last, FRAMES - 1);
  console.log(`served: newest frame on screen ${Date.now() - t} ms after navigation`);
  await waitFor((n) => window.vorPanel.viewState().captureFrames === n, FRAMES);
  console.log(`served: whole index in the overview ${Date.now() - t} ms after navigation`);
  await draws('newest window + strip');
  const spike = Math.floor(FRAMES * 0.61);
  t = Date.now();
  await page.evaluate((f) => window.vorPanel.showFrameAt(f), spike);
  await waitFor((f) => window.vorPanel.viewState().pinnedFrameIndex === f, spike);
  console.log(`served: window around the spike loaded and pinned ${Date.now() - t} ms after the click`);
  await page.evaluate(([a, b]) => window.vorPanel.zoomFrameIndexRange(a, b), [spike - 20, spike + 20]);
  await draws('zoomed to 41 frames');
  const heap = await page.evaluate(() => (performance.memory ? performance.memory.usedJSHeapSize : 0));
  console.log(`served: JS heap ${(heap / 1e6).toFixed(0)} MB`);

  const statics = await serveDirectory(siteDir);
  await page.goto(statics.url);
  await waitFor(() => !!window.vorPanel);
  t = Date.now();
  await page.setInputFiles('input[type=file]', file);
  await waitFor((last) => window.vorPanel.viewState().window?.[1] === last, FRAMES - 1);
  console.log(`file: newest frame on screen ${Date.now() - t} ms after opening`);
  await waitFor(() => /complete/.test(document.querySelector('.vor-status').textContent));
  console.log(`file: indexed in the browser ${Date.now() - t} ms after opening`);
  const heap2 = await page.evaluate(() => (performance.memory ? performance.memory.usedJSHeapSize : 0));
  console.log(`file: JS heap ${(heap2 / 1e6).toFixed(0)} MB; load ${os.loadavg()[0].toFixed(2)}`);
  await statics.close();
} finally {
  await browser.close();
  server.kill('SIGINT');
  fs.rmSync(tmp, { recursive: true, force: true });
}

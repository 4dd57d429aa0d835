// Reusable headless-Chromium harness for vor's browser tests (the panel tests here; DevTools-trace
// tests of the wasm build elsewhere). Node built-ins plus playwright-core (no browser download: it
// drives Debian's /usr/bin/chromium).
//
//   import { serveDirectory, launchBrowser, canvasRegionStats } from './harness.mjs';
//   const server = await serveDirectory('/path/to/site', { mounts: { '/__tests__/': testsDir } });
//   const browser = await launchBrowser();                // fresh temp profile, removed on close
//   await browser.page.goto(server.url + 'index.html');
//   ...
//   await browser.close(); await server.close();
//
// serveDirectory: 127.0.0.1, ephemeral port, correct MIME types (application/wasm, text/javascript
// for .js/.mjs), cross-origin isolation headers (COOP same-origin, COEP require-corp: needed for wasm
// pthreads and finer performance.now), no caching, no directory escapes. Extra `routes` answer exact
// paths (e.g. a fake /api/captures); `server.httpServer` accepts websocket upgrades (use `ws`).
// launchBrowser: the flags that keep Chromium quiet on a closed network; returns {context, page,
// close}. CDP sessions for DevTools traces: `await browser.context.newCDPSession(browser.page)`.
// Canvas helpers read pixels from the page (device pixels) and summarise them.

import http from 'node:http';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';

export const CHROMIUM_PATH = process.env.VOR_CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];

export const MIME_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.vor': 'application/octet-stream',
  '.data': 'application/octet-stream',
};

export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** Why the browser tests cannot run here (missing Chromium or playwright-core), or null. */
export async function browserUnavailableReason() {
  if (!fs.existsSync(CHROMIUM_PATH)) return `Chromium not found at ${CHROMIUM_PATH} (set VOR_CHROMIUM)`;
  try { await import('playwright-core'); } catch { return 'playwright-core is not installed (npm ci)'; }
  return null;
}

/**
 * Serves `root` on 127.0.0.1 (ephemeral port unless `port`). options:
 *   mounts: { '/prefix/': directoryOrFile }  (longest prefix wins; a file mount serves that file)
 *   routes: { '/exact/path': (req, res) => void }
 *   isolation: send COOP/COEP/CORP headers (default true)
 *   log: function(line) for each request (default none)
 * Resolves to { url, port, httpServer, requests: [paths], close() }.
 */
export async function serveDirectory(root, { mounts = {}, routes = {}, isolation = true, port = 0, log = null } = {}) {
  const table = Object.entries({ '/': root, ...mounts })
    .map(([prefix, dir]) => [prefix, path.resolve(dir)])
    .sort((a, b) => b[0].length - a[0].length);
  const requests = [];
  const send = (res, status, body, type = 'text/plain; charset=utf-8') => {
    res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', ...(isolation ? ISOLATION_HEADERS : {}) });
    res.end(body);
  };
  const httpServer = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    let pathname;
    try { pathname = decodeURIComponent(url.pathname); } catch { send(res, 400, 'bad path'); return; }
    requests.push(pathname);
    log?.(`${req.method} ${pathname}`);
    if (routes[pathname]) { routes[pathname](req, res); return; }
    if (req.method !== 'GET' && req.method !== 'HEAD') { send(res, 405, 'method not allowed'); return; }
    const [prefix, base] = table.find(([p]) => pathname.startsWith(p) || pathname === p.replace(/\/$/, '')) ?? [];
    if (!base) { send(res, 404, 'not found'); return; }
    let file;
    const stat0 = await fsp.stat(base).catch(() => null);
    if (stat0 && stat0.isFile()) file = base;
    else {
      file = path.resolve(base, '.' + path.posix.normalize('/' + pathname.slice(prefix.length)));
      if (file !== base && !file.startsWith(base + path.sep)) { send(res, 403, 'forbidden'); return; }
    }
    let st = await fsp.stat(file).catch(() => null);
    if (st && st.isDirectory()) { file = path.join(file, 'index.html'); st = await fsp.stat(file).catch(() => null); }
    if (!st || !st.isFile()) { send(res, 404, `not found: ${pathname}`); return; }
    const type = MIME_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
    res.writeHead(200, {
      'Content-Type': type, 'Content-Length': st.size, 'Cache-Control': 'no-store',
      ...(isolation ? ISOLATION_HEADERS : {}),
    });
    if (req.method === 'HEAD') { res.end(); return; }
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(port, '127.0.0.1', resolve);
  });
  const actual = httpServer.address().port;
  const sockets = new Set();
  httpServer.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  return {
    url: `http://127.0.0.1:${actual}/`,
    port: actual,
    httpServer,
    requests,
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      httpServer.close(() => resolve());
    }),
  };
}

/**
 * Launches Chromium on a fresh temporary profile. options: headless (true), args (extra flags),
 * viewport ({width: 1280, height: 800}), deviceScaleFactor (1), executablePath.
 * Resolves to { context, page, profileDir, close() } (close also deletes the profile).
 */
export async function launchBrowser({ headless = true, args = [], viewport = { width: 1280, height: 800 }, deviceScaleFactor = 1, executablePath = CHROMIUM_PATH } = {}) {
  const { chromium } = await import('playwright-core');
  const profileDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'vor-chromium-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath, headless, args: [...CHROMIUM_ARGS, ...args], viewport, deviceScaleFactor,
    });
  } catch (err) {
    await fsp.rm(profileDir, { recursive: true, force: true });
    throw err;
  }
  const page = context.pages()[0] ?? await context.newPage();
  return {
    context, page, profileDir,
    close: async () => {
      await context.close().catch(() => {});
      await fsp.rm(profileDir, { recursive: true, force: true });
    },
  };
}

/** Records page errors and console errors/warnings: returns the live array of strings. */
export function collectPageErrors(page, { warnings = false } = {}) {
  const out = [];
  page.on('pageerror', (err) => out.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    const t = msg.type();
    if (t === 'error' || (warnings && t === 'warning')) out.push(`console.${t}: ${msg.text()}`);
  });
  return out;
}

/**
 * Pixels of a canvas region, in device pixels. rect is in CSS pixels relative to the canvas
 * ({x, y, w, h}; default the whole canvas). Resolves to {width, height, data: Uint8Array RGBA}.
 */
export async function readCanvasRegion(page, selector, rect = null) {
  const r = await page.evaluate(([sel, rc]) => {
    const c = document.querySelector(sel);
    if (!c) throw new Error(`no canvas matches ${sel}`);
    const k = c.width / c.clientWidth;
    const x = Math.max(0, Math.floor((rc ? rc.x : 0) * k));
    const y = Math.max(0, Math.floor((rc ? rc.y : 0) * k));
    const w = Math.min(c.width - x, Math.ceil((rc ? rc.w : c.clientWidth) * k));
    const h = Math.min(c.height - y, Math.ceil((rc ? rc.h : c.clientHeight) * k));
    const img = c.getContext('2d').getImageData(x, y, w, h);
    let s = '';
    const d = img.data;
    for (let i = 0; i < d.length; i += 0x8000) s += String.fromCharCode.apply(null, d.subarray(i, i + 0x8000));
    return { width: w, height: h, b64: btoa(s) };
  }, [selector, rect]);
  return { width: r.width, height: r.height, data: new Uint8Array(Buffer.from(r.b64, 'base64')) };
}

/** Parses '#rrggbb' into [r, g, b]. */
export function hexToRgb(hex) {
  const v = parseInt(hex.slice(1), 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
}

/**
 * Summary of pixels: {pixels, differing (from `background` [r,g,b] beyond tolerance), colors
 * (distinct, quantised to 4 bits per channel), hash (FNV-1a of all bytes), count(rgb, tol)}.
 */
export function pixelStats(img, background = null, tolerance = 6) {
  const d = img.data;
  let differing = 0;
  let hash = 0x811c9dc5;
  const colors = new Set();
  for (let i = 0; i < d.length; i += 4) {
    if (background && (Math.abs(d[i] - background[0]) > tolerance || Math.abs(d[i + 1] - background[1]) > tolerance || Math.abs(d[i + 2] - background[2]) > tolerance)) differing++;
    colors.add(((d[i] >> 4) << 8) | ((d[i + 1] >> 4) << 4) | (d[i + 2] >> 4));
  }
  for (let i = 0; i < d.length; i++) { hash ^= d[i]; hash = Math.imul(hash, 0x01000193); }
  return {
    pixels: d.length / 4, differing, colors: colors.size, hash: (hash >>> 0).toString(16),
    count([r, g, b], tol = 12) {
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - r) <= tol && Math.abs(d[i + 1] - g) <= tol && Math.abs(d[i + 2] - b) <= tol) n++;
      return n;
    },
  };
}

/** readCanvasRegion + pixelStats. */
export async function canvasRegionStats(page, selector, rect, background = null, tolerance = 6) {
  return pixelStats(await readCanvasRegion(page, selector, rect), background, tolerance);
}

/** Waits for `n` animation frames in the page (lets rAF-scheduled draws happen). */
export async function nextFrames(page, n = 2) {
  await page.evaluate((k) => new Promise((resolve) => {
    const step = () => (k-- <= 0 ? resolve() : requestAnimationFrame(step));
    requestAnimationFrame(step);
  }), n);
}

/** Full-page screenshot to `file` (directories created). */
export async function screenshot(page, file) {
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await page.screenshot({ path: file });
  return file;
}

/**
 * Starts `vor serve FILES --port 0 --site SITE` (pushed onto `children`, for the caller to stop);
 * resolves to its base URL once it prints it.
 * @param {string} vorBin @param {string[]} files @param {string} siteDir @param {import('node:child_process').ChildProcess[]} children
 */
export function startVorServe(vorBin, files, siteDir, children) {
  const child = spawn(vorBin, ['serve', ...files, '--port', '0', '--site', siteDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let text = '';
    child.stderr.on('data', (d) => {
      text += d;
      const m = text.match(/http:\/\/127\.0\.0\.1:(\d+)\//);
      if (m) resolve(m[0]);
    });
    child.on('exit', (code) => reject(new Error(`vor serve exited (${code}): ${text}`)));
  });
}

/**
 * Polls `predicate(arg)` in the page until it returns something truthy (returned); past `timeoutMs`
 * throws, naming `what` and the panel's status line.
 */
export async function waitForPage(page, predicate, what, timeoutMs = 30000, arg = undefined) {
  const t0 = Date.now();
  for (;;) {
    const v = await page.evaluate(predicate, arg).catch(() => null);
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}: ${await page.evaluate(() => document.querySelector('.vor-status')?.textContent).catch(() => '?')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Exits the test process with a failure naming `testName` when Chromium or playwright-core is
 * missing: a browser test that cannot run fails, saying why, rather than passing unrun.
 * @param {string} testName
 */
export async function failWithoutBrowser(testName) {
  const why = await browserUnavailableReason();
  if (!why) return;
  console.error(`# FAIL ${testName}: ${why} (run scripts/setup.sh)`);
  process.exit(1);
}

/**
 * The panel fixture page (tests/browser/fixtures/panel_test.html: web/ served at /, tests/ at
 * /__tests__/, `window.vorTest` ready) in a fresh browser. Close with `fixture.close()`.
 * @param {{viewport?: {width: number, height: number}, query?: string}} [options]
 */
export async function openPanelFixture({ viewport = { width: 1280, height: 800 }, query = '' } = {}) {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
  const server = await serveDirectory(path.join(root, 'web'), { mounts: { '/__tests__/': path.join(root, 'tests') } });
  const browser = await launchBrowser({ viewport });
  const errors = collectPageErrors(browser.page);
  await browser.page.goto(`${server.url}__tests__/browser/fixtures/panel_test.html${query}`);
  await browser.page.waitForFunction(() => window.vorTestReady === true);
  return { server, browser, page: browser.page, errors, close: async () => { await browser.close(); await server.close(); } };
}

// DevTools sink benchmark: the whole cost of one scope in headless Chromium (clock reads, the wasm
// side, the JS flush at the frame mark, the browser's own call), for vor's sink in user-timing and
// fast modes and for a naive baseline (an EM_JS performance.measure with the same detail at every
// scope end), both while a DevTools trace records (what matters: that is when the entries are
// wanted) and while not. Also the sink-off figures (vor's own cost; what is left beyond the two
// clock reads is the wasm side, target <= 20 ns) and the cost of a scope left out by the minimum
// duration. Prints a table with ratios; asserts nothing. The wasm side alone is also measured with
// vor's test clock hook (a counter for a clock), free of the clock reads' noise.
//
//   node bench/devtools/devtools.bench.mjs [--groups 100] [--reps 7] [--target-ms 25]
//
// Method (bench/devtools/devtools_bench.c): a run is F frames of G x 4 empty scopes (an outer scope
// around three inner ones); each configuration runs with G groups and with none, and the difference
// over F x G x 4 is the per-scope cost, free of per-frame costs (frame entry, mark, assembly), which
// are shown apart (per frame, G = 0). F grows until a run lasts --target-ms (performance.now() has
// 5 us resolution here); the median of --reps repetitions is shown, after a warm-up run. "flush" is
// the part of the per-scope cost spent inside vor_frame_mark (the sink's JS loop and the browser
// calls), the rest is the scope itself (two clock reads and a few stores).
// Needs the wasm build (build/wasm/bench/devtools/site, VOR_DEVTOOLS_BENCH_SITE overrides).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { serveDirectory, launchBrowser, browserUnavailableReason, collectPageErrors, CHROMIUM_PATH } from '../../tests/browser/harness.mjs';
import { startTrace } from '../../tests/devtools/trace.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const siteDir = process.env.VOR_DEVTOOLS_BENCH_SITE || path.join(repo, 'build/wasm/bench/devtools/site');
const arg = (name, def) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? Number(process.argv[i + 1]) : def; };
const GROUPS = arg('groups', 100);
const REPS = arg('reps', 7);
const TARGET_MS = arg('target-ms', 25);

const reason = await browserUnavailableReason();
if (reason) { console.log(`devtools sink bench: skipped (${reason})`); process.exit(0); }
if (!fs.existsSync(path.join(siteDir, 'devtools_bench.mjs'))) {
  console.log(`devtools sink bench: skipped (${siteDir}/devtools_bench.mjs missing: build the wasm flavour, sh scripts/build-wasm.sh)`);
  process.exit(0);
}

let chromiumVersion = '?';
try { chromiumVersion = execFileSync(CHROMIUM_PATH, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(); } catch { /* keep '?' */ }

// Runs in the page. Per configuration: the frame count that makes a run last targetMs (once), then
// one repetition: per-scope cost (ns), the part inside vor_frame_mark, the per-frame cost, and the
// per-scope cost minus as many clock-read pairs measured right after (machine noise cancels).
// (Each function is sent to the page on its own: they cannot share helpers.)
function calibrateInPage({ kind, mode, minNs, groups, targetMs }) {
  const b = window.bench;
  const run = (frames) => (kind === 'naive' ? b._bench_naive(frames, groups)
    : kind === 'fake' ? b._bench_fake_clock(frames, groups)
    : kind === 'fakeReads' ? b._bench_fake_clock_reads(frames, groups) : b._bench_vor(mode, frames, groups, minNs));
  let frames = 4;
  run(frames); // warm-up (JIT, first declarations)
  while (frames < 4096 && run(frames) < targetMs) frames *= 2;
  return frames;
}

function repetitionInPage({ kind, mode, minNs, groups, frames }) {
  const b = window.bench;
  const run = (g) => (kind === 'naive' ? b._bench_naive(frames, g)
    : kind === 'fake' ? b._bench_fake_clock(frames, g)
    : kind === 'fakeReads' ? b._bench_fake_clock_reads(frames, g) : b._bench_vor(mode, frames, g, minNs));
  const vor = kind === 'vor';
  const scopes = frames * groups * 4;
  const t1 = run(groups);
  const m1 = vor ? b._bench_mark_ms() : 0;
  const t0 = run(0);
  const m0 = vor ? b._bench_mark_ms() : 0;
  const scope = ((t1 - t0) * 1e6) / scopes;
  return {
    scope, flush: vor ? ((m1 - m0) * 1e6) / scopes : NaN, frameUs: (t0 * 1e3) / frames,
    beyondClock: vor ? scope - (b._bench_clock_pairs(scopes) * 1e6) / scopes : NaN,
  };
}

function clockInPage(n) {
  window.bench._bench_clock_pairs(n >> 3); // warm-up
  return (window.bench._bench_clock_pairs(n) * 1e6) / n;
}

// Runs in the page: the browser calls alone, in a plain JS loop with constant arguments (ns per call).
function browserCallsInPage(n) {
  const base = performance.now();
  const time = (f) => { f(n >> 3); const t0 = performance.now(); f(n); return ((performance.now() - t0) * 1e6) / n; };
  const opts = { start: 0, end: 0, detail: { devtools: { dataType: 'track-entry', track: 'main', trackGroup: 'vor', color: 'primary', properties: [['location', 'devtools_bench.c:1'], ['frame', '1']], tooltipText: 'bench_inner (devtools_bench.c:1)' } } };
  return {
    now: time((k) => { let s = 0; for (let i = 0; i < k; i++) s += performance.now(); return s; }),
    timeStamp: time((k) => { for (let i = 0; i < k; i++) console.timeStamp('bench_inner', base + i * 1e-4, base + i * 1e-4 + 1e-4, 'main', 'vor', 'primary'); }),
    measure: time((k) => {
      for (let i = 0; i < k; i++) { opts.start = base + i * 1e-4; opts.end = opts.start + 1e-4; performance.measure('bench_inner', opts); }
      performance.clearMeasures('bench_inner');
    }),
  };
}

const median = (xs) => xs.slice().sort((x, y) => x - y)[xs.length >> 1];
/** Medians, field by field, of an array of objects with numeric fields. */
function medians(list) {
  const out = {};
  for (const k of Object.keys(list[0])) out[k] = median(list.map((o) => o[k]));
  return out;
}

const CONFIGS = [
  { key: 'off', label: 'vor, sink off', kind: 'vor', mode: 0, minNs: 0 },
  { key: 'ut', label: 'user-timing', kind: 'vor', mode: 1, minNs: 0 },
  { key: 'fast', label: 'fast', kind: 'vor', mode: 2, minNs: 0 },
  { key: 'naive', label: 'naive baseline (EM_JS measure)', kind: 'naive', mode: 0, minNs: 0 },
  { key: 'utMin', label: 'user-timing, scopes below min', kind: 'vor', mode: 1, minNs: 1e15 },
  { key: 'fastMin', label: 'fast, scopes below min', kind: 'vor', mode: 2, minNs: 1e15 },
  { key: 'fake', label: 'vor, sink off, counter for a clock', kind: 'fake', mode: 0, minNs: 0 },
  { key: 'fakeReads', label: 'two reads of the counter clock', kind: 'fakeReads', mode: 0, minNs: 0 },
];

const server = await serveDirectory(siteDir, {
  mounts: { '/fixtures/': path.join(here, 'fixtures') },
  routes: { '/favicon.ico': (req, res) => { res.writeHead(204); res.end(); } },
});
const browser = await launchBrowser();
const { page } = browser;
const errors = collectPageErrors(page);
const results = { idle: {}, tracing: {} };
try {
  await page.goto(`${server.url}fixtures/bench.html`);
  await page.waitForFunction(() => window.benchReady === true || window.benchError !== undefined);
  const failed = await page.evaluate(() => window.benchError);
  if (failed) throw new Error(failed);
  const cdp = await browser.context.newCDPSession(page);
  for (const state of ['idle', 'tracing']) {
    // One trace for the whole state, in a ring buffer (a full recordUntilFull buffer stops recording).
    const rec = state === 'tracing' ? await startTrace(cdp, undefined, 'recordContinuously') : null;
    const frames = {};
    for (const c of CONFIGS) frames[c.key] = await page.evaluate(calibrateInPage, { ...c, groups: GROUPS, targetMs: TARGET_MS });
    // Round robin over the configurations, so that the machine's load changes touch all of them alike.
    const reps = { clock: [], raw: [] };
    for (const c of CONFIGS) reps[c.key] = [];
    for (let r = 0; r < REPS; r++) {
      reps.clock.push(await page.evaluate(clockInPage, 100000));
      reps.raw.push(await page.evaluate(browserCallsInPage, 4000));
      for (const c of CONFIGS) reps[c.key].push(await page.evaluate(repetitionInPage, { ...c, groups: GROUPS, frames: frames[c.key] }));
    }
    results[state].clock = median(reps.clock);
    results[state].raw = medians(reps.raw);
    for (const c of CONFIGS) results[state][c.key] = medians(reps[c.key]);
    if (rec) await rec.discard();
  }
} finally {
  await browser.close();
  await server.close();
}

// ---- Report ---------------------------------------------------------------------------------------

const ns = (v) => (!Number.isFinite(v) ? '-' : Math.abs(v) >= 1000 ? `${(v / 1000).toFixed(2)} us` : `${v.toFixed(1)} ns`);
const pad = (s, n) => String(s).padEnd(n);
const padl = (s, n) => String(s).padStart(n);
const cpu = (os.cpus()[0]?.model ?? '?').trim();
const I = results.idle, T = results.tracing;
console.log(`DevTools sink: cost per scope, ${GROUPS * 4} scopes/frame (1 outer + 3 inner, empty), median of ${REPS}`);
console.log(`machine: ${os.arch()}, ${os.cpus().length} cores, ${cpu}; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; ${chromiumVersion}, headless; ${new Date().toISOString().slice(0, 10)}`);
console.log(`tracing = CDP Tracing.start with ${'blink.user_timing, devtools.timeline, disabled-by-default-devtools.timeline, v8.execute, blink.console, toplevel'}`);
console.log('');
console.log(`${pad('', 40)}${padl('not tracing', 12)}${padl('flush', 10)}${padl('tracing', 12)}${padl('flush', 10)}`);
const row = (label, a, b, fa = NaN, fb = NaN) => console.log(`${pad(label, 40)}${padl(ns(a), 12)}${padl(Number.isFinite(fa) ? ns(fa) : '', 10)}${padl(ns(b), 12)}${padl(Number.isFinite(fb) ? ns(fb) : '', 10)}`);
console.log('the browser calls alone (JS loop, constant arguments):');
row('  performance.now()', I.raw.now, T.raw.now);
row('  console.timeStamp(6 arguments)', I.raw.timeStamp, T.raw.timeStamp);
row('  performance.measure + devtools detail', I.raw.measure, T.raw.measure);
console.log('one scope, everything included ("flush": the part inside vor_frame_mark):');
row('  clock pair (2 x performance.now)', I.clock, T.clock);
for (const c of CONFIGS) if (c.kind !== 'fake' && c.kind !== 'fakeReads') row(`  ${c.label}`, I[c.key].scope, T[c.key].scope, c.kind === 'naive' ? NaN : I[c.key].flush, c.kind === 'naive' ? NaN : T[c.key].flush);
console.log('derived:');
row('  scope with a counter clock', I.fake.scope, T.fake.scope);
row('  two reads of that clock, alone', I.fakeReads.scope, T.fakeReads.scope);
row('  wasm side beyond the two clock reads', I.fake.scope - I.fakeReads.scope, T.fake.scope - T.fakeReads.scope);
console.log(`${pad('', 40)}(vor's test clock hook in place of performance.now(): the scope's`);
console.log(`${pad('', 40)} bookkeeping and the frame assembly; target <= 20 ns)`);
row('    of which frame assembly (drain)', I.off.flush, T.off.flush);
row('  sink off minus a clock pair', I.off.beyondClock, T.off.beyondClock);
console.log(`${pad('', 40)}(the same, as a difference of two ~400 ns figures: +-50 ns of noise)`);
const times = (a, b) => `${(a / b).toFixed(2)}x`;
console.log(`${pad('  flush / the browser call alone, u-t', 40)}${padl(times(I.ut.flush - I.off.flush, I.raw.measure), 12)}${padl('', 10)}${padl(times(T.ut.flush - T.off.flush, T.raw.measure), 12)}`);
console.log(`${pad('  flush / the browser call alone, fast', 40)}${padl(times(I.fast.flush - I.off.flush, I.raw.timeStamp), 12)}${padl('', 10)}${padl(times(T.fast.flush - T.off.flush, T.raw.timeStamp), 12)}`);
console.log(`${pad('', 40)}(flush minus frame assembly, over the call alone: 1x = the sink's JS costs nothing)`);
row('  scope left out by min duration, u-t', I.utMin.flush - I.off.flush, T.utMin.flush - T.off.flush);
row('  scope left out by min duration, fast', I.fastMin.flush - I.off.flush, T.fastMin.flush - T.off.flush);
console.log(`${pad('', 40)}(flush minus frame assembly: the JS loop reading and skipping it;`);
console.log(`${pad('', 40)} tens of ns: at the noise floor of a loaded machine)`);
console.log('');
console.log('ratios (higher = vor cheaper)          not tracing     tracing   target (tracing)');
const ratio = (a, b) => `${(a / b).toFixed(2)}x`.padStart(12);
console.log(`  naive baseline / fast              ${ratio(I.naive.scope, I.fast.scope)}${ratio(T.naive.scope, T.fast.scope)}   >= 4x`);
console.log(`  naive baseline / user-timing       ${ratio(I.naive.scope, I.ut.scope)}${ratio(T.naive.scope, T.ut.scope)}   >= 1x`);
console.log(`  user-timing / fast                 ${ratio(I.ut.scope, I.fast.scope)}${ratio(T.ut.scope, T.fast.scope)}`);
console.log(`  measure+detail / timeStamp, alone  ${ratio(I.raw.measure, I.raw.timeStamp)}${ratio(T.raw.measure, T.raw.timeStamp)}   (the browser calls alone)`);
console.log('');
console.log('per frame with no scopes (frame assembly and system metrics; the sink call, frame entry and mark):');
for (const c of CONFIGS.slice(0, 3)) console.log(`  ${pad(c.label, 34)}${padl(ns(I[c.key].frameUs * 1000), 10)} not tracing${padl(ns(T[c.key].frameUs * 1000), 10)} tracing`);
if (errors.length) console.log(`page errors: ${errors.join('; ')}`);
